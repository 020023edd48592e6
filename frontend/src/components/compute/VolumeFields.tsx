// The volumes part of the create-VM form: new volumes (size in GiB and storage type) created
// with the VM and attached to it (createVolume with virtualMachineID, once the VM exists).
import type { VolumeType } from '../../gql/graphql';

/** One new volume of the create-VM form. */
export interface NewVolume {
  sizeGB: string;
  type: VolumeType;
}

const volumeTypes: VolumeType[] = ['SSD', 'NVME', 'HDD'];

export function VolumeFields({ value, onChange }: { value: NewVolume[]; onChange: (v: NewVolume[]) => void }) {
  const set = (i: number, v: Partial<NewVolume>) => onChange(value.map((x, j) => (j === i ? { ...x, ...v } : x)));
  return (
    <fieldset className="fields" aria-label="Volumes">
      <legend>Volumes <span className="muted small">(created on the VM's node, attached after the root disk)</span></legend>
      {value.map((v, i) => (
        <div key={i} className="volume-row">
          <label>
            Volume {i + 1} size (GiB)
            <input type="number" min={1} value={v.sizeGB} onChange={(e) => set(i, { sizeGB: e.target.value })} required />
          </label>
          <label>
            Type
            <select value={v.type} onChange={(e) => set(i, { type: e.target.value as VolumeType })}>
              {volumeTypes.map((t) => <option key={t} value={t}>{t}</option>)}
            </select>
          </label>
          <button type="button" onClick={() => onChange(value.filter((_, j) => j !== i))}>Remove volume {i + 1}</button>
        </div>
      ))}
      <div>
        <button type="button" onClick={() => onChange([...value, { sizeGB: '10', type: 'SSD' }])}>Add a volume</button>
      </div>
    </fieldset>
  );
}
