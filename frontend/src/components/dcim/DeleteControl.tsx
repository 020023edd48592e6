// Deleting a record: a button, a confirmation naming the record, and when the API refuses
// because other records still point at it (CONFLICT with extensions.dependents), the list of
// those dependents.
import { useState } from 'react';
import type { CombinedError } from 'urql';
import { Problem } from '../Problem';

interface Dependent {
  edge: string;
  count: number;
}

/** The dependents the API named in a CONFLICT, if any. */
export function dependentsOf(err: CombinedError | undefined | null): Dependent[] {
  for (const e of err?.graphQLErrors ?? []) {
    const d = e.extensions?.dependents;
    if (Array.isArray(d)) return d.filter((x): x is Dependent => typeof x?.edge === 'string' && typeof x?.count === 'number');
  }
  return [];
}

interface Props {
  /** What is deleted, e.g. "rack R12". */
  what: string;
  /** Runs the delete mutation. */
  onDelete(): Promise<{ error?: CombinedError }>;
  /** Called after a successful delete (e.g. navigate away). */
  onDone(): void;
}

export function DeleteControl({ what, onDelete, onDone }: Props) {
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<CombinedError | undefined>();
  const deps = dependentsOf(error);

  async function run() {
    setBusy(true);
    const r = await onDelete();
    setBusy(false);
    setConfirming(false);
    if (r.error) setError(r.error);
    else onDone();
  }
  return (
    <div className="delete-control">
      {!confirming ? (
        <button type="button" className="danger" onClick={() => { setError(undefined); setConfirming(true); }}>
          Delete
        </button>
      ) : (
        <span role="group" aria-label="Confirm delete">
          Delete {what}?{' '}
          <button type="button" className="danger" onClick={run} disabled={busy}>
            Yes, delete
          </button>{' '}
          <button type="button" onClick={() => setConfirming(false)}>
            Cancel
          </button>
        </span>
      )}
      {deps.length > 0 && (
        <div className="message message-error" role="alert" data-testid="dependents">
          Cannot delete {what}: still referenced by
          <ul>
            {deps.map((d) => (
              <li key={d.edge}>
                {d.count} {d.edge}
              </li>
            ))}
          </ul>
          Remove or move them first.
        </div>
      )}
      {deps.length === 0 && <Problem error={error} />}
    </div>
  );
}
