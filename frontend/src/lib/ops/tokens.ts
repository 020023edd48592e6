// API token states for the token page: active, expired or revoked.

export type TokenState = 'ACTIVE' | 'EXPIRED' | 'REVOKED';

/** The state of a token from its revokedAt and expiresAt at time now. */
export function tokenState(t: { revokedAt?: string | null; expiresAt?: string | null }, now: number = Date.now()): TokenState {
  if (t.revokedAt) return 'REVOKED';
  if (t.expiresAt && Date.parse(t.expiresAt) <= now) return 'EXPIRED';
  return 'ACTIVE';
}

/** An expiry in days from now as the API's Time (RFC 3339), or null for "never" (days ≤ 0 or not a number). */
export function expiryFromDays(days: number, now: number = Date.now()): string | null {
  if (!Number.isFinite(days) || days <= 0) return null;
  return new Date(now + days * 86400_000).toISOString();
}
