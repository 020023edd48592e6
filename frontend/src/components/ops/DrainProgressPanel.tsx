// The node's drain progress from its drain fields: state, message and time left before it fails.
import { Link } from 'react-router';
import { drainProgress, type DrainFields } from '../../lib/ops/drain';
import { StatusBadge } from '../StatusBadge';

export function DrainProgressPanel({ node }: { node: DrainFields }) {
  const p = drainProgress(node);
  if (!p.state) return null;
  return (
    <div className="small" style={{ marginTop: '.75rem' }} data-testid="drain-progress" aria-live="polite">
      <strong>Drain:</strong> <StatusBadge status={p.state === 'DRAINED' ? 'COMPLETED' : p.state} />{' '}
      {p.message && <span>{p.message}</span>}
      {p.secondsLeft !== null && <span className="muted"> · fails in {Math.ceil(p.secondsLeft / 60)} min if not done</span>}
      {p.active && <span className="muted"> · updating every 2 s</span>}
      {p.unmovable.length > 0 && (
        <div data-testid="drain-unmovable">
          <strong>Cannot move ({p.unmovable.length}):</strong>
          <ul>
            {p.unmovable.map((u) => (
              <li key={u.vmID}><Link to={`/vms/${u.vmID}`}>{u.vmName}</Link>: {u.reason}</li>
            ))}
          </ul>
        </div>
      )}
    </div>
  );
}
