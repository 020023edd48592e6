// /people: users with their tenants and role bindings. Admins create users, grant and revoke
// roles, set passwords and create API tokens for a user; tenant admins see the users of their
// tenants and grant or revoke roles in them (the API refuses anything beyond that, and the
// page says why).
import { useMemo, useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { useMutation, useQuery } from 'urql';
import { graphql } from '../../gql';
import type { PeopleQuery, RoleBindingRole } from '../../gql/graphql';
import { Message, Problem } from '../../components/Problem';
import { Loading } from '../../components/Loading';
import { StatusBadge } from '../../components/StatusBadge';
import { NewTokenSecret } from '../../components/ops/NewTokenSecret';
import { HistoryLink } from '../../components/dcim/HistoryLink';
import { RelTime } from '../../components/ops/RelTime';
import { enumLabel } from '../../components/dcim/forms';
import '../../components/ops/ops.css';

const PeopleDocument = graphql(`
  query People($where: UserWhereInput) {
    users(first: 100, orderBy: { field: USERNAME }, where: $where) {
      totalCount
      edges {
        node {
          id
          username
          displayName
          email
          status
          lastLoginAt
          tenants(first: 10) { edges { node { id name } } }
          roleBindings(first: 20) { edges { node { id role domain tenant { id name } } } }
        }
      }
    }
    tenants(first: 200, orderBy: { field: NAME }) { edges { node { id name } } }
  }
`);
const CreateUserDocument = graphql(`
  mutation CreateUser($input: CreateUserInput!) {
    createUser(input: $input) { id username }
  }
`);
const GrantRoleDocument = graphql(`
  mutation GrantRole($input: GrantRoleInput!) {
    grantRole(input: $input) { id role domain }
  }
`);
const RevokeRoleDocument = graphql(`
  mutation RevokeRole($id: ID!) {
    revokeRole(id: $id)
  }
`);
const SetPasswordDocument = graphql(`
  mutation SetUserPassword($id: ID!, $password: String!) {
    setUserPassword(id: $id, password: $password) { id }
  }
`);
const CreateUserTokenDocument = graphql(`
  mutation CreateUserToken($input: CreateAPITokenInput!) {
    createAPIToken(input: $input) { token apiToken { id name } }
  }
`);

type User = NonNullable<NonNullable<NonNullable<PeopleQuery['users']['edges']>[number]>['node']>;
type Tenant = { id: string; name: string };

const ROLES: RoleBindingRole[] = ['ADMIN', 'OPERATOR', 'MAINTAINER', 'VIEWER', 'TENANT_ADMIN', 'TENANT_MEMBER'];
const tenantRole = (r: string) => r.startsWith('TENANT_');

function nodes<T>(edges: readonly ({ node?: T | null } | null)[] | null | undefined): T[] {
  return edges?.flatMap((e) => (e?.node ? [e.node] : [])) ?? [];
}

function NewUserForm({ tenants, onDone }: { tenants: Tenant[]; onDone(): void }) {
  const [r, create] = useMutation(CreateUserDocument);
  const [grant, grantRole] = useMutation(GrantRoleDocument);
  const [username, setUsername] = useState('');
  const [displayName, setDisplayName] = useState('');
  const [email, setEmail] = useState('');
  const [tenant, setTenant] = useState('');
  const [role, setRole] = useState<RoleBindingRole | ''>('TENANT_MEMBER');
  const [ok, setOk] = useState('');
  async function submit(e: FormEvent) {
    e.preventDefault();
    setOk('');
    const res = await create({
      input: { username: username.trim(), displayName: displayName.trim() || undefined, email: email.trim() || undefined, tenantIDs: tenant ? [tenant] : undefined },
    });
    if (!res.data) return;
    const id = res.data.createUser.id;
    if (role && (!tenantRole(role) || tenant)) {
      const g = await grantRole({ input: { userID: id, role, tenantID: tenantRole(role) ? tenant : undefined } });
      if (g.error) return;
    }
    setOk(`User ${res.data.createUser.username} created.`);
    setUsername('');
    onDone();
  }
  return (
    <form className="card" onSubmit={submit} aria-label="New user">
      <h3 style={{ marginTop: 0 }}>New user</h3>
      <div className="fields">
        <label>
          Username
          <input value={username} required onChange={(e) => setUsername(e.target.value)} />
        </label>
        <label>
          Display name
          <input value={displayName} onChange={(e) => setDisplayName(e.target.value)} />
        </label>
        <label>
          E-mail
          <input type="email" value={email} onChange={(e) => setEmail(e.target.value)} />
        </label>
        <label>
          Tenant
          <select aria-label="Tenant" value={tenant} onChange={(e) => setTenant(e.target.value)}>
            <option value="">none</option>
            {tenants.map((t) => (
              <option key={t.id} value={t.id}>
                {t.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Role
          <select aria-label="Role" value={role} onChange={(e) => setRole(e.target.value as RoleBindingRole | '')}>
            <option value="">none</option>
            {ROLES.map((x) => (
              <option key={x} value={x}>
                {enumLabel(x)}
              </option>
            ))}
          </select>
        </label>
      </div>
      {ok && <Message kind="ok">{ok}</Message>}
      <Problem error={r.error ?? grant.error} />
      <div style={{ marginTop: '.75rem' }}>
        <button type="submit" className="primary" disabled={r.fetching || grant.fetching}>
          Create user
        </button>
      </div>
    </form>
  );
}

function UserPanel({ user, tenants, onChanged }: { user: User; tenants: Tenant[]; onChanged(): void }) {
  const [grant, grantRole] = useMutation(GrantRoleDocument);
  const [revoke, revokeRole] = useMutation(RevokeRoleDocument);
  const [pw, setPassword] = useMutation(SetPasswordDocument);
  const [tok, createToken] = useMutation(CreateUserTokenDocument);
  const [role, setRole] = useState<RoleBindingRole>('TENANT_MEMBER');
  const [tenant, setTenant] = useState(tenants[0]?.id ?? '');
  const [password, setPasswordText] = useState('');
  const [tokenName, setTokenName] = useState('');
  const [tokenTenant, setTokenTenant] = useState('');
  const [secret, setSecret] = useState<{ token: string; name: string } | null>(null);
  const [ok, setOk] = useState('');
  const bindings = nodes(user.roleBindings.edges);
  return (
    <div className="card" aria-label={`User ${user.username}`} data-testid="user-panel">
      <div className="spread">
        <h3 style={{ margin: 0 }}>{user.displayName || user.username}</h3>
        <HistoryLink type="User" id={user.id} />
      </div>
      <h4>Roles</h4>
      {bindings.length === 0 ? (
        <p className="muted small">No role: this user can do nothing yet.</p>
      ) : (
        <ul className="small" aria-label="Role bindings">
          {bindings.map((b) => (
            <li key={b.id} data-testid="role-binding">
              {enumLabel(b.role)} {b.tenant ? <>in {b.tenant.name}</> : <>({b.domain})</>}{' '}
              <button type="button" className="link" disabled={revoke.fetching} onClick={async () => { const r = await revokeRole({ id: b.id }); if (!r.error) onChanged(); }}>
                Revoke
              </button>
            </li>
          ))}
        </ul>
      )}
      <form
        className="row"
        aria-label="Grant a role"
        onSubmit={async (e) => {
          e.preventDefault();
          const r = await grantRole({ input: { userID: user.id, role, tenantID: tenantRole(role) ? tenant || undefined : undefined } });
          if (!r.error) onChanged();
        }}
      >
        <label>
          Role
          <select value={role} onChange={(e) => setRole(e.target.value as RoleBindingRole)}>
            {ROLES.map((x) => (
              <option key={x} value={x}>
                {enumLabel(x)}
              </option>
            ))}
          </select>
        </label>
        {tenantRole(role) && (
          <label>
            In tenant
            <select value={tenant} onChange={(e) => setTenant(e.target.value)}>
              {tenants.map((t) => (
                <option key={t.id} value={t.id}>
                  {t.name}
                </option>
              ))}
            </select>
          </label>
        )}
        <button type="submit" disabled={grant.fetching}>
          Grant
        </button>
      </form>
      <Problem error={grant.error ?? revoke.error} />
      <h4>API token</h4>
      {secret ? (
        <NewTokenSecret name={secret.name} token={secret.token} onDone={() => setSecret(null)} />
      ) : (
        <form
          className="row"
          aria-label="Create a token for this user"
          onSubmit={async (e) => {
            e.preventDefault();
            const r = await createToken({ input: { name: tokenName.trim(), userID: user.id, scope: 'READ_WRITE', tenantID: tokenTenant || undefined } });
            if (r.data) {
              setSecret({ token: r.data.createAPIToken.token, name: r.data.createAPIToken.apiToken.name });
              setTokenName('');
            }
          }}
        >
          <label>
            Token name
            <input value={tokenName} required onChange={(e) => setTokenName(e.target.value)} />
          </label>
          <label>
            Limited to tenant
            <select aria-label="Limited to tenant" value={tokenTenant} onChange={(e) => setTokenTenant(e.target.value)}>
              <option value="">no limit</option>
              {nodes(user.tenants.edges).map((t) => (
                <option key={t.id} value={t.id}>
                  {t.name}
                </option>
              ))}
            </select>
          </label>
          <button type="submit" disabled={tok.fetching}>
            Create token
          </button>
        </form>
      )}
      <Problem error={tok.error} />
      <h4>Password</h4>
      <form
        className="row"
        aria-label="Set password"
        onSubmit={async (e) => {
          e.preventDefault();
          setOk('');
          const r = await setPassword({ id: user.id, password });
          if (!r.error) {
            setPasswordText('');
            setOk('Password set.');
          }
        }}
      >
        <label>
          New password
          <input type="password" autoComplete="new-password" value={password} required onChange={(e) => setPasswordText(e.target.value)} />
        </label>
        <button type="submit" disabled={pw.fetching}>
          Set password
        </button>
      </form>
      {ok && <Message kind="ok">{ok}</Message>}
      <Problem error={pw.error} />
    </div>
  );
}

/** Node agents sign in as users named agent-node-<id> (identity.AgentUsername): one per
 * node, hundreds in a datacenter. The page lists people; agents only when asked. */
export const AGENT_USER_PREFIX = 'agent-node-';
export const peopleWhere = (showAgents: boolean) => (showAgents ? undefined : { not: { usernameHasPrefix: AGENT_USER_PREFIX } });

export default function PeoplePage() {
  const [showAgents, setShowAgents] = useState(false);
  const variables = useMemo(() => ({ where: peopleWhere(showAgents) }), [showAgents]);
  const [{ data, error, fetching }, refetch] = useQuery({ query: PeopleDocument, variables });
  const [adding, setAdding] = useState(false);
  const [open, setOpen] = useState<string | null>(null);
  const refresh = () => refetch({ requestPolicy: 'network-only' });
  const users = nodes(data?.users.edges);
  const tenants = nodes(data?.tenants.edges);
  const selected = users.find((u) => u.id === open);
  return (
    <div>
      <div className="row">
        <h1>People &amp; access</h1>
        <button type="button" onClick={() => setAdding(!adding)} aria-expanded={adding}>
          New user
        </button>
      </div>
      {adding && <NewUserForm tenants={tenants} onDone={refresh} />}
      <label className="inline-check">
        <input type="checkbox" checked={showAgents} onChange={(e) => setShowAgents(e.target.checked)} /> show node agents' users
      </label>
      <Problem error={error} />
      {fetching && !data && <Loading />}
      {data && users.length === 0 && <p className="muted">No users are visible to you.</p>}
      <div className="people">
        {users.length > 0 && (
          <table className="ops-table" aria-label="Users">
            <thead>
              <tr>
                <th>User</th>
                <th>Status</th>
                <th>Tenants</th>
                <th>Roles</th>
                <th>Last sign-in</th>
              </tr>
            </thead>
            <tbody>
              {users.map((u) => (
                <tr key={u.id} data-testid="user" data-username={u.username} aria-selected={open === u.id}>
                  <td>
                    <button type="button" className="link" onClick={() => setOpen(open === u.id ? null : u.id)}>
                      {u.username}
                    </button>
                    {u.displayName && <span className="muted small"> {u.displayName}</span>}
                  </td>
                  <td>
                    <StatusBadge status={u.status} />
                  </td>
                  <td className="small">
                    {nodes(u.tenants.edges).map((t, i) => (
                      <span key={t.id}>
                        {i > 0 && ', '}
                        <Link to={`/tenants/${t.id}`}>{t.name}</Link>
                      </span>
                    ))}
                  </td>
                  <td className="small">
                    {nodes(u.roleBindings.edges)
                      .map((b) => `${enumLabel(b.role)}${b.tenant ? ` (${b.tenant.name})` : ''}`)
                      .join(', ') || <span className="muted">none</span>}
                  </td>
                  <td className="small">{u.lastLoginAt ? <RelTime iso={u.lastLoginAt} /> : <span className="muted">never</span>}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        {selected && <UserPanel key={selected.id} user={selected} tenants={tenants} onChanged={refresh} />}
      </div>
    </div>
  );
}
