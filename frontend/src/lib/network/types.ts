// The network diagram and path trace as the API returns them (graph/diagram.graphqls), as plain
// interfaces so the pure code here does not depend on the generated GraphQL types.

/** GROUP: a node of the map standing for many members of one network (lib/network/group.ts). */
export type NodeKind = 'HOST' | 'SWITCH' | 'ROUTER' | 'VM' | 'NETWORK' | 'GROUP';
export type EdgeKind = 'LINK' | 'ATTACHMENT' | 'RUNS_ON';

export interface PortEnd {
  id: string;
  name: string;
  mac?: string | null;
  vlan?: number | null;
  addresses: string[];
}

export interface DiagramNode {
  id: string;
  kind: NodeKind;
  name: string;
  role?: string | null;
  status?: string | null;
  cidr?: string | null;
  vlan?: number | null;
}

export interface DiagramEdge {
  id: string;
  kind: EdgeKind;
  source: string;
  target: string;
  sourcePort?: PortEnd | null;
  targetPort?: PortEnd | null;
  label: string;
}

export interface Diagram {
  nodes: DiagramNode[];
  edges: DiagramEdge[];
  truncated: boolean;
}

export interface PathHop {
  level: number;
  linkID: string;
  fromHostID: string;
  fromHostName: string;
  fromPort: string;
  toHostID: string;
  toHostName: string;
  toPort: string;
  toRole?: string | null;
}
