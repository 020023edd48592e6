// Where a rack stands, as the rack page and the floor plan say it.
/** Where a rack stands, for its header: "row B, position 3 · ", the parts it has, or nothing. */
export function rackPlace(row?: string | null, position?: number | null): string {
  const parts: string[] = [];
  if (row && row.trim()) parts.push(`row ${row.trim()}`);
  if (position) parts.push(`position ${position}`);
  return parts.length ? parts.join(', ') + ' · ' : '';
}
