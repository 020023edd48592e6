// The placement rules a user types into a form, turned into the API's SchedulePolicyInput:
// label maps as "key=value, key2=value2", name lists as "a, b", zone rules as rows.

/** One zone rule row of the form. */
export interface ZoneRuleRow {
  kind: 'POWER' | 'RACK' | 'NETWORK';
  mode: 'AFFINITY' | 'ANTI_AFFINITY';
  zone: string;
}

/** The form's placement fields, all as typed. */
export interface PolicyForm {
  clusterNames: string[];
  clusterLabels: string;
  nodeNames: string;
  hardAffinities: string;
  /** Label keys to spread the group over, one VM per value ("rack, power"). */
  hardAntiAffinities: string;
  softAffinities: string;
  /** Label keys to spread the group over as evenly as possible. */
  softAntiAffinities: string;
  /** "never on nodes with key=value" */
  hardExclusions: string;
  /** "rather not on nodes with key=value" */
  softExclusions: string;
  zones: ZoneRuleRow[];
}

export const emptyPolicy: PolicyForm = {
  clusterNames: [],
  clusterLabels: '',
  nodeNames: '',
  hardAffinities: '',
  hardAntiAffinities: '',
  softAffinities: '',
  softAntiAffinities: '',
  hardExclusions: '',
  softExclusions: '',
  zones: [],
};

/** The API's SchedulePolicyInput (the generated type's shape, kept structural here). */
export interface SchedulePolicyValue {
  clusterNames?: string[];
  clusterLabels?: Record<string, string>;
  nodeNames?: string[];
  nodeLabelHardAffinities?: Record<string, string>;
  nodeLabelHardAntiAffinities?: Record<string, string>;
  nodeLabelSoftAffinities?: Record<string, string>;
  nodeLabelSoftAntiAffinities?: Record<string, string>;
  nodeLabelHardExclusions?: Record<string, string>;
  nodeLabelSoftExclusions?: Record<string, string>;
  zones?: { kind: string; mode: string; zone?: string }[];
}

/** Parses "a=1, b=2" (commas or new lines) into {a: '1', b: '2'}; throws naming a bad entry. */
export function parseLabels(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of text.split(/[,\n]/)) {
    const p = part.trim();
    if (!p) continue;
    const eq = p.indexOf('=');
    if (eq <= 0) throw new Error(`"${p}" is not key=value`);
    out[p.slice(0, eq).trim()] = p.slice(eq + 1).trim();
  }
  return out;
}

/** Parses "a, b c" into ['a', 'b', 'c']. */
export function parseList(text: string): string[] {
  return text.split(/[,\s]+/).map((s) => s.trim()).filter(Boolean);
}

const nonEmpty = (o: Record<string, string>) => (Object.keys(o).length > 0 ? o : undefined);

/** "rack, power" as the API's anti-affinity map: each key a topology key, values unused. */
export function spreadKeys(text: string): Record<string, string> {
  return Object.fromEntries(parseList(text).map((k) => [k, '']));
}

/** The policy to send, or undefined when the form sets no rule. Throws on a malformed label list. */
export function buildPolicy(f: PolicyForm): SchedulePolicyValue | undefined {
  const p: SchedulePolicyValue = {};
  if (f.clusterNames.length) p.clusterNames = f.clusterNames;
  const set = <K extends keyof SchedulePolicyValue>(k: K, v: SchedulePolicyValue[K] | undefined) => {
    if (v !== undefined) p[k] = v;
  };
  set('clusterLabels', nonEmpty(parseLabels(f.clusterLabels)));
  const nodes = parseList(f.nodeNames);
  if (nodes.length) p.nodeNames = nodes;
  set('nodeLabelHardAffinities', nonEmpty(parseLabels(f.hardAffinities)));
  set('nodeLabelHardAntiAffinities', nonEmpty(spreadKeys(f.hardAntiAffinities)));
  set('nodeLabelSoftAffinities', nonEmpty(parseLabels(f.softAffinities)));
  set('nodeLabelSoftAntiAffinities', nonEmpty(spreadKeys(f.softAntiAffinities)));
  set('nodeLabelHardExclusions', nonEmpty(parseLabels(f.hardExclusions)));
  set('nodeLabelSoftExclusions', nonEmpty(parseLabels(f.softExclusions)));
  if (f.zones.length) {
    p.zones = f.zones.map((z) => (z.zone.trim() ? { kind: z.kind, mode: z.mode, zone: z.zone.trim() } : { kind: z.kind, mode: z.mode }));
  }
  return Object.keys(p).length ? p : undefined;
}

/** "a=1, b=2" for a label map (for showing a stored policy). */
export function formatLabels(labels: Record<string, string> | null | undefined): string {
  if (!labels) return '';
  return Object.entries(labels).map(([k, v]) => `${k}=${v}`).join(', ');
}

/** One line per rule of a stored policy, e.g. ["Clusters: c1, c2", "Zones: rack anti-affinity"]; empty when it sets none. */
export function describePolicy(p: object | null | undefined): string[] {
  if (!p) return [];
  const q = p as Record<string, unknown>;
  const out: string[] = [];
  const list = (k: string, label: string) => {
    const v = q[k] as string[] | null | undefined;
    if (v?.length) out.push(`${label}: ${v.join(', ')}`);
  };
  const labels = (k: string, label: string) => {
    const v = q[k] as Record<string, string> | null | undefined;
    if (v && Object.keys(v).length) out.push(`${label}: ${formatLabels(v)}`);
  };
  list('clusterNames', 'Clusters');
  labels('clusterLabels', 'Cluster labels');
  list('nodeNames', 'Nodes');
  labels('nodeLabelHardAffinities', 'Required node labels');
  const keys = (k: string, label: string) => {
    const v = q[k] as Record<string, string> | null | undefined;
    if (v && Object.keys(v).length) out.push(`${label}: ${Object.keys(v).join(', ')}`);
  };
  keys('nodeLabelHardAntiAffinities', 'Spread over (one per value)');
  labels('nodeLabelSoftAffinities', 'Preferred node labels');
  keys('nodeLabelSoftAntiAffinities', 'Spread over (evenly)');
  labels('nodeLabelHardExclusions', 'Forbidden node labels');
  labels('nodeLabelSoftExclusions', 'Avoided node labels');
  const zones = q.zones as { kind: string; mode: string; zone?: string | null }[] | null | undefined;
  if (zones?.length) {
    out.push(`Zones: ${zones.map((z) => `${z.kind.toLowerCase()} ${z.mode.toLowerCase().replace('_', '-')}${z.zone ? ` ${z.zone}` : ''}`).join('; ')}`);
  }
  return out;
}
