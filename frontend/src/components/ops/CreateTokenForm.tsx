// The form that creates an API token: name, scope, tenant (one the user belongs to), expiry and
// allowed source networks; hands the one-time secret to onCreated.
import { useState, type FormEvent } from 'react';
import { useMutation } from 'urql';
import { graphql } from '../../gql';
import type { ApiTokenScope } from '../../gql/graphql';
import { useAuth } from '../../api/auth';
import { Message, Problem } from '../Problem';
import { expiryFromDays } from '../../lib/ops/tokens';

const CreateDocument = graphql(`
  mutation CreateAPIToken($input: CreateAPITokenInput!) {
    createAPIToken(input: $input) { token apiToken { id name prefix } }
  }
`);

export function CreateTokenForm({ onCreated }: { onCreated: (token: string, name: string) => void }) {
  const { me } = useAuth();
  const [name, setName] = useState('');
  const [scope, setScope] = useState<ApiTokenScope>('READ_ONLY');
  const [tenant, setTenant] = useState('');
  const [days, setDays] = useState('90');
  const [cidrs, setCidrs] = useState('');
  const [formError, setFormError] = useState('');
  const [result, create] = useMutation(CreateDocument);

  const tenants = new Map<string, string>();
  me?.roleBindings.edges?.forEach((e) => e?.node?.tenant && tenants.set(e.node.tenant.id, e.node.tenant.name));

  async function submit(e: FormEvent) {
    e.preventDefault();
    setFormError('');
    if (!name.trim()) return setFormError('Give the token a name, e.g. what will use it.');
    const allowed = cidrs.split(/[\s,]+/).filter(Boolean);
    const r = await create({
      input: {
        name: name.trim(),
        scope,
        tenantID: tenant || null,
        expiresAt: expiryFromDays(Number(days)),
        allowedCIDRs: allowed.length ? allowed : null,
      },
    });
    if (r.data) {
      onCreated(r.data.createAPIToken.token, r.data.createAPIToken.apiToken.name);
      setName('');
      setCidrs('');
    }
  }

  return (
    <form className="card" onSubmit={submit} aria-label="New API token">
      <h2 style={{ marginTop: 0 }}>New token</h2>
      <div className="fields">
        <label>
          Name
          <input name="name" value={name} onChange={(e) => setName(e.target.value)} placeholder="e.g. backup script" />
        </label>
        <label>
          Scope
          <select name="scope" value={scope} onChange={(e) => setScope(e.target.value as ApiTokenScope)}>
            <option value="READ_ONLY">read only</option>
            <option value="READ_WRITE">read & write</option>
          </select>
        </label>
        <label>
          Tenant
          <select name="tenant" value={tenant} onChange={(e) => setTenant(e.target.value)}>
            <option value="">all I may see</option>
            {[...tenants].map(([id, n]) => <option key={id} value={id}>{n}</option>)}
          </select>
        </label>
        <label>
          Expires
          <select name="expires" value={days} onChange={(e) => setDays(e.target.value)}>
            <option value="1">in 1 day</option>
            <option value="7">in 7 days</option>
            <option value="30">in 30 days</option>
            <option value="90">in 90 days</option>
            <option value="365">in a year</option>
            <option value="0">never</option>
          </select>
        </label>
        <label>
          Allowed networks (optional)
          <input name="cidrs" value={cidrs} onChange={(e) => setCidrs(e.target.value)} placeholder="10.0.0.0/8, 192.168.1.0/24" />
        </label>
      </div>
      {formError && <Message kind="error">{formError}</Message>}
      <Problem error={result.error} />
      <div style={{ marginTop: '.75rem' }}>
        <button type="submit" className="primary" disabled={result.fetching}>Create token</button>
      </div>
    </form>
  );
}
