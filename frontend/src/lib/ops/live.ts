// Merging live subscription events over loaded rows: the newer record (by updatedAt) wins, so a
// stale event never hides what a mutation or refetch just loaded.

/** base with the fields of live laid over it when live is at least as new; base otherwise. */
export function overlay<B extends { updatedAt?: string | null }, L extends { updatedAt?: string | null }>(base: B, live: L | undefined): B {
  if (!live) return base;
  const lt = live.updatedAt ? Date.parse(live.updatedAt) : NaN;
  const bt = base.updatedAt ? Date.parse(base.updatedAt) : NaN;
  if (!Number.isNaN(bt) && !Number.isNaN(lt) && lt < bt) return base;
  return { ...base, ...live };
}
