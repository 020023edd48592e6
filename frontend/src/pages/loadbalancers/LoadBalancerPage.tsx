// /load-balancers/<id>: one load balancer — VIP, status and reason, listeners and the
// health-check interval (editable), members with their health as the serving nodes report it,
// and the serving nodes with whether each announces the VIP and forwards.
import { useState } from 'react';
import { Link, useParams } from 'react-router';
import { useMutation, useQuery } from 'urql';
import { graphql } from '../../gql';
import { Loading } from '../../components/Loading';
import { Problem } from '../../components/Problem';
import { StatusBadge } from '../../components/StatusBadge';
import { formatDateTime } from '../../lib/format';
import { describeListeners, type Listener } from './listeners';
import '../../components/compute/compute.css';

const LoadBalancerDocument = graphql(`
  query LoadBalancer($id: ID!) {
    node(id: $id) {
      ... on LoadBalancer {
        id name status statusReason algorithm healthCheckIntervalMs updatedAt
        vip { id address }
        listeners { port protocol targetPort }
        members { vmID address health lastCheck reason }
        nodeStates { nodeID nodeName announced forwarding reportedAt reason }
        tenant { id name }
        regionService { id name }
      }
    }
  }
`);

const UpdateListenersDocument = graphql(`
  mutation UpdateLoadBalancerListeners($id: ID!, $input: UpdateLoadBalancerInput!) {
    updateLoadBalancer(id: $id, input: $input) {
      id status statusReason healthCheckIntervalMs updatedAt
      listeners { port protocol targetPort }
    }
  }
`);

type Row = { port: string; protocol: string; targetPort: string };

function ListenersForm({ id, listeners, interval, onDone }: { id: string; listeners: readonly Listener[]; interval: number; onDone: () => void }) {
  const [rows, setRows] = useState<Row[]>(listeners.map((l) => ({ port: String(l.port), protocol: l.protocol, targetPort: String(l.targetPort) })));
  const [ms, setMs] = useState(String(interval));
  const [res, update] = useMutation(UpdateListenersDocument);
  const set = (i: number, patch: Partial<Row>) => setRows(rows.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  return (
    <form
      className="card"
      aria-label="Listeners"
      onSubmit={async (e) => {
        e.preventDefault();
        const input = {
          healthCheckIntervalMs: Number(ms),
          ...(rows.length === 0
            ? { clearListeners: true }
            : { listeners: rows.map((r) => ({ port: Number(r.port), protocol: r.protocol, targetPort: Number(r.targetPort) })) }),
        };
        const r = await update({ id, input });
        if (!r.error) onDone();
      }}
    >
      <h3>Edit listeners</h3>
      {rows.map((r, i) => (
        <div className="row" key={i} data-testid="listener-row">
          <label>Port<input type="number" min={1} max={65535} required value={r.port} onChange={(e) => set(i, { port: e.target.value })} /></label>
          <label>Protocol
            <select value={r.protocol} onChange={(e) => set(i, { protocol: e.target.value })}>
              <option value="TCP">TCP (L4)</option>
              <option value="HTTP">HTTP (L7)</option>
            </select>
          </label>
          <label>Target port<input type="number" min={1} max={65535} required value={r.targetPort} onChange={(e) => set(i, { targetPort: e.target.value })} /></label>
          <button type="button" onClick={() => setRows(rows.filter((_, j) => j !== i))}>Remove</button>
        </div>
      ))}
      <div className="row">
        <button type="button" onClick={() => setRows([...rows, { port: '', protocol: 'TCP', targetPort: '' }])}>Add listener</button>
        <label>Health-check interval (ms)<input type="number" min={100} required value={ms} onChange={(e) => setMs(e.target.value)} /></label>
      </div>
      <Problem error={res.error} title="The listeners were not saved" />
      <div className="row">
        <button type="submit" className="primary" disabled={res.fetching}>{res.fetching ? 'Saving…' : 'Save'}</button>
        <button type="button" onClick={onDone}>Cancel</button>
      </div>
    </form>
  );
}

export default function LoadBalancerPage() {
  const { id = '' } = useParams();
  const [{ data, error, fetching }, refresh] = useQuery({ query: LoadBalancerDocument, variables: { id } });
  const [editing, setEditing] = useState(false);
  if (error) return <Problem error={error} title="The load balancer could not be loaded" />;
  if (!data && fetching) return <Loading what="Loading the load balancer" />;
  const lb = data?.node && data.node.__typename === 'LoadBalancer' ? data.node : null;
  if (!lb) {
    return (
      <div>
        <h1>Load balancer not found</h1>
        <p>There is no load balancer {id} you may see. <Link to="/load-balancers">All load balancers</Link></p>
      </div>
    );
  }
  const members = lb.members ?? [];
  const nodes = lb.nodeStates ?? [];
  return (
    <div>
      <div className="breadcrumbs"><Link to="/load-balancers">Load balancers</Link><span>{lb.name}</span></div>
      <div className="spread">
        <h1>{lb.name} <StatusBadge status={lb.status} title={lb.statusReason} /></h1>
        <div className="row">
          <button type="button" onClick={() => refresh({ requestPolicy: 'network-only' })}>Refresh</button>
          {!editing && <button type="button" className="primary" onClick={() => setEditing(true)}>Edit listeners</button>}
        </div>
      </div>
      <p className="muted" data-testid="lb-reason">{lb.statusReason || 'No status reason.'}</p>
      {editing && (
        <ListenersForm id={lb.id} listeners={lb.listeners ?? []} interval={lb.healthCheckIntervalMs} onDone={() => { setEditing(false); refresh({ requestPolicy: 'network-only' }); }} />
      )}
      <section className="card">
        <dl className="dl">
          <dt>VIP</dt><dd className="mono" data-testid="lb-vip">{lb.vip?.address ?? 'none'}</dd>
          <dt>Listeners</dt><dd data-testid="lb-listeners">{describeListeners(lb.listeners)}</dd>
          <dt>Health checks</dt><dd data-testid="lb-interval">every {lb.healthCheckIntervalMs} ms</dd>
          <dt>Algorithm</dt><dd>{lb.algorithm.replace(/_/g, ' ').toLowerCase()}</dd>
          <dt>Region service</dt><dd>{lb.regionService ? <Link to={`/services/${lb.regionService.id}`}>{lb.regionService.name}</Link> : '—'}</dd>
          <dt>Tenant</dt><dd><Link to={`/tenants/${lb.tenant.id}`}>{lb.tenant.name}</Link></dd>
          <dt>Updated</dt><dd>{formatDateTime(lb.updatedAt)}</dd>
        </dl>
      </section>
      <h2>Members</h2>
      {members.length === 0 ? <p className="muted">No member: the region service has no replica with an address.</p> : (
        <table aria-label="Members">
          <thead><tr><th>VM</th><th>Address</th><th>Health</th><th>Last check</th><th>Reason</th></tr></thead>
          <tbody>
            {members.map((m) => (
              <tr key={m.vmID} data-member={m.address}>
                <td>{m.vmID}</td>
                <td className="mono">{m.address}</td>
                <td><StatusBadge status={m.health} title={m.reason} /></td>
                <td className="small nowrap">{m.lastCheck ? formatDateTime(m.lastCheck) : 'never'}</td>
                <td className="small">{m.reason ?? ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h2>Serving nodes</h2>
      {nodes.length === 0 ? <p className="muted">No node serves this load balancer yet.</p> : (
        <table aria-label="Serving nodes">
          <thead><tr><th>Node</th><th>Announced</th><th>Forwarding</th><th>Reported</th><th>Reason</th></tr></thead>
          <tbody>
            {nodes.map((n) => (
              <tr key={n.nodeID} data-node={n.nodeName}>
                <td>{n.nodeName}</td>
                <td>{n.announced ? 'yes' : 'no'}</td>
                <td>{n.forwarding ? 'yes' : 'no'}</td>
                <td className="small nowrap">{n.reportedAt ? formatDateTime(n.reportedAt) : 'never'}</td>
                <td className="small">{n.reason ?? ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
