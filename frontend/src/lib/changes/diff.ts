// The before/after diff of an audit log row: its two JSON snapshots flattened to dotted paths
// ("labels.zone", "disks.0.sizeGB") and compared field by field.

/** One field of a change: its value before and after (undefined: absent on that side). */
export interface FieldChange {
  path: string;
  before?: string;
  after?: string;
  kind: 'added' | 'removed' | 'changed' | 'same';
}

/** Fields that change on every write and say nothing about the change. */
const noise = new Set(['updated_at', 'updatedAt']);

/** Flattens v into path → JSON text of each leaf. */
export function flatten(v: unknown, prefix = '', out: Map<string, string> = new Map()): Map<string, string> {
  if (v !== null && typeof v === 'object' && !(Array.isArray(v) && v.length === 0) && Object.keys(v).length > 0) {
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) flatten(x, prefix ? `${prefix}.${k}` : k, out);
  } else if (prefix) {
    out.set(prefix, typeof v === 'string' ? v : JSON.stringify(v));
  }
  return out;
}

/** The fields of before and after, changed ones first unless all is set, sorted by path. */
export function diff(before: unknown, after: unknown, all = false): FieldChange[] {
  const b = flatten(before ?? {});
  const a = flatten(after ?? {});
  const paths = [...new Set([...b.keys(), ...a.keys()])].filter((p) => !noise.has(p.split('.').pop() ?? p)).sort();
  const rows: FieldChange[] = paths.map((path) => {
    const x = b.get(path);
    const y = a.get(path);
    const kind = x === undefined ? 'added' : y === undefined ? 'removed' : x === y ? 'same' : 'changed';
    return { path, before: x, after: y, kind };
  });
  return all ? rows : rows.filter((r) => r.kind !== 'same');
}
