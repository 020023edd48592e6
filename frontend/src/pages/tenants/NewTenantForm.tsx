// Admins: create a tenant (createTenant), then open its page to set quotas.
import { useState, type FormEvent } from 'react';
import { useNavigate } from 'react-router';
import { useMutation } from 'urql';
import { graphql } from '../../gql';
import { Problem } from '../../components/Problem';

const CreateTenantDocument = graphql(`
  mutation CreateTenant($input: CreateTenantInput!) {
    createTenant(input: $input) { id }
  }
`);

export function NewTenantForm() {
  const navigate = useNavigate();
  const [r, create] = useMutation(CreateTenantDocument);
  const [name, setName] = useState('');
  const [displayName, setDisplayName] = useState('');
  const [description, setDescription] = useState('');
  async function submit(e: FormEvent) {
    e.preventDefault();
    const res = await create({ input: { name: name.trim(), displayName: displayName.trim() || undefined, description: description.trim() || undefined } });
    if (res.data) navigate(`/tenants/${res.data.createTenant.id}`);
  }
  return (
    <form className="card" onSubmit={submit} aria-label="New tenant" style={{ marginBottom: '.75rem' }}>
      <h3 style={{ marginTop: 0 }}>New tenant</h3>
      <div className="fields">
        <label>
          Name
          <input value={name} required placeholder="acme" onChange={(e) => setName(e.target.value)} />
        </label>
        <label>
          Display name
          <input value={displayName} onChange={(e) => setDisplayName(e.target.value)} />
        </label>
        <label>
          Description
          <input value={description} onChange={(e) => setDescription(e.target.value)} />
        </label>
      </div>
      <Problem error={r.error} />
      <p className="muted small">Quotas are set on the tenant&apos;s page, in the units its bars show (vCPUs, GiB).</p>
      <button type="submit" className="primary" disabled={r.fetching}>
        Create tenant
      </button>
    </form>
  );
}
