// One compute node: status, heartbeat, capacity and allocation, its VMs and host, and the
// cordon / uncordon / drain actions with the drain's progress (live, and polled every 2 s while draining).
import { useEffect } from 'react';
import { Link, useParams } from 'react-router';
import { useQuery } from 'urql';
import { graphql } from '../../gql';
import { Problem } from '../../components/Problem';
import { Loading } from '../../components/Loading';
import { StatusBadge } from '../../components/StatusBadge';
import { UsageBar } from '../../components/UsageBar';
import { RelTime } from '../../components/ops/RelTime';
import { NodeActions } from '../../components/ops/NodeActions';
import { DrainProgressPanel } from '../../components/ops/DrainProgressPanel';
import { useLiveNodes } from '../../components/ops/useLiveNodes';
import { schedulingLabel } from '../../lib/ops/drain';
import { formatDateTime, formatSize, formatNumber } from '../../lib/format';
import { overlay } from '../../lib/ops/live';
import { vmStatusTitle } from '../../lib/compute/vmStatus';
import { useAuth } from '../../api/auth';
import '../../components/ops/ops.css';
import { HistoryLink } from '../../components/dcim/HistoryLink';
import { VMUsage } from '../../components/compute/VMUsage';

const NodeDocument = graphql(`
  query NodeDetails($id: ID!) {
    node(id: $id) {
      __typename
      ... on ComputeNode {
        id updatedAt name status statusReason schedulable cordonReason drainState drainMessage drainDeadline drainUnmovable { vmID vmName reason }
        lastHeartbeatAt agentVersion osName osVersion
        cpuCapacity cpuAllocated memoryCapacityMB memoryAllocatedMB diskCapacityGB diskAllocatedGB
        host { id name }
        cluster { id name }
        virtualMachines(first: 100) {
          totalCount
          edges { node { id name status allocatedVcpus allocatedMemoryMB tenant { id name } } }
        }
      }
    }
  }
`);

export default function NodePage() {
  const { isOperator } = useAuth();
  const { id = '' } = useParams();
  const [{ data, error, fetching }, refetch] = useQuery({ query: NodeDocument, variables: { id } });
  const live = useLiveNodes(undefined, id)[id];
  const loaded = data?.node?.__typename === 'ComputeNode' ? data.node : null;
  const n = loaded ? overlay(loaded, live) : null;
  const draining = n?.drainState === 'DRAINING';

  useEffect(() => {
    if (!draining) return;
    const t = setInterval(() => refetch({ requestPolicy: 'network-only' }), 2000);
    return () => clearInterval(t);
  }, [draining, refetch]);

  if (error && !n) return <><h1>Node</h1><Problem error={error} /></>;
  if (!data) return fetching ? <Loading /> : null;
  if (!n) return <><h1>Node</h1><p className="muted">There is no compute node with id {id}, or you may not see it.</p></>;
  const vms = n.virtualMachines.edges?.flatMap((e) => (e?.node ? [e.node] : [])) ?? [];
  const sched = schedulingLabel(n);
  return (
    <div>
      <div className="breadcrumbs"><Link to="/nodes">Nodes</Link><Link to={`/clusters/${n.cluster.id}`}>{n.cluster.name}</Link></div>
      <div className="spread">
        <h1>{n.name}</h1>
        <HistoryLink type="ComputeNode" id={n.id} />
        <div className="row">
          <StatusBadge status={n.status} title={n.statusReason} />
          <span data-testid="node-scheduling"><StatusBadge status={sched === 'SCHEDULABLE' ? 'OK' : sched} title={n.cordonReason} />{sched === 'SCHEDULABLE' && <span className="muted small"> schedulable</span>}</span>
        </div>
      </div>
      <Problem error={error} />
      <div className="ops-cols">
        <section className="card">
          <dl className="kv">
            <dt>Status</dt><dd>{n.status}{n.statusReason ? ` — ${n.statusReason}` : ''}</dd>
            <dt>Scheduling</dt><dd data-testid="node-cordon">{n.schedulable ? 'schedulable' : `cordoned${n.cordonReason ? `: ${n.cordonReason}` : ''}`}</dd>
            <dt>Last heartbeat</dt><dd><RelTime iso={n.lastHeartbeatAt} /> <span className="muted small">({formatDateTime(n.lastHeartbeatAt)})</span></dd>
            <dt>Host</dt><dd><Link to={`/hosts/${n.host.id}`}>{n.host.name}</Link></dd>
            <dt>Cluster</dt><dd><Link to={`/clusters/${n.cluster.id}`}>{n.cluster.name}</Link></dd>
            <dt>Agent / OS</dt><dd>{n.agentVersion || '—'} · {[n.osName, n.osVersion].filter(Boolean).join(' ') || '—'}</dd>
          </dl>
          <h3>Capacity and allocation</h3>
          <UsageBar label="vCPUs" used={n.cpuAllocated} total={n.cpuCapacity} />
          <UsageBar label="Memory" used={n.memoryAllocatedMB} total={n.memoryCapacityMB} size="MiB" />
          <UsageBar label="Disk" used={n.diskAllocatedGB} total={n.diskCapacityGB} size="GiB" />
        </section>
        <section className="card">
          <h3 style={{ marginTop: 0 }}>Actions</h3>
          <NodeActions node={n} />
          {isOperator && <p className="small"><Link to={`/maintenance?plan=${encodeURIComponent(n.id)}`}>Plan maintenance of this node</Link></p>}
          <DrainProgressPanel node={n} />
        </section>
      </div>
      <h2>Virtual machines on this node ({formatNumber(n.virtualMachines.totalCount)})</h2>
      {vms.length === 0 ? (
        <p className="muted">No VMs are placed on this node.</p>
      ) : (
        <table className="ops-table" aria-label="Virtual machines">
          <thead><tr><th>Name</th><th>Status</th><th>Tenant</th><th className="num">vCPUs</th><th className="num">Memory</th></tr></thead>
          <tbody>
            {vms.map((v) => (
              <tr key={v.id}>
                <td><Link to={`/vms/${v.id}`}>{v.name}</Link></td>
                <td><StatusBadge status={v.status} title={vmStatusTitle(v.status)} /></td>
                <td><Link to={`/tenants/${v.tenant.id}`}>{v.tenant.name}</Link></td>
                <td className="num">{formatNumber(v.allocatedVcpus)}</td>
                <td className="num">{formatSize(v.allocatedMemoryMB, 'MiB')}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <VMUsage nodeID={id} />
    </div>
  );
}
