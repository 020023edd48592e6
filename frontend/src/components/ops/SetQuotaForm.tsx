// Operators: create or change a tenant's quota in a host group (setQuota); empty fields keep their
// value. Sizes are asked for in GiB, as the quota bars show them.
import { useState, type FormEvent } from 'react';
import { useMutation, useQuery } from 'urql';
import { graphql } from '../../gql';
import { Message, Problem } from '../Problem';
import { quotaLimits, type QuotaFields } from '../../lib/ops/quota';

const HostGroupsDocument = graphql(`
  query QuotaHostGroups {
    hostGroups(first: 200, orderBy: { field: NAME }) { edges { node { id name } } }
  }
`);
const SetQuotaDocument = graphql(`
  mutation SetQuota($input: SetQuotaInput!) {
    setQuota(input: $input) { id cpuPercent vcpus memoryMB storageGB }
  }
`);

export function SetQuotaForm({ tenantID }: { tenantID: string }) {
  const [groups] = useQuery({ query: HostGroupsDocument });
  const [result, setQuota] = useMutation(SetQuotaDocument);
  const [group, setGroup] = useState('');
  const [f, setF] = useState<QuotaFields>({ cpuPercent: '', vcpus: '', memoryGiB: '', storageGiB: '' });
  const [msg, setMsg] = useState('');

  async function submit(e: FormEvent) {
    e.preventDefault();
    setMsg('');
    if (!group) return setMsg('Choose a host group.');
    const limits = quotaLimits(f);
    if (typeof limits === 'string') return setMsg(limits);
    const r = await setQuota({ input: { tenantID, hostGroupID: group, ...limits } });
    if (!r.error) setMsg('ok');
  }
  const field = (k: keyof typeof f, label: string, hint: string) => (
    <label>
      {label}
      <input type="number" min={0} step="any" value={f[k]} placeholder={hint} onChange={(e) => setF({ ...f, [k]: e.target.value })} />
    </label>
  );
  return (
    <form className="card" onSubmit={submit} aria-label="Set quota" style={{ marginTop: '.75rem' }}>
      <h3 style={{ marginTop: 0 }}>Set a quota</h3>
      <div className="fields">
        <label>
          Host group
          <select value={group} onChange={(e) => setGroup(e.target.value)}>
            <option value="">choose…</option>
            {groups.data?.hostGroups.edges?.map((e) => e?.node && <option key={e.node.id} value={e.node.id}>{e.node.name}</option>)}
          </select>
        </label>
        {field('cpuPercent', 'CPU share %', '0..100, keep')}
        {field('vcpus', 'vCPUs', '0 = unlimited, keep')}
        {field('memoryGiB', 'Memory GiB', '0 = unlimited, keep')}
        {field('storageGiB', 'Storage GiB', '0 = unlimited, keep')}
      </div>
      {msg && msg !== 'ok' && <Message kind="error">{msg}</Message>}
      {msg === 'ok' && <Message kind="ok">Quota saved.</Message>}
      <Problem error={result.error ?? groups.error} />
      <div style={{ marginTop: '.75rem' }}><button type="submit" className="primary" disabled={result.fetching}>Save quota</button></div>
    </form>
  );
}
