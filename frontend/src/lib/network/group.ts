// Grouping for the network map: a network with a great many members that reach nothing else in
// the diagram (the management network fans out to every server) is drawn as the network and
// one group node standing for those members, instead of hundreds of nodes and edges. A group
// expands on click: its network's id goes into `expanded` and the members are drawn again.
import { findSatellites } from './layout';
import type { Diagram, DiagramNode } from './types';

/** Members a network needs before they are grouped. */
export const GROUP_MIN = 12;

/** One group: the network (hub) and the members it stands for. */
export interface Group {
  id: string;
  hub: string;
  hubName: string;
  members: string[];
  /** "198 hosts", "14 VMs", "30 members" (mixed kinds) */
  label: string;
}

const kindNames: Record<string, [string, string]> = {
  HOST: ['host', 'hosts'],
  VM: ['VM', 'VMs'],
  SWITCH: ['switch', 'switches'],
  ROUTER: ['router', 'routers'],
};

/** "12 hosts" when all members are of one kind, else "12 members". */
export function groupLabel(members: DiagramNode[]): string {
  const kinds = new Set(members.map((m) => m.kind));
  const [one] = kinds;
  const names = kinds.size === 1 ? kindNames[one] : undefined;
  return `${members.length} ${names ? names[1] : 'members'}`;
}

/** The id of the group node of network hub. */
export const groupId = (hub: string) => `group:${hub}`;

/**
 * d with the members of every large network (GROUP_MIN or more members attached to nothing
 * else) replaced by a group node, except networks in expanded; keep (the start) is never
 * grouped. The group node has kind GROUP and the members' kind as its role, so it is drawn in
 * their tier.
 */
export function groupDiagram(d: Diagram, expanded: ReadonlySet<string>, keep?: string, min = GROUP_MIN): { diagram: Diagram; groups: Group[] } {
  const byId = new Map(d.nodes.map((n) => [n.id, n]));
  const sats = findSatellites(d.nodes.map((n) => n.id), d.edges, min, keep);
  const groups: Group[] = [];
  const hidden = new Set<string>();
  for (const [hub, ids] of sats) {
    const h = byId.get(hub);
    if (!h || h.kind !== 'NETWORK' || expanded.has(hub)) continue;
    const members = ids.flatMap((id) => byId.get(id) ?? []);
    groups.push({ id: groupId(hub), hub, hubName: h.name, members: ids, label: groupLabel(members) });
    for (const id of ids) hidden.add(id);
  }
  if (groups.length === 0) return { diagram: d, groups };
  const nodes: DiagramNode[] = d.nodes.filter((n) => !hidden.has(n.id));
  const edges = d.edges.filter((e) => !hidden.has(e.source) && !hidden.has(e.target));
  for (const g of groups) {
    const kinds = new Set(g.members.map((id) => byId.get(id)?.kind));
    const [kind] = kinds;
    nodes.push({ id: g.id, kind: 'GROUP', name: `${g.label} of ${g.hubName}`, role: kinds.size === 1 ? kind : 'HOST' });
    edges.push({ id: `${g.id}:edge`, kind: 'ATTACHMENT', source: g.id, target: g.hub, label: '' });
  }
  return { diagram: { ...d, nodes, edges }, groups };
}
