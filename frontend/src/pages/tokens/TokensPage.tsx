// The signed-in user's API tokens (me.apiTokens, so every user sees exactly their own): list (active, expired, revoked), create one — its secret is
// shown exactly once with a copy button — and revoke with confirmation.
import { useState } from 'react';
import { useMutation, useQuery } from 'urql';
import { graphql } from '../../gql';
import { Problem } from '../../components/Problem';
import { Loading } from '../../components/Loading';
import { Pager, usePager } from '../../components/Pager';
import { RelTime } from '../../components/ops/RelTime';
import { CreateTokenForm } from '../../components/ops/CreateTokenForm';
import { NewTokenSecret } from '../../components/ops/NewTokenSecret';
import { tokenState } from '../../lib/ops/tokens';
import { getToken } from '../../api/token';
import '../../components/ops/ops.css';

const TokensDocument = graphql(`
  query MyAPITokens($first: Int, $after: Cursor, $last: Int, $before: Cursor) {
    me {
      id
      apiTokens(first: $first, after: $after, last: $last, before: $before, where: { kind: API }, orderBy: { field: CREATED_AT, direction: DESC }) {
        totalCount
        pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
        edges { node { id name prefix scope createdAt expiresAt lastUsedAt revokedAt allowedCidrs tenant { id name } } }
      }
    }
  }
`);

/** An empty list holds no APIToken, so name the type for urql's cache to refetch after a create. */
const TOKENS_CONTEXT = { additionalTypenames: ['APIToken'] };

const RevokeDocument = graphql(`
  mutation RevokeAPIToken($id: ID!) {
    revokeAPIToken(id: $id) { id revokedAt }
  }
`);

export default function TokensPage() {
  const pager = usePager(25);
  const [{ data, error, fetching }] = useQuery({ query: TokensDocument, variables: { ...pager.vars }, context: TOKENS_CONTEXT });
  const [revoke, doRevoke] = useMutation(RevokeDocument);
  const [secret, setSecret] = useState<{ token: string; name: string } | null>(null);

  const current = getToken() ?? '';
  const isCurrent = (prefix: string) => prefix.length >= 6 && !prefix.includes('...') && current.startsWith(prefix);

  async function onRevoke(id: string, name: string, mine: boolean) {
    const warn = mine ? ' You are signed in with it: revoking it signs you out.' : '';
    if (!window.confirm(`Revoke the token "${name}"? Anything using it stops working at once.${warn}`)) return;
    await doRevoke({ id });
  }

  const rows = data?.me.apiTokens.edges?.flatMap((e) => (e?.node ? [e.node] : [])) ?? [];
  return (
    <div>
      <h1>API tokens</h1>
      <p className="muted">Tokens let scripts and tools call the API as you: send <code>Authorization: Bearer &lt;token&gt;</code> to <code>/query</code>.</p>
      {secret ? (
        <NewTokenSecret name={secret.name} token={secret.token} onDone={() => setSecret(null)} />
      ) : (
        <CreateTokenForm onCreated={(token, name) => setSecret({ token, name })} />
      )}
      <h2>Your tokens</h2>
      <Problem error={error ?? revoke.error} />
      {!data && fetching ? <Loading /> : null}
      {data && rows.length === 0 && <p className="muted">You have no API tokens yet.</p>}
      {rows.length > 0 && (
        <table className="ops-table" aria-label="API tokens">
          <thead>
            <tr><th>Name</th><th>Prefix</th><th>Scope</th><th>Tenant</th><th>State</th><th>Created</th><th>Expires</th><th>Last used</th><th /></tr>
          </thead>
          <tbody>
            {rows.map((t) => {
              const state = tokenState(t);
              return (
                <tr key={t.id} data-testid={`token-${t.name}`}>
                  <td>{t.name}{isCurrent(t.prefix) && <span className="muted small"> (this session)</span>}</td>
                  <td><code>{t.prefix}…</code></td>
                  <td>{t.scope === 'READ_WRITE' ? 'read & write' : 'read only'}</td>
                  <td>{t.tenant ? t.tenant.name : <span className="muted">all</span>}</td>
                  <td><span className={`badge badge-${state === 'ACTIVE' ? 'ok' : state === 'EXPIRED' ? 'idle' : 'bad'}`} data-status={state}>{state.toLowerCase()}</span></td>
                  <td className="nowrap"><RelTime iso={t.createdAt} /></td>
                  <td className="nowrap">{t.expiresAt ? <RelTime iso={t.expiresAt} /> : <span className="muted">never</span>}</td>
                  <td className="nowrap"><RelTime iso={t.lastUsedAt} /></td>
                  <td>
                    {state === 'REVOKED' ? (
                      <span className="muted small">revoked <RelTime iso={t.revokedAt} /></span>
                    ) : (
                      <button type="button" className="danger" disabled={revoke.fetching} onClick={() => onRevoke(t.id, t.name, isCurrent(t.prefix))}>Revoke</button>
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      <Pager pageInfo={data?.me.apiTokens.pageInfo} total={data?.me.apiTokens.totalCount} pager={pager} />
    </div>
  );
}
