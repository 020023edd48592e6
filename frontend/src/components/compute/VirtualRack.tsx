// The cluster "virtual rack": each node a box (state, CPU and memory allocation) with its VMs
// inside, coloured by VM status and naming the tenant; nodes grouped by physical rack.
import { Link } from 'react-router';
import { StatusBadge, statusTone } from '../StatusBadge';
import { groupByRack, share, shortNodeName, type RackNode } from '../../lib/compute/rack';
import { unknownExplanation } from '../../lib/compute/vmStatus';
import { formatNumber, formatSize, formatSizeOf } from '../../lib/format';
import './virtualRack.css';

/** A node's allocation bar; detail says used of total in words, e.g. "12/64 GiB". */
function Bar({ label, used, total, detail }: { label: string; used: number; total: number; detail: string }) {
  const pct = share(used, total);
  const tone = pct >= 90 ? 'bad' : pct >= 70 ? 'warn' : 'ok';
  return (
    <div className="vr-bar" title={`${label}: ${detail} allocated (${pct} %)`}>
      <span className="vr-bar-label">{label}</span>
      <span className="vr-bar-track"><span className={`vr-bar-fill usage-${tone}`} style={{ width: `${pct}%` }} /></span>
      <span className="vr-bar-text">{pct}%</span>
    </div>
  );
}

/** One node box. */
function NodeBox({ n }: { n: RackNode }) {
  const state = n.node.cordoned && n.node.status === 'READY' ? 'CORDONED' : n.node.status;
  return (
    <div className={`vr-node vr-node-${statusTone(state)}`} data-testid="vr-node" data-node-id={n.node.id} data-status={n.node.status}>
      <div className="vr-node-head">
        <Link to={`/nodes/${n.node.id}`} title={n.node.name}>{shortNodeName(n.node.name, n.rackName)}</Link>
        <StatusBadge status={state} title={n.node.cordoned ? 'cordoned: no new placements' : undefined} />
      </div>
      <Bar label="CPU" used={n.node.cpuAllocated} total={n.node.cpuCapacity} detail={`${formatNumber(n.node.cpuAllocated)}/${formatNumber(n.node.cpuCapacity)} vCPU`} />
      <Bar label="Mem" used={n.node.memoryAllocatedMB} total={n.node.memoryCapacityMB} detail={formatSizeOf(n.node.memoryAllocatedMB, n.node.memoryCapacityMB, 'MiB')} />
      <ul className="vr-vms" aria-label={`VMs on ${n.node.name}`}>
        {n.vms.length === 0 && <li className="vr-empty">no VMs</li>}
        {n.vms.map((v) => (
          <li key={v.id} className={`vr-vm vr-vm-${statusTone(v.status)}`} data-testid="vr-vm" data-vm-id={v.id} data-status={v.status}
            title={`${v.name} — ${v.status === 'UNKNOWN' ? unknownExplanation : v.status.toLowerCase()}, tenant ${v.tenantName}, ${v.flavorName} (${v.vcpus} vCPU, ${formatSize(v.memoryMB, 'MiB')})`}>
            <Link to={`/vms/${v.id}`}>{v.name}</Link>
            <span className="vr-tenant">{v.tenantName}</span>
          </li>
        ))}
      </ul>
    </div>
  );
}

/** The virtual rack of a cluster's nodes. */
export function VirtualRack({ nodes }: { nodes: RackNode[] }) {
  if (nodes.length === 0) return <p className="muted">This cluster has no compute nodes.</p>;
  return (
    <div className="vr">
      {groupByRack(nodes).map((g) => (
        <section key={g.rack} className="vr-rack" aria-label={`Rack ${g.rack}`}>
          <h3>
            {g.rackID ? <Link to={`/racks/${g.rackID}`}>{g.rack}</Link> : g.rack}
            <span className="muted small"> · {g.nodes.length} node{g.nodes.length === 1 ? '' : 's'} · {g.nodes.reduce((s, n) => s + n.vms.length, 0)} VMs</span>
          </h3>
          <div className="vr-nodes">
            {g.nodes.map((n) => <NodeBox key={n.node.id} n={n} />)}
          </div>
        </section>
      ))}
    </div>
  );
}

/** The colour key of VM boxes. */
export function VirtualRackLegend() {
  const items: [string, string][] = [['ok', 'active'], ['busy', 'in progress'], ['idle', 'stopped'], ['warn', 'warning'], ['bad', 'error'], ['unknown', 'unknown (node down)']];
  return (
    <div className="vr-legend" aria-label="Legend">
      {items.map(([tone, label]) => <span key={tone} className={`vr-vm vr-vm-${tone}`}>{label}</span>)}
    </div>
  );
}
