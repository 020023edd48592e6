// The placement-rule fields of the VM and region service forms: clusters, node names, node
// label (anti-)affinities and zone rules (see lib/compute/policy.ts for how they are sent).
import { useState } from 'react';
import { parseList, type PolicyForm, type ZoneRuleRow } from '../../lib/compute/policy';
import './compute.css';

interface Props {
  value: PolicyForm;
  onChange: (v: PolicyForm) => void;
  clusters: { id: string; name: string }[];
}

const labelFields: { key: keyof PolicyForm; label: string }[] = [
  { key: 'clusterLabels', label: 'Cluster labels' },
  { key: 'hardAffinities', label: 'Node labels required' },
  { key: 'hardAntiAffinities', label: 'Spread over label keys, one VM per value (anti-affinity)' },
  { key: 'softAffinities', label: 'Node labels preferred' },
  { key: 'softAntiAffinities', label: 'Spread over label keys, evenly (soft anti-affinity)' },
  { key: 'hardExclusions', label: 'Node labels forbidden' },
  { key: 'softExclusions', label: 'Node labels avoided' },
];

/** The schedule policy fieldset. */
export function SchedulePolicyFields({ value, onChange, clusters }: Props) {
  const [clusterText, setClusterText] = useState(value.clusterNames.join(', '));
  const set = (patch: Partial<PolicyForm>) => onChange({ ...value, ...patch });
  const setZone = (i: number, patch: Partial<ZoneRuleRow>) =>
    set({ zones: value.zones.map((z, j) => (j === i ? { ...z, ...patch } : z)) });
  return (
    <fieldset className="form-section">
      <legend>Schedule policy</legend>
      <div className="fields">
        {clusters.length > 0 ? (
          <label>
            Clusters (none: any)
            <select
              multiple
              size={Math.min(4, Math.max(2, clusters.length))}
              value={value.clusterNames}
              onChange={(e) => set({ clusterNames: [...e.target.selectedOptions].map((o) => o.value) })}
            >
              {clusters.map((c) => (
                <option key={c.id} value={c.name}>{c.name}</option>
              ))}
            </select>
          </label>
        ) : (
          <label>
            Cluster names (none: any)
            <input value={clusterText} placeholder="cluster-a, cluster-b" onChange={(e) => { setClusterText(e.target.value); set({ clusterNames: parseList(e.target.value) }); }} />
          </label>
        )}
        <label>
          Node names
          <input value={value.nodeNames} placeholder="node-a, node-b" onChange={(e) => set({ nodeNames: e.target.value })} />
        </label>
        {labelFields.map((f) => (
          <label key={f.key}>
            {f.label}
            <input value={value[f.key] as string} placeholder="key=value, key2=value2" onChange={(e) => set({ [f.key]: e.target.value })} />
          </label>
        ))}
      </div>
      <div>
        {value.zones.map((z, i) => (
          <div className="zone-row" key={i}>
            <label>
              Zone kind
              <select value={z.kind} onChange={(e) => setZone(i, { kind: e.target.value as ZoneRuleRow['kind'] })}>
                <option value="POWER">power</option>
                <option value="RACK">rack</option>
                <option value="NETWORK">network</option>
              </select>
            </label>
            <label>
              Mode
              <select value={z.mode} onChange={(e) => setZone(i, { mode: e.target.value as ZoneRuleRow['mode'] })}>
                <option value="ANTI_AFFINITY">spread (anti-affinity)</option>
                <option value="AFFINITY">together (affinity)</option>
              </select>
            </label>
            <label>
              Zone (optional)
              <input value={z.zone} onChange={(e) => setZone(i, { zone: e.target.value })} />
            </label>
            <button type="button" onClick={() => set({ zones: value.zones.filter((_, j) => j !== i) })}>Remove</button>
          </div>
        ))}
        <button type="button" style={{ marginTop: '.5rem' }} onClick={() => set({ zones: [...value.zones, { kind: 'RACK', mode: 'ANTI_AFFINITY', zone: '' }] })}>
          Add zone rule
        </button>
      </div>
    </fieldset>
  );
}
