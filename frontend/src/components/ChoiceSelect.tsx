// A labelled <select> over named API objects (tenants, regions, flavors, images, ...) with a
// leading empty option: the filter and form field that list pages and create forms share.
import type { ReactNode } from 'react';

/** An object the API names: what ChoiceSelect offers. */
export interface Named {
  id: string;
  name: string;
}

/** Props of ChoiceSelect. */
export interface ChoiceSelectProps<T extends Named> {
  /** The field's label. */
  label: string;
  /** The chosen id, or '' for the empty option. */
  value: string;
  onChange: (id: string) => void;
  options: readonly T[];
  /** The text of the empty option: 'any' in a filter, 'choose…' or 'none' in a form. */
  empty: string;
  required?: boolean;
  /** What an option shows; its name by default. */
  describe?: (o: T) => ReactNode;
  /** Options that cannot be chosen (shown greyed). */
  disabled?: (o: T) => boolean;
}

/** A labelled select of one of options by id, with an empty first option. */
export function ChoiceSelect<T extends Named>({ label, value, onChange, options, empty, required, describe, disabled }: ChoiceSelectProps<T>) {
  return (
    <label>
      {label}
      <select value={value} onChange={(e) => onChange(e.target.value)} required={required}>
        <option value="">{empty}</option>
        {options.map((o) => (
          <option key={o.id} value={o.id} disabled={disabled?.(o)}>{describe ? describe(o) : o.name}</option>
        ))}
      </select>
    </label>
  );
}

/** Props of StatusFilter. */
export interface StatusFilterProps {
  value: string;
  onChange: (status: string) => void;
  /** The statuses other than DELETED, in the order to offer them. */
  statuses: readonly string[];
  /** What an option shows; the status in lower case by default. */
  describe?: (status: string) => string;
}

/**
 * The status filter of the VM and region-service lists: '' means every status but DELETED,
 * which is offered last on its own.
 */
export function StatusFilter({ value, onChange, statuses, describe }: StatusFilterProps) {
  return (
    <label>
      Status
      <select value={value} onChange={(e) => onChange(e.target.value)}>
        <option value="">any (not deleted)</option>
        {statuses.map((s) => <option key={s} value={s}>{describe ? describe(s) : s.toLowerCase()}</option>)}
        <option value="DELETED">deleted</option>
      </select>
    </label>
  );
}
