/** A placeholder while a query runs. */
export function Loading({ what = 'Loading' }: { what?: string }) {
  return <div className="loading" aria-busy="true">{what}…</div>;
}
