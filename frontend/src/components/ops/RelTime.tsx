// A relative time ("5 min ago") with the exact date-time as its tooltip.
import { dateTime, relativeTime } from '../../lib/ops/format';

export function RelTime({ iso }: { iso: string | null | undefined }) {
  return <time dateTime={iso ?? undefined} title={dateTime(iso)}>{relativeTime(iso)}</time>;
}
