// Summarises an explainPlacement answer for people: "0 of 24 nodes fit: 20 lack memory, 4 cordoned",
// and orders its per-node rows (fitting nodes by score first, then rejected ones by reason).

/** One node of an explanation, as the API answers it (only the fields used here). */
export interface ExplainedNode {
  node: { id: string; name: string };
  rejectedBy?: string | null;
  code?: string | null;
  reason?: string | null;
  total: number;
}

/** A reason nodes were rejected and how many. */
export interface ReasonCount {
  filter: string;
  reason: string;
  count: number;
}

export interface PlacementSummary {
  fit: number;
  total: number;
  reasons: ReasonCount[];
  /** e.g. "0 of 24 nodes fit: 20 node lacks memory, 4 node is cordoned" */
  text: string;
}

/** Counts fitting nodes and groups the rejected ones by filter and reason, most common first. */
export function summarizePlacement(nodes: readonly ExplainedNode[]): PlacementSummary {
  const groups = new Map<string, ReasonCount>();
  let fit = 0;
  for (const n of nodes) {
    if (!n.rejectedBy) {
      fit++;
      continue;
    }
    const reason = n.reason || n.code || n.rejectedBy;
    const key = `${n.rejectedBy}\u0000${reason}`;
    const g = groups.get(key);
    if (g) g.count++;
    else groups.set(key, { filter: n.rejectedBy, reason, count: 1 });
  }
  const reasons = [...groups.values()].sort((a, b) => b.count - a.count || a.reason.localeCompare(b.reason));
  const total = nodes.length;
  const head = `${fit} of ${total} node${total === 1 ? '' : 's'} fit`;
  const text = reasons.length === 0 ? head : `${head}: ${reasons.map((r) => `${r.count} ${shortReason(r.reason)}`).join(', ')}`;
  return { fit, total, reasons, text };
}

/** "node lacks memory" reads better after a count as "lack memory"; "node is cordoned" as "cordoned". */
export function shortReason(reason: string): string {
  return reason
    .replace(/^node is not /, 'not ')
    .replace(/^node is /, '')
    .replace(/^node lacks /, 'lack ')
    .replace(/^node has /, 'have ')
    .replace(/^node /, '');
}

/** Fitting nodes first, best score first; then rejected ones grouped by filter, by name. */
export function orderExplainedNodes<T extends ExplainedNode>(nodes: readonly T[]): T[] {
  return [...nodes].sort((a, b) => {
    const ra = a.rejectedBy ? 1 : 0;
    const rb = b.rejectedBy ? 1 : 0;
    if (ra !== rb) return ra - rb;
    if (!a.rejectedBy) return b.total - a.total || a.node.name.localeCompare(b.node.name);
    return (a.rejectedBy ?? '').localeCompare(b.rejectedBy ?? '') || a.node.name.localeCompare(b.node.name);
  });
}

/** A rejection count as explainPlacement answers it. */
export interface Rejection {
  filter: string;
  code: string;
  count: number;
}

/**
 * Summarises an explanation's rejection counts, for viewers who get no per-node rows (tenant
 * members may not read the fabric): "8 nodes turned away: 7 ZONE_ANTI_AFFINITY (ZonePolicy), 1
 * UNSCHEDULABLE (Schedulable)"; clusters the policy excluded are counted apart.
 */
export function summarizeRejections(rejections: readonly Rejection[]): { reasons: ReasonCount[]; text: string } {
  const reasons = rejections
    .filter((r) => r.count > 0)
    .map((r) => ({ filter: r.filter, reason: r.code, count: r.count }))
    .sort((a, b) => b.count - a.count || a.reason.localeCompare(b.reason));
  const nodes = reasons.filter((r) => r.reason !== 'CLUSTER_EXCLUDED');
  const clusters = reasons.find((r) => r.reason === 'CLUSTER_EXCLUDED')?.count ?? 0;
  const n = nodes.reduce((sum, r) => sum + r.count, 0);
  const parts: string[] = [];
  if (n > 0) parts.push(`${n} node${n === 1 ? '' : 's'} turned away: ${nodes.map((r) => `${r.count} ${r.reason} (${r.filter})`).join(', ')}`);
  if (clusters > 0) parts.push(`${clusters} cluster${clusters === 1 ? '' : 's'} excluded by the policy`);
  return { reasons, text: parts.length ? parts.join('; ') : 'no node was turned away' };
}
