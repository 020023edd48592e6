// The signed-in user's bearer token, kept in localStorage so a reload stays signed in.
const KEY = 'virtflow.token';

type Listener = (token: string | null) => void;
const listeners = new Set<Listener>();

/** The current token, or null when signed out. */
export function getToken(): string | null {
  try {
    return localStorage.getItem(KEY);
  } catch {
    return null;
  }
}

let signOutReason = '';

/** Why the user was last signed out without asking (e.g. a rejected token); read once. */
export function takeSignOutReason(): string {
  const r = signOutReason;
  signOutReason = '';
  return r;
}

/** Stores (or with null, forgets) the token and tells every listener; reason says why a
 * sign-out happened that the user did not ask for. */
export function setToken(token: string | null, reason = ''): void {
  signOutReason = token ? '' : reason;
  try {
    if (token) localStorage.setItem(KEY, token);
    else localStorage.removeItem(KEY);
  } catch {
    // storage disabled: the token lives only as long as the page
  }
  listeners.forEach((l) => l(token));
}

/** Calls l whenever the token changes; returns the unsubscribe function. */
export function onTokenChange(l: Listener): () => void {
  listeners.add(l);
  return () => listeners.delete(l);
}
