// /ssh-keys: the SSH public keys the viewer may use for new VMs (its tenants' keys and its
// own): list with fingerprints, add one for a tenant, delete one. A VM gets the keys chosen
// at create on its config drive, for the image's default user.
import { useState, type FormEvent } from 'react';
import { useMutation, useQuery } from 'urql';
import { graphql } from '../../gql';
import { Problem } from '../../components/Problem';
import { Loading } from '../../components/Loading';
import { ChoiceSelect } from '../../components/ChoiceSelect';
import { RelTime } from '../../components/ops/RelTime';
import { useChoices } from '../../components/compute/choices';
import '../../components/ops/ops.css';

const SSHKeysDocument = graphql(`
  query SSHKeys {
    sshKeys(first: 500, orderBy: { field: NAME, direction: ASC }) {
      edges { node { id name fingerprint createdAt tenant { id name } user { id username } } }
    }
  }
`);

const CreateSSHKeyDocument = graphql(`
  mutation CreateSSHKey($input: CreateSSHKeyInput!) {
    createSSHKey(input: $input) { id name fingerprint }
  }
`);

const DeleteSSHKeyDocument = graphql(`
  mutation DeleteSSHKey($id: ID!) {
    deleteSSHKey(id: $id)
  }
`);

/** An empty list holds no SSHKey, so name the type for urql's cache to refetch after a change. */
const KEYS_CONTEXT = { additionalTypenames: ['SSHKey'] };

export default function SSHKeysPage() {
  const choices = useChoices();
  const [{ data, error, fetching }] = useQuery({ query: SSHKeysDocument, context: KEYS_CONTEXT });
  const [created, doCreate] = useMutation(CreateSSHKeyDocument);
  const [deleted, doDelete] = useMutation(DeleteSSHKeyDocument);
  const [name, setName] = useState('');
  const [publicKey, setPublicKey] = useState('');
  const [tenantID, setTenant] = useState('');

  async function submit(e: FormEvent) {
    e.preventDefault();
    const r = await doCreate({ input: { name: name.trim(), publicKey: publicKey.trim(), tenantID } }, KEYS_CONTEXT);
    if (r.data?.createSSHKey) {
      setName('');
      setPublicKey('');
    }
  }

  async function onDelete(id: string, keyName: string) {
    if (!window.confirm(`Delete the SSH key "${keyName}"? VMs created with it keep it; new VMs cannot choose it.`)) return;
    await doDelete({ id }, KEYS_CONTEXT);
  }

  const rows = data?.sshKeys.edges?.flatMap((e) => (e?.node ? [e.node] : [])) ?? [];
  return (
    <div>
      <h1>SSH keys</h1>
      <p className="muted">Keys chosen when a VM is created go on its config drive, for the image&apos;s default user.</p>
      <form onSubmit={submit} aria-label="Add SSH key">
        <div className="fields">
          <label>
            Name
            <input value={name} onChange={(e) => setName(e.target.value)} required />
          </label>
          <ChoiceSelect label="Tenant" value={tenantID} onChange={setTenant} options={choices.tenants} empty="choose…" required />
          <label>
            Public key
            <textarea rows={3} value={publicKey} onChange={(e) => setPublicKey(e.target.value)} required placeholder="ssh-ed25519 AAAA… you@host" aria-label="Public key" />
          </label>
        </div>
        <div className="form-actions">
          <button type="submit" className="primary" disabled={created.fetching}>{created.fetching ? 'Adding…' : 'Add key'}</button>
        </div>
      </form>
      <Problem error={created.error} title="The key was not added" />
      <Problem error={error ?? deleted.error} />
      {!data && fetching ? <Loading /> : null}
      {data && rows.length === 0 && <p className="muted">No SSH keys yet.</p>}
      {rows.length > 0 && (
        <table className="ops-table" aria-label="SSH keys">
          <thead>
            <tr><th>Name</th><th>Fingerprint</th><th>Owner</th><th>Added</th><th /></tr>
          </thead>
          <tbody>
            {rows.map((k) => (
              <tr key={k.id} data-testid={`sshkey-${k.name}`}>
                <td>{k.name}</td>
                <td><code>{k.fingerprint ?? '—'}</code></td>
                <td>{k.tenant ? `tenant ${k.tenant.name}` : k.user ? `user ${k.user.username}` : '—'}</td>
                <td className="nowrap"><RelTime iso={k.createdAt} /></td>
                <td><button type="button" className="danger" disabled={deleted.fetching} onClick={() => onDelete(k.id, k.name)}>Delete</button></td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
