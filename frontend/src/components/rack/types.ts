// The shapes the rack components draw: what rackElevation and floorView return (structural, so
// the generated query types fit without conversion).
import type { Face } from '../../lib/rack/layout';

export interface AlertCountsView {
  fatal: number;
  critical: number;
  warning: number;
  worst?: string | null;
}

export interface NodeSummaryView {
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

export interface ElevationDeviceView {
  id: string;
  name: string;
  kind: string;
  role?: string | null;
  model: string;
  position: number;
  height: number;
  face: Face;
  fullDepth: boolean;
  lifecycle: string;
  node?: NodeSummaryView | null;
  alerts: AlertCountsView;
  maintainers: { id: string; name: string; group: boolean }[];
}

export interface CapacityView {
  nodes: number;
  readyNodes: number;
  cpuCapacity: number;
  cpuAllocated: number;
  memoryCapacityMB: number;
  memoryAllocatedMB: number;
}

export interface FloorRackView {
  rack: { id: string; name: string; row: string; position: number; height: number; status: string; powerZone?: string | null; networkZone?: string | null; rackZone?: string | null };
  usedUnits: number;
  freeUnits: number;
  hosts: number;
  capacity: CapacityView;
  alerts: AlertCountsView;
}

/** "1 warning, 2 critical" or "none". */
export function alertText(a: AlertCountsView): string {
  const parts: string[] = [];
  if (a.fatal) parts.push(`${a.fatal} fatal`);
  if (a.critical) parts.push(`${a.critical} critical`);
  if (a.warning) parts.push(`${a.warning} warning`);
  return parts.length ? parts.join(', ') : 'none';
}
