// /hosts/<id>: a physical device (node(id:) as Host): its place in the rack, its ports with
// link peers and addresses, its compute node with the VMs on it, maintainers and groups.
import { Link, useNavigate, useParams } from 'react-router';
import { useState } from 'react';
import { useMutation, useQuery } from 'urql';
import { graphql } from '../../gql';
import type { HostPageQuery } from '../../gql/graphql';
import { Problem } from '../../components/Problem';
import { Loading } from '../../components/Loading';
import { StatusBadge } from '../../components/StatusBadge';
import { UsageBar } from '../../components/UsageBar';
import { unitRange } from '../../lib/rack/layout';
import { formatNumber, formatSize } from '../../lib/format';
import { HistoryLink } from '../../components/dcim/HistoryLink';
import { DeleteControl } from '../../components/dcim/DeleteControl';
import { CableForm, EditHostForm, NewPortForm } from '../../components/dcim/forms';
import { DeleteHostDocument, DeleteLinkDocument } from '../../components/dcim/deletes';
import './datacenters.css';

const HostDocument = graphql(`
  query HostPage($id: ID!) {
    node(id: $id) {
      __typename
      ... on Host {
        id
        name
        description
        kind
        role
        vendor
        model
        serialNumber
        position
        height
        face
        fullDepth
        lifecycle
        cpuModel
        cpuSockets
        cpuCores
        cpuThreads
        memoryMB
        rack { id name floor { id name datacenter { id name } } }
        ports(first: 200) {
          totalCount
          edges {
            node {
              id
              name
              mac
              vlan
              speedMbps
              kind
              ipAddresses(first: 20) { edges { node { id address } } }
              linkA { id status bPort { id name host { id name } } }
              linkB { id status aPort { id name host { id name } } }
            }
          }
        }
        node {
          id
          name
          status
          statusReason
          schedulable
          cordonReason
          cpuCapacity
          cpuAllocated
          memoryCapacityMB
          memoryAllocatedMB
          diskCapacityGB
          diskAllocatedGB
          cluster { id name }
          virtualMachines(first: 100) {
            totalCount
            edges { node { id name status allocatedVcpus allocatedMemoryMB tenant { id name } } }
          }
        }
        maintainers(first: 50) { edges { node { id name email } } }
        maintainerGroups(first: 50) { edges { node { id name } } }
        hostGroups(first: 50) { edges { node { id name } } }
      }
    }
  }
`);

type Host = Extract<NonNullable<HostPageQuery['node']>, { __typename: 'Host' }>;
type PortNode = NonNullable<NonNullable<NonNullable<Host['ports']['edges']>[number]>['node']>;

/** The nodes of a connection's edges. */
function nodes<T>(edges: readonly ({ node?: T | null } | null)[] | null | undefined): T[] {
  return edges?.flatMap((e) => (e?.node ? [e.node] : [])) ?? [];
}

/** The port at the other end of p's link, with its link. */
function peer(p: PortNode) {
  if (p.linkA) return { link: p.linkA, port: p.linkA.bPort };
  if (p.linkB) return { link: p.linkB, port: p.linkB.aPort };
  return null;
}

function Ports({ host, onChanged }: { host: Host; onChanged(): void }) {
  const [unlink, deleteLink] = useMutation(DeleteLinkDocument);
  const ports = nodes(host.ports.edges);
  if (ports.length === 0) return <p className="muted">This device has no ports.</p>;
  return (
    <table aria-label="Ports">
      <thead>
        <tr>
          <th>Port</th>
          <th>MAC</th>
          <th>VLAN</th>
          <th>Speed</th>
          <th>Link peer</th>
          <th>IP addresses</th>
          <th />
        </tr>
      </thead>
      <tbody>
        {ports.map((p) => {
          const pe = peer(p);
          const ips = nodes(p.ipAddresses.edges);
          return (
            <tr key={p.id} data-testid="port">
              <td>
                <strong>{p.name}</strong> <span className="muted small">{p.kind.toLowerCase()}</span>
              </td>
              <td>
                <code>{p.mac ?? '—'}</code>
              </td>
              <td>{p.vlan ? p.vlan : '—'}</td>
              <td>{p.speedMbps ? (p.speedMbps >= 1000 ? `${formatNumber(p.speedMbps / 1000, 1)} Gb/s` : `${formatNumber(p.speedMbps)} Mb/s`) : '—'}</td>
              <td>
                {pe ? (
                  <>
                    {pe.port.host ? <Link to={`/hosts/${pe.port.host.id}`}>{pe.port.host.name}</Link> : <span className="muted">unknown device</span>}{' '}
                    <span className="muted">{pe.port.name}</span> <StatusBadge status={pe.link.status} />
                  </>
                ) : (
                  <span className="muted">not linked</span>
                )}
              </td>
              <td>{ips.length ? ips.map((a) => a.address).join(', ') : <span className="muted">none</span>}</td>
              <td>
                <Link to={`/network/trace/${p.id}`}>Trace</Link>
                {pe && (
                  <>
                    {' '}
                    <button
                      type="button"
                      className="link"
                      disabled={unlink.fetching}
                      aria-label={`Disconnect ${p.name}`}
                      onClick={async () => {
                        const other = pe.port.host ? `${pe.port.host.name} ${pe.port.name}` : pe.port.name;
                        if (!window.confirm(`Disconnect the cable from ${p.name} to ${other}? The cable record is deleted.`)) return;
                        const r = await deleteLink({ id: pe.link.id });
                        if (!r.error) onChanged();
                      }}
                    >
                      Disconnect
                    </button>
                  </>
                )}
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

/** The ports of host with no cable yet. */
function freePorts(host: Host) {
  return nodes(host.ports.edges).filter((p) => !p.linkA && !p.linkB);
}

function ComputeNode({ node }: { node: NonNullable<Host['node']> }) {
  const vms = nodes(node.virtualMachines.edges);
  return (
    <div className="card">
      <h2>Compute node</h2>
      <div className="row">
        <Link to={`/nodes/${node.id}`}>{node.name}</Link>
        <StatusBadge status={node.status} title={node.statusReason} />
        {!node.schedulable && <StatusBadge status="CORDONED" title={node.cordonReason} />}
        <span className="muted small">
          cluster <Link to={`/clusters/${node.cluster.id}`}>{node.cluster.name}</Link>
        </span>
      </div>
      {!node.schedulable && node.cordonReason && <p className="small muted">Cordoned: {node.cordonReason}</p>}
      <div className="dc-stats">
        <UsageBar label="vCPU" used={node.cpuAllocated} total={node.cpuCapacity} />
        <UsageBar label="Memory" used={node.memoryAllocatedMB} total={node.memoryCapacityMB} size="MiB" />
        <UsageBar label="Disk" used={node.diskAllocatedGB} total={node.diskCapacityGB} size="GiB" />
      </div>
      <h3>Virtual machines ({formatNumber(node.virtualMachines.totalCount)})</h3>
      {vms.length === 0 ? (
        <p className="muted small">No VM runs on this node.</p>
      ) : (
        <ul className="small" style={{ paddingLeft: '1.1rem', margin: 0 }}>
          {vms.map((vm) => (
            <li key={vm.id}>
              <Link to={`/vms/${vm.id}`}>{vm.name}</Link> <StatusBadge status={vm.status} />{' '}
              <span className="muted">
                {formatNumber(vm.allocatedVcpus)} vCPU, {formatSize(vm.allocatedMemoryMB, 'MiB')} · <Link to={`/tenants/${vm.tenant.id}`}>{vm.tenant.name}</Link>
              </span>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

export default function HostPage() {
  const { id = '' } = useParams();
  const navigate = useNavigate();
  const [{ data, error, fetching }, refetch] = useQuery({ query: HostDocument, variables: { id } });
  const [, deleteHost] = useMutation(DeleteHostDocument);
  const [editing, setEditing] = useState(false);
  const refresh = () => refetch({ requestPolicy: 'network-only' });
  const n = data?.node;
  const host = n && n.__typename === 'Host' ? (n as Host) : null;
  if (!host) {
    return (
      <div>
        <nav className="breadcrumbs" aria-label="Breadcrumbs">
          <Link to="/datacenters">Datacenters</Link>
        </nav>
        <h1>Device</h1>
        <Problem error={error} />
        {fetching && !data && <Loading />}
        {data && !error && <p className="muted">There is no device with this id, or you may not see it.</p>}
      </div>
    );
  }
  const rack = host.rack;
  const maintainers = nodes(host.maintainers.edges);
  const groups = nodes(host.maintainerGroups.edges);
  const hostGroups = nodes(host.hostGroups.edges);
  return (
    <div>
      <nav className="breadcrumbs" aria-label="Breadcrumbs">
        <Link to="/datacenters">Datacenters</Link>
        {rack && (
          <>
            <Link to={`/datacenters/${rack.floor.datacenter.id}`}>{rack.floor.datacenter.name}</Link>
            <Link to={`/floors/${rack.floor.id}`}>{rack.floor.name}</Link>
            <Link to={`/racks/${rack.id}`}>{rack.name}</Link>
          </>
        )}
        <span>{host.name}</span>
      </nav>
      <div className="spread">
        <div className="rack-title">
          <h1>{host.name}</h1>
          <StatusBadge status={host.lifecycle === 'ACTIVE' ? 'ACTIVE' : host.lifecycle} />
        </div>
        <div className="row">
          <HistoryLink type="Host" id={host.id} />
          <button type="button" onClick={() => setEditing(!editing)} aria-expanded={editing}>
            Edit device
          </button>
          <DeleteControl
            what={`device ${host.name}`}
            onDelete={() => deleteHost({ id: host.id })}
            onDone={() => navigate(rack ? `/racks/${rack.id}` : '/datacenters')}
          />
          <button type="button" className="primary" onClick={() => navigate(`/network?from=${encodeURIComponent(host.id)}`)}>
            Network map
          </button>
        </div>
      </div>
      <Problem error={error} />
      <div className="host-grid">
        <div className="card">
          <h2>Device</h2>
          <dl className="host-facts">
            <dt>Kind</dt>
            <dd>
              {host.kind.toLowerCase()}
              {host.role ? ` · ${host.role.replace(/_/g, ' ').toLowerCase()}` : ''}
            </dd>
            <dt>Model</dt>
            <dd>{[host.vendor, host.model].filter(Boolean).join(' ') || '—'}</dd>
            <dt>Serial</dt>
            <dd>{host.serialNumber ?? '—'}</dd>
            <dt>Rack</dt>
            <dd>
              {rack ? <Link to={`/racks/${rack.id}`}>{rack.name}</Link> : 'not racked'} · {unitRange(host.position, host.height)} · {host.face.toLowerCase()},{' '}
              {host.fullDepth ? 'full depth' : 'half depth'}
            </dd>
            {host.cpuModel && (
              <>
                <dt>CPU</dt>
                <dd>
                  {host.cpuSockets} × {host.cpuModel} ({host.cpuCores} cores, {host.cpuThreads} threads)
                </dd>
              </>
            )}
            {host.memoryMB > 0 && (
              <>
                <dt>Memory</dt>
                <dd>{formatSize(host.memoryMB, 'MiB')}</dd>
              </>
            )}
            <dt>Maintainers</dt>
            <dd>
              {maintainers.length || groups.length
                ? [...maintainers.map((m) => m.name), ...groups.map((g) => `${g.name} (group)`)].join(', ')
                : 'none'}{' '}
              <Link to="/maintainers" className="small">
                all maintainers
              </Link>
            </dd>
            <dt>Host groups</dt>
            <dd>{hostGroups.length ? hostGroups.map((g) => g.name).join(', ') : 'none'}</dd>
          </dl>
          {host.description && <p className="small">{host.description}</p>}
        </div>
        {host.node ? (
          <ComputeNode node={host.node} />
        ) : (
          <div className="card">
            <h2>Compute node</h2>
            <p className="muted">This device is not a compute node.</p>
          </div>
        )}
      </div>
      <h2>Ports ({formatNumber(host.ports.totalCount)})</h2>
      <Ports host={host} onChanged={refresh} />
      <div className="grid dcim-forms" style={{ marginTop: '1rem' }}>
        <NewPortForm hostID={host.id} onDone={refresh} />
        <CableForm ports={freePorts(host)} onDone={(portID) => navigate(`/network/trace/${portID}`)} />
      </div>
      {editing && <EditHostForm host={host} onDone={refresh} />}
    </div>
  );
}
