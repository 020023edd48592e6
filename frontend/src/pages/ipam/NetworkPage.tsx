// /ipam/networks/<id>: a network's utilization, free ranges and reserved ranges, and its
// addresses: allocate (the next free or a given one, optionally bound to a port or as a load
// balancer's VIP), bind to a port, release.
import { useState, type FormEvent } from 'react';
import { Link, useParams } from 'react-router';
import { useMutation, useQuery } from 'urql';
import { graphql } from '../../gql';
import type { IpAddressStatus } from '../../gql/graphql';
import { Problem } from '../../components/Problem';
import { Loading } from '../../components/Loading';
import { UsageBar } from '../../components/UsageBar';
import { StatusBadge } from '../../components/StatusBadge';
import { HistoryLink } from '../../components/dcim/HistoryLink';
import { PortPicker } from '../../components/dcim/forms';
import { formatNumber } from '../../lib/format';
import './ipam.css';

const NetworkDocument = graphql(`
  query IPAMNetwork($id: ID!) {
    node(id: $id) {
      ... on Network {
        id
        name
        description
        cidr
        vlan
        gateway
        purpose
        datacenter { id name }
        tenant { id name }
        utilization { size usable allocated reserved free percentUsed }
        freeRanges(first: 20) { start end size }
        ipRanges(first: 100) { edges { node { id startAddress endAddress description } } }
        ipAddresses(first: 500, orderBy: { field: ADDRESS }) {
          totalCount
          edges {
            node {
              id
              address
              status
              dnsName
              description
              port { id name host { id name } virtualMachine { id name status } }
              loadBalancer { id name }
            }
          }
        }
      }
    }
  }
`);
const AllocateDocument = graphql(`
  mutation AllocateIPAddress($input: AllocateIPAddressInput!) {
    allocateIPAddress(input: $input) { id address status }
  }
`);
const ReleaseDocument = graphql(`
  mutation ReleaseIPAddress($id: ID!) {
    releaseIPAddress(id: $id)
  }
`);
const BindDocument = graphql(`
  mutation BindIPAddress($id: ID!, $input: UpdateIPAddressInput!) {
    updateIPAddress(id: $id, input: $input) { id port { id } }
  }
`);
const CreateRangeDocument = graphql(`
  mutation CreateIPRange($input: CreateIPRangeInput!) {
    createIPRange(input: $input) { id }
  }
`);
const DeleteRangeDocument = graphql(`
  mutation DeleteIPRange($id: ID!) {
    deleteIPRange(id: $id)
  }
`);
const LoadBalancersDocument = graphql(`
  query IPAMLoadBalancers {
    loadBalancers(first: 200) { edges { node { id name tenant { name } vip { id address } } } }
  }
`);

function AllocateForm({ networkID, onDone }: { networkID: string; onDone(address: string): void }) {
  const [r, allocate] = useMutation(AllocateDocument);
  const [lbs] = useQuery({ query: LoadBalancersDocument });
  const [address, setAddress] = useState('');
  const [status, setStatus] = useState<IpAddressStatus>('ALLOCATED');
  const [dnsName, setDnsName] = useState('');
  const [portID, setPortID] = useState('');
  const [lb, setLB] = useState('');
  async function submit(e: FormEvent) {
    e.preventDefault();
    const res = await allocate({
      input: {
        networkID,
        address: address.trim() || undefined,
        status,
        dnsName: dnsName.trim() || undefined,
        portID: portID || undefined,
        loadBalancerID: lb || undefined,
      },
    });
    if (res.data) {
      setAddress('');
      onDone(res.data.allocateIPAddress.address);
    }
  }
  return (
    <form className="card" onSubmit={submit} aria-label="Allocate an address">
      <h3 style={{ marginTop: 0 }}>Allocate an address</h3>
      <div className="fields">
        <label>
          Address
          <input value={address} placeholder="next free" onChange={(e) => setAddress(e.target.value)} />
        </label>
        <label>
          Status
          <select value={status} onChange={(e) => setStatus(e.target.value as IpAddressStatus)}>
            <option value="ALLOCATED">allocated</option>
            <option value="RESERVED">reserved</option>
          </select>
        </label>
        <label>
          DNS name
          <input value={dnsName} onChange={(e) => setDnsName(e.target.value)} />
        </label>
        <PortPicker value={portID} onPick={setPortID} />
        <label>
          VIP of load balancer
          <select value={lb} onChange={(e) => setLB(e.target.value)}>
            <option value="">none</option>
            {lbs.data?.loadBalancers.edges?.map((e) => e?.node && (
              <option key={e.node.id} value={e.node.id}>
                {e.node.name} ({e.node.tenant.name}){e.node.vip ? ` · VIP ${e.node.vip.address}` : ''}
              </option>
            ))}
          </select>
        </label>
      </div>
      <Problem error={r.error} />
      <div style={{ marginTop: '.75rem' }}>
        <button type="submit" className="primary" disabled={r.fetching}>
          Allocate
        </button>
      </div>
    </form>
  );
}

function RangeForm({ networkID, onDone }: { networkID: string; onDone(): void }) {
  const [r, create] = useMutation(CreateRangeDocument);
  const [start, setStart] = useState('');
  const [end, setEnd] = useState('');
  const [description, setDescription] = useState('');
  async function submit(e: FormEvent) {
    e.preventDefault();
    const res = await create({ input: { networkID, startAddress: start.trim(), endAddress: end.trim(), description: description.trim() || undefined } });
    if (res.data) {
      setStart('');
      setEnd('');
      onDone();
    }
  }
  return (
    <form onSubmit={submit} aria-label="Reserve a range">
      <div className="fields">
        <label>
          First address
          <input value={start} required onChange={(e) => setStart(e.target.value)} />
        </label>
        <label>
          Last address
          <input value={end} required onChange={(e) => setEnd(e.target.value)} />
        </label>
        <label>
          Why
          <input value={description} onChange={(e) => setDescription(e.target.value)} />
        </label>
      </div>
      <Problem error={r.error} />
      <button type="submit" disabled={r.fetching} style={{ marginTop: '.5rem' }}>
        Reserve range
      </button>
    </form>
  );
}

function BindControl({ id, onDone }: { id: string; onDone(): void }) {
  const [open, setOpen] = useState(false);
  const [portID, setPortID] = useState('');
  const [r, bind] = useMutation(BindDocument);
  if (!open)
    return (
      <button type="button" className="link" onClick={() => setOpen(true)}>
        Bind
      </button>
    );
  return (
    <form
      aria-label="Bind to a port"
      className="fields"
      onSubmit={async (e) => {
        e.preventDefault();
        const res = await bind({ id, input: portID ? { portID } : { clearPort: true } });
        if (res.data) {
          setOpen(false);
          onDone();
        }
      }}
    >
      <PortPicker value={portID} onPick={setPortID} />
      <Problem error={r.error} />
      <div className="row">
        <button type="submit" className="primary" disabled={r.fetching}>
          {portID ? 'Bind' : 'Unbind'}
        </button>
        <button type="button" onClick={() => setOpen(false)}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/** inUseByVM tells whether a VM that is not deleted uses the address (on one of its NICs). */
function inUseByVM(a: { port?: { virtualMachine?: { status: string } | null } | null }): boolean {
  const vm = a.port?.virtualMachine;
  return !!vm && vm.status !== 'DELETED';
}

export default function NetworkPage() {
  const { id = '' } = useParams();
  const [{ data, error, fetching }, refetch] = useQuery({ query: NetworkDocument, variables: { id } });
  const [released, release] = useMutation(ReleaseDocument);
  const [delRange, deleteRange] = useMutation(DeleteRangeDocument);
  const [note, setNote] = useState('');
  const refresh = () => refetch({ requestPolicy: 'network-only' });
  const n = data?.node && 'cidr' in data.node ? data.node : null;
  if (!n) {
    return (
      <div>
        <nav className="breadcrumbs" aria-label="Breadcrumbs">
          <Link to="/ipam/networks">Networks</Link>
        </nav>
        <h1>Network</h1>
        <Problem error={error} />
        {fetching && <Loading />}
        {data && !error && <p className="muted">There is no network with this id, or you may not see it.</p>}
      </div>
    );
  }
  const u = n.utilization;
  const addresses = n.ipAddresses.edges?.flatMap((e) => (e?.node ? [e.node] : [])) ?? [];
  const ranges = n.ipRanges.edges?.flatMap((e) => (e?.node ? [e.node] : [])) ?? [];
  return (
    <div>
      <nav className="breadcrumbs" aria-label="Breadcrumbs">
        <Link to="/ipam/networks">Networks</Link>
        <span>{n.name}</span>
      </nav>
      <div className="row">
        <h1>{n.name}</h1>
        <code>{n.cidr}</code>
        <span className="muted">
          {n.purpose.toLowerCase()}
          {n.vlan ? ` · VLAN ${n.vlan}` : ''}
          {n.gateway ? ` · gateway ${n.gateway}` : ''}
        </span>
        <HistoryLink type="Network" id={n.id} />
        <Link to={`/network?from=${encodeURIComponent(n.id)}`}>Network map</Link>
      </div>
      <Problem error={error} />
      {note && (
        <div className="message message-ok" role="status">
          {note}
        </div>
      )}
      <div className="ipam-grid">
        <div className="card" data-testid="utilization">
          <h2 style={{ marginTop: 0 }}>Utilization</h2>
          <UsageBar label="Used" used={u.allocated + u.reserved} total={u.usable} />
          <dl className="host-facts">
            <dt>Usable</dt>
            <dd>{formatNumber(u.usable)}</dd>
            <dt>Allocated</dt>
            <dd data-testid="allocated">{formatNumber(u.allocated)}</dd>
            <dt>Reserved</dt>
            <dd>{formatNumber(u.reserved)}</dd>
            <dt>Free</dt>
            <dd data-testid="free">{formatNumber(u.free)}</dd>
          </dl>
        </div>
        <div className="card">
          <h2 style={{ marginTop: 0 }}>Free ranges</h2>
          {n.freeRanges.length === 0 ? (
            <p className="muted">The network is full.</p>
          ) : (
            <ul className="small" aria-label="Free ranges">
              {n.freeRanges.map((r) => (
                <li key={r.start}>
                  <code>{r.start}</code>
                  {r.end !== r.start && (
                    <>
                      {' '}– <code>{r.end}</code>
                    </>
                  )}{' '}
                  <span className="muted">({formatNumber(r.size)})</span>
                </li>
              ))}
            </ul>
          )}
        </div>
        <div className="card">
          <h2 style={{ marginTop: 0 }}>Reserved ranges</h2>
          {ranges.length === 0 ? (
            <p className="muted small">No reserved range.</p>
          ) : (
            <ul className="small" aria-label="Reserved ranges">
              {ranges.map((r) => (
                <li key={r.id}>
                  <code>{r.startAddress}</code> – <code>{r.endAddress}</code> {r.description && <span className="muted">{r.description}</span>}{' '}
                  <button type="button" className="link" disabled={delRange.fetching} onClick={async () => { const x = await deleteRange({ id: r.id }); if (!x.error) refresh(); }}>
                    Remove
                  </button>
                </li>
              ))}
            </ul>
          )}
          <Problem error={delRange.error} />
          <RangeForm networkID={n.id} onDone={refresh} />
        </div>
      </div>
      <div style={{ marginTop: '1rem' }}>
        <AllocateForm
          networkID={n.id}
          onDone={(a) => {
            setNote(`Allocated ${a}.`);
            refresh();
          }}
        />
      </div>
      <h2>Addresses ({formatNumber(n.ipAddresses.totalCount)})</h2>
      <Problem error={released.error} />
      {addresses.length === 0 ? (
        <p className="muted">No address of this network is allocated or reserved.</p>
      ) : (
        <table aria-label="Addresses">
          <thead>
            <tr>
              <th>Address</th>
              <th>Status</th>
              <th>DNS name</th>
              <th>Bound to</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {addresses.map((a) => (
              <tr key={a.id} data-testid="address" data-address={a.address}>
                <td>
                  <code>{a.address}</code>
                </td>
                <td>
                  <StatusBadge status={a.status} />
                </td>
                <td>{a.dnsName ?? '—'}</td>
                <td className="small">
                  {a.port?.host && (
                    <>
                      <Link to={`/hosts/${a.port.host.id}`}>{a.port.host.name}</Link> {a.port.name}
                    </>
                  )}
                  {a.port?.virtualMachine && (
                    <>
                      <Link to={`/vms/${a.port.virtualMachine.id}`}>{a.port.virtualMachine.name}</Link> {a.port.name}
                    </>
                  )}
                  {a.loadBalancer && <span>VIP of {a.loadBalancer.name}</span>}
                  {!a.port && !a.loadBalancer && <span className="muted">—</span>}
                </td>
                <td>
                  <div className="row">
                    <BindControl id={a.id} onDone={refresh} />
                    <HistoryLink type="IPAddress" id={a.id} />
                    {inUseByVM(a) ? (
                      // The API refuses (CONFLICT) to release an address a VM uses: it goes with
                      // the VM, or an operator forces it through the API.
                      <span className="muted small" data-testid="in-use" title="Released when its VM is deleted">
                        in use by its VM
                      </span>
                    ) : (
                      <button
                        type="button"
                        className="link"
                        aria-label={`Release ${a.address}`}
                        disabled={released.fetching}
                        onClick={async () => {
                          const r = await release({ id: a.id });
                          if (!r.error) {
                            setNote(`Released ${a.address}.`);
                            refresh();
                          }
                        }}
                      >
                        Release
                      </button>
                    )}
                  </div>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
