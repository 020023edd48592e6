// A relative time ("5 min ago") with the exact date-time as its tooltip.
import { formatDateTime, relativeTime } from '../../lib/format';

export function RelTime({ iso }: { iso: string | null | undefined }) {
  return <time dateTime={iso ?? undefined} title={formatDateTime(iso)}>{relativeTime(iso)}</time>;
}
