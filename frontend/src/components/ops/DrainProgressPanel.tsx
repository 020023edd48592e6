// The node's drain progress from its drain fields: state, message and time left before it fails.
import { drainProgress } from '../../lib/ops/drain';
import { StatusBadge } from '../StatusBadge';

export function DrainProgressPanel({ node }: { node: { drainState?: string | null; drainMessage?: string | null; drainDeadline?: string | null } }) {
  const p = drainProgress(node);
  if (!p.state) return null;
  return (
    <div className="small" style={{ marginTop: '.75rem' }} data-testid="drain-progress" aria-live="polite">
      <strong>Drain:</strong> <StatusBadge status={p.state === 'DRAINED' ? 'COMPLETED' : p.state} />{' '}
      {p.message && <span>{p.message}</span>}
      {p.secondsLeft !== null && <span className="muted"> · fails in {Math.ceil(p.secondsLeft / 60)} min if not done</span>}
      {p.active && <span className="muted"> · updating every 2 s</span>}
    </div>
  );
}
