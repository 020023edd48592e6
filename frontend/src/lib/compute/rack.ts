// The cluster "virtual rack": clusterView's nodes grouped by physical rack, allocation shares,
// and live events (VM and node status changes) applied to the view without a refetch.

export interface RackVM {
  id: string;
  name: string;
  status: string;
  tenantID: string;
  tenantName: string;
  flavorName: string;
  vcpus: number;
  memoryMB: number;
}

export interface RackNodeSummary {
  id: string;
  name: string;
  status: string;
  cordoned: boolean;
  cpuCapacity: number;
  cpuAllocated: number;
  memoryCapacityMB: number;
  memoryAllocatedMB: number;
  vmCount: number;
}

export interface RackNode {
  node: RackNodeSummary;
  hostID: string;
  hostName: string;
  rackID?: string | null;
  rackName?: string | null;
  vms: RackVM[];
}

/** A VM status event as the subscription delivers it (only the fields used here). */
export interface VMEvent {
  id: string;
  name: string;
  status: string;
  tenant: { id: string; name: string };
  flavor: { name: string; vcpus: number; memoryMB: number };
  node?: { id: string } | null;
  cluster?: { id: string } | null;
}

/** A node status event (only the fields used here). */
export interface NodeEvent {
  id: string;
  status: string;
  schedulable: boolean;
  cpuCapacity: number;
  cpuAllocated: number;
  memoryCapacityMB: number;
  memoryAllocatedMB: number;
}

/** Nodes grouped by rack name (nodes without a rack last), racks and nodes by name. */
export function groupByRack<N extends RackNode>(nodes: readonly N[]): { rack: string; rackID?: string | null; nodes: N[] }[] {
  const groups = new Map<string, { rack: string; rackID?: string | null; nodes: N[] }>();
  for (const n of nodes) {
    const key = n.rackName ?? '';
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { rack: n.rackName ?? 'No rack', rackID: n.rackID, nodes: [] }));
    g.nodes.push(n);
  }
  const byName = (a: string, b: string) => a.localeCompare(b, undefined, { numeric: true });
  return [...groups.entries()]
    .sort(([a], [b]) => (a === '' ? 1 : b === '' ? -1 : byName(a, b)))
    .map(([, g]) => ({ ...g, nodes: [...g.nodes].sort((a, b) => byName(a.node.name, b.node.name)) }));
}

const gone = (status: string) => status === 'DELETED';

/**
 * Applies a VM event: the VM is updated where it is, moved to its new node, added when new to
 * the cluster, and removed when deleted or placed outside the cluster. Returns a new array
 * (unchanged nodes keep their identity).
 */
export function applyVMEvent<N extends RackNode>(nodes: readonly N[], ev: VMEvent, clusterID: string): N[] {
  const target = !gone(ev.status) && ev.cluster?.id === clusterID ? ev.node?.id : undefined;
  const vm: RackVM = {
    id: ev.id,
    name: ev.name,
    status: ev.status,
    tenantID: ev.tenant.id,
    tenantName: ev.tenant.name,
    flavorName: ev.flavor.name,
    vcpus: ev.flavor.vcpus,
    memoryMB: ev.flavor.memoryMB,
  };
  return nodes.map((n) => {
    const i = n.vms.findIndex((v) => v.id === ev.id);
    if (n.node.id === target) {
      const vms = i >= 0 ? n.vms.map((v, j) => (j === i ? vm : v)) : [...n.vms, vm];
      return { ...n, vms, node: { ...n.node, vmCount: vms.length } };
    }
    if (i >= 0) {
      const vms = n.vms.filter((v) => v.id !== ev.id);
      return { ...n, vms, node: { ...n.node, vmCount: vms.length } };
    }
    return n;
  });
}

/** Applies a node event: status, cordon and allocation change in place. */
export function applyNodeEvent<N extends RackNode>(nodes: readonly N[], ev: NodeEvent): N[] {
  return nodes.map((n) =>
    n.node.id === ev.id
      ? {
          ...n,
          node: {
            ...n.node,
            status: ev.status,
            cordoned: !ev.schedulable,
            cpuCapacity: ev.cpuCapacity,
            cpuAllocated: ev.cpuAllocated,
            memoryCapacityMB: ev.memoryCapacityMB,
            memoryAllocatedMB: ev.memoryAllocatedMB,
          },
        }
      : n,
  );
}

/** VMs per status over all nodes, e.g. {ACTIVE: 9, CREATING: 1}. */
export function countByStatus(nodes: readonly RackNode[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const n of nodes) for (const v of n.vms) out[v.status] = (out[v.status] ?? 0) + 1;
  return out;
}

/** A node's name without its rack's prefix: "dc1-rack-1-1-server01" in rack-1-1 is "server01". */
export function shortNodeName(name: string, rackName?: string | null): string {
  if (rackName) {
    const i = name.lastIndexOf(rackName + '-');
    if (i >= 0 && i + rackName.length + 1 < name.length) return name.slice(i + rackName.length + 1);
  }
  return name;
}

/** Share in percent (0..100) of used over total; 0 when total is 0. */
export function share(used: number, total: number): number {
  return total > 0 ? Math.min(100, Math.round((used / total) * 100)) : 0;
}
