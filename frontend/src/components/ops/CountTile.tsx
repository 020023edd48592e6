// One number on the overview, linking to the list it counts (e.g. nodes NOT_READY → /nodes?status=NOT_READY).
import { Link } from 'react-router';
import { formatNumber } from '../../lib/format';
import './ops.css';

export function CountTile({ label, count, to, tone, testid }: { label: string; count: number | undefined; to: string; tone?: string; testid?: string }) {
  return (
    <Link to={to} className={`count-tile count-${tone ?? 'idle'}`} data-testid={testid}>
      <span className="count-n">{count === undefined ? '…' : formatNumber(count)}</span>
      <span className="count-label">{label}</span>
    </Link>
  );
}
