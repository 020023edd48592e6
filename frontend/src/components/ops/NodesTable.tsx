// The rows of the node list: status, scheduling, cluster, host, allocation and heartbeat.
import { Link } from 'react-router';
import { StatusBadge } from '../StatusBadge';
import { UsageBar } from '../UsageBar';
import { RelTime } from './RelTime';
import { schedulingLabel } from '../../lib/ops/drain';

export interface NodeRow {
  id: string;
  name: string;
  status: string;
  statusReason?: string | null;
  schedulable: boolean;
  cordonReason?: string | null;
  drainState?: string | null;
  lastHeartbeatAt?: string | null;
  cpuCapacity: number;
  cpuAllocated: number;
  memoryCapacityMB: number;
  memoryAllocatedMB: number;
  cluster: { id: string; name: string };
  host: { id: string; name: string };
}

export function NodesTable({ rows }: { rows: NodeRow[] }) {
  return (
    <table className="ops-table" aria-label="Nodes">
      <thead>
        <tr><th>Name</th><th>Status</th><th>Scheduling</th><th>Cluster</th><th>vCPUs</th><th>Memory</th><th>Heartbeat</th></tr>
      </thead>
      <tbody>
        {rows.map((n) => {
          const sched = schedulingLabel(n);
          return (
            <tr key={n.id} data-testid={`node-row-${n.id}`}>
              <td><Link to={`/nodes/${n.id}`}>{n.name}</Link></td>
              <td><StatusBadge status={n.status} title={n.statusReason} /></td>
              <td>{sched === 'SCHEDULABLE' ? <span className="muted small">schedulable</span> : <StatusBadge status={sched} title={n.cordonReason} />}</td>
              <td><Link to={`/clusters/${n.cluster.id}`}>{n.cluster.name}</Link></td>
              <td style={{ minWidth: 170 }}><UsageBar used={n.cpuAllocated} total={n.cpuCapacity} /></td>
              <td style={{ minWidth: 190 }}><UsageBar used={n.memoryAllocatedMB} total={n.memoryCapacityMB} size="MiB" /></td>
              <td className="nowrap"><RelTime iso={n.lastHeartbeatAt} /></td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
