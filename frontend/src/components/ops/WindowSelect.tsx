// A "when" filter: any time or one of the windows in lib/ops/window.ts.
import { windows } from '../../lib/ops/window';

export function WindowSelect({ label, value, onChange }: { label: string; value: string; onChange: (v: string) => void }) {
  return (
    <label>
      {label}
      <select value={value} onChange={(e) => onChange(e.target.value)}>
        <option value="">any time</option>
        {windows.map((w) => <option key={w.key} value={w.key}>{w.label}</option>)}
      </select>
    </label>
  );
}
