// Turns the API's network diagram into Cytoscape elements: one node per device, VM or network
// (classes by kind and fabric role, short wrapped labels, a rank from gateways down to
// networks), one edge per link or attachment (port names as label, parallel edges numbered),
// and drops edges whose ends are not in the diagram, counting them.
import type { Diagram, DiagramEdge, DiagramNode, NodeKind, PortEnd } from './types';

/** Fabric tiers from the top of the drawing (0) to the bottom. */
const roleRank: Record<string, number> = {
  GATEWAY_ROUTER: 0,
  FLOOR_SPINE: 1,
  FLOOR_LEAF: 2,
  RACK_SPINE: 3,
  RACK_LEAF: 4,
};

/** The tier of a node: gateways on top, then spines and leaves, servers, VMs, networks last. */
export function rankOf(n: Pick<DiagramNode, 'kind' | 'role'>): number {
  if (n.role && n.role in roleRank) return roleRank[n.role];
  // a group is drawn in the tier of the members it stands for (its role is their kind)
  if (n.kind === 'GROUP') return rankOf({ kind: (n.role ?? 'HOST') as NodeKind });
  switch (n.kind) {
    case 'SWITCH':
    case 'ROUTER':
      return 4;
    case 'HOST':
      return 5;
    case 'VM':
      return 6;
    default:
      return 7;
  }
}

/** The longest prefix, ending in a dash, that every name shares (e.g. "tky1-dc1-"). */
export function commonPrefix(names: string[]): string {
  if (names.length < 2) return '';
  let p = names[0];
  for (const n of names) {
    while (p && !n.startsWith(p)) p = p.slice(0, -1);
  }
  const cut = p.lastIndexOf('-');
  return cut < 0 ? '' : p.slice(0, cut + 1);
}

/** Breaks name into lines of at most width characters, after dashes where it can. */
export function wrapName(name: string, width = 18): string {
  const parts = name.split(/(?<=-)/);
  const lines: string[] = [];
  let line = '';
  for (const part of parts) {
    if (line && line.length + part.length > width) {
      lines.push(line);
      line = '';
    }
    line += part;
  }
  if (line) lines.push(line);
  return lines.join('\n');
}

export interface NodeData {
  id: string;
  name: string;
  label: string;
  kind: string;
  role: string;
  status: string;
  rank: number;
}

export interface EdgeData {
  id: string;
  source: string;
  target: string;
  kind: string;
  label: string;
  /** 0-based position among the edges joining the same two nodes, and how many there are */
  parallelIndex: number;
  parallelCount: number;
}

export interface Elements {
  nodes: { data: NodeData; classes: string }[];
  edges: { data: EdgeData; classes: string }[];
  /** edges left out because an end is not among the nodes (or the id repeats) */
  dropped: number;
}

const cls = (s: string) => s.toLowerCase().replace(/_/g, '-');

/** The text drawn on a node: its name without the prefix all names share, wrapped. */
function nodeLabel(n: DiagramNode, prefix: string): string {
  const name = prefix && n.name.startsWith(prefix) && n.name.length > prefix.length ? n.name.slice(prefix.length) : n.name;
  const lines = [wrapName(name)];
  if (n.kind === 'NETWORK' && n.cidr) lines.push(n.cidr + (n.vlan != null ? ` · VLAN ${n.vlan}` : ''));
  return lines.join('\n');
}

/** The text drawn on an edge: the port names at its ends. */
export function edgeLabel(e: Pick<DiagramEdge, 'kind' | 'sourcePort' | 'targetPort'>): string {
  if (e.kind === 'ATTACHMENT') return e.sourcePort?.name ?? '';
  if (e.kind === 'RUNS_ON') return 'runs on';
  const a = e.sourcePort?.name ?? '?';
  const b = e.targetPort?.name ?? '?';
  return `${a} – ${b}`;
}

/** The Cytoscape elements for d; startId marks the node the map is centred on. */
export function toElements(d: Diagram, startId?: string): Elements {
  const byId = new Map<string, DiagramNode>();
  for (const n of d.nodes) if (!byId.has(n.id)) byId.set(n.id, n);
  const prefix = commonPrefix([...byId.values()].map((n) => n.name));

  const nodes = [...byId.values()].map((n) => {
    const classes = [`kind-${cls(n.kind)}`];
    if (n.role) classes.push(`role-${cls(n.role)}`);
    if (n.id === startId) classes.push('start');
    return {
      data: {
        id: n.id,
        name: n.name,
        label: nodeLabel(n, prefix),
        kind: n.kind,
        role: n.role ?? '',
        status: n.status ?? '',
        rank: rankOf(n),
      },
      classes: classes.join(' '),
    };
  });

  let dropped = 0;
  const seen = new Set<string>(byId.keys());
  const kept: { e: DiagramEdge; source: string; target: string }[] = [];
  for (const e of d.edges) {
    const s = byId.get(e.source);
    const t = byId.get(e.target);
    if (!s || !t || seen.has(e.id)) {
      dropped++;
      continue;
    }
    seen.add(e.id);
    // draw from the upper tier down, so a layered layout keeps the fabric's order
    const flip = rankOf(s) > rankOf(t);
    kept.push({ e, source: flip ? t.id : s.id, target: flip ? s.id : t.id });
  }

  const pairKey = (a: string, b: string) => (a < b ? `${a}|${b}` : `${b}|${a}`);
  const pairCount = new Map<string, number>();
  for (const k of kept) pairCount.set(pairKey(k.source, k.target), (pairCount.get(pairKey(k.source, k.target)) ?? 0) + 1);
  const pairSeen = new Map<string, number>();

  const edges = kept.map(({ e, source, target }) => {
    const key = pairKey(source, target);
    const index = pairSeen.get(key) ?? 0;
    pairSeen.set(key, index + 1);
    const count = pairCount.get(key) ?? 1;
    const classes = [e.kind === 'LINK' ? 'link' : e.kind === 'RUNS_ON' ? 'runs-on' : 'attachment'];
    if (count > 1) classes.push('parallel');
    return {
      data: { id: e.id, source, target, kind: e.kind, label: edgeLabel(e), parallelIndex: index, parallelCount: count },
      classes: classes.join(' '),
    };
  });

  return { nodes, edges, dropped };
}

/** One port of a node as seen in the diagram: the cable's other end and the network it is in. */
export interface NodePort extends PortEnd {
  peerId?: string;
  peerName?: string;
  peerPort?: string;
  networkId?: string;
  networkName?: string;
}

/** The ports of node id that appear in the diagram's edges, one row per port, sorted by name. */
export function portsOf(d: Diagram, id: string): NodePort[] {
  const names = new Map(d.nodes.map((n) => [n.id, n.name]));
  const byPort = new Map<string, NodePort>();
  for (const e of d.edges) {
    const mine = e.source === id ? e.sourcePort : e.target === id ? e.targetPort : null;
    if (!mine) continue;
    const other = e.source === id ? e.target : e.source;
    const row = byPort.get(mine.id) ?? { ...mine, addresses: [...mine.addresses] };
    if (e.kind === 'LINK') {
      row.peerId = other;
      row.peerName = names.get(other) ?? other;
      row.peerPort = (e.source === id ? e.targetPort : e.sourcePort)?.name;
    } else {
      row.networkId = other;
      row.networkName = names.get(other) ?? other;
    }
    byPort.set(mine.id, row);
  }
  return [...byPort.values()].sort((a, b) => a.name.localeCompare(b.name, undefined, { numeric: true }));
}
