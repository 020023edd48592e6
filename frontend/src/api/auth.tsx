// Who is signed in: the token (see token.ts) and the user it belongs to (the `me` query).
import { createContext, useContext, useEffect, useState, type ReactNode } from 'react';
import { useQuery } from 'urql';
import { graphql } from '../gql';
import type { MeQuery } from '../gql/graphql';
import { getToken, onTokenChange, setToken } from './token';
import { resetWebsocket } from './client';

const MeDocument = graphql(`
  query Me {
    me {
      id
      username
      displayName
      roleBindings(first: 100) {
        edges { node { id role tenant { id name } } }
      }
    }
  }
`);

/** The signed-in user as the dashboard knows it. */
export type Me = MeQuery['me'];

interface AuthState {
  token: string | null;
  me: Me | null;
  /** True when the user holds the admin or operator role anywhere global. */
  isOperator: boolean;
  signIn(token: string): void;
  signOut(): void;
}

const AuthContext = createContext<AuthState | null>(null);

/** Provides the auth state to the app; re-reads `me` when the token changes. */
export function AuthProvider({ children }: { children: ReactNode }) {
  const [token, setTok] = useState<string | null>(getToken());
  useEffect(() => onTokenChange((t) => { resetWebsocket(); setTok(t); }), []);
  const [{ data }] = useQuery({ query: MeDocument, pause: !token, requestPolicy: 'network-only', context: CONTEXT });
  const me = token && data ? data.me : null;
  const isOperator = !!me?.roleBindings.edges?.some((e) => !!e?.node && !e.node.tenant && (e.node.role === 'ADMIN' || e.node.role === 'OPERATOR'));
  const value: AuthState = {
    token,
    me,
    isOperator,
    signIn: (t) => setToken(t),
    signOut: () => setToken(null),
  };
  return <AuthContext.Provider value={value}>{children}</AuthContext.Provider>;
}

const CONTEXT = { additionalTypenames: ['User'] };

/** The auth state; only inside AuthProvider. */
export function useAuth(): AuthState {
  const a = useContext(AuthContext);
  if (!a) throw new Error('useAuth outside AuthProvider');
  return a;
}
