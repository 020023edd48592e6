// Tenants: name, status, members, VM and service counts; filter by name, pages of 25.
import { useState } from 'react';
import { Link } from 'react-router';
import { useQuery } from 'urql';
import { graphql } from '../../gql';
import { Problem } from '../../components/Problem';
import { Loading } from '../../components/Loading';
import { Pager, usePager } from '../../components/Pager';
import { StatusBadge } from '../../components/StatusBadge';
import { NewTenantForm } from './NewTenantForm';
import { useInfraAccess } from '../../components/compute/access';
import '../../components/ops/ops.css';
import { formatNumber } from '../../lib/format';

const TenantsDocument = graphql(`
  query TenantsList($first: Int, $after: Cursor, $last: Int, $before: Cursor, $where: TenantWhereInput) {
    tenants(first: $first, after: $after, last: $last, before: $before, where: $where, orderBy: { field: NAME }) {
      totalCount
      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
      edges {
        node {
          id name displayName status
          members(first: 8) { totalCount edges { node { id username displayName } } }
          virtualMachines { totalCount }
          regionServices { totalCount }
          quotas { totalCount }
        }
      }
    }
  }
`);

export default function TenantsPage() {
  const pager = usePager(25);
  const [name, setName] = useState('');
  const [{ data, error, fetching }] = useQuery({ query: TenantsDocument, variables: { ...pager.vars, where: name ? { nameContains: name } : {} } });
  const rows = data?.tenants.edges?.flatMap((e) => (e?.node ? [e.node] : [])) ?? [];
  const { infra } = useInfraAccess();
  const [adding, setAdding] = useState(false);
  return (
    <div>
      <div className="row">
        <h1>Tenants &amp; quotas</h1>
        {infra && (
          <button type="button" onClick={() => setAdding(!adding)} aria-expanded={adding}>
            New tenant
          </button>
        )}
      </div>
      {adding && <NewTenantForm />}
      <div className="filters" role="search">
        <label>
          Name contains
          <input type="search" onKeyDown={(e) => { if (e.key === 'Enter') { setName(e.currentTarget.value); pager.reset(); } }} onBlur={(e) => { setName(e.currentTarget.value); pager.reset(); }} />
        </label>
      </div>
      <Problem error={error} />
      {!data && fetching && <Loading />}
      {data && rows.length === 0 && <p className="muted">No tenants{name ? ' match this name' : ' yet'}.</p>}
      {rows.length > 0 && (
        <table className="ops-table" aria-label="Tenants">
          <thead>
            <tr><th>Tenant</th><th>Status</th><th>Members</th><th className="num">VMs</th><th className="num">Services</th><th className="num">Quotas</th></tr>
          </thead>
          <tbody>
            {rows.map((t) => {
              const members = t.members.edges?.flatMap((e) => (e?.node ? [e.node] : [])) ?? [];
              return (
                <tr key={t.id}>
                  <td><Link to={`/tenants/${t.id}`}>{t.displayName || t.name}</Link>{t.displayName && <span className="muted small"> ({t.name})</span>}</td>
                  <td><StatusBadge status={t.status} /></td>
                  <td>
                    {members.length === 0 ? <span className="muted">none</span> : members.map((m) => m.username).join(', ')}
                    {t.members.totalCount > members.length && <span className="muted"> and {t.members.totalCount - members.length} more</span>}
                  </td>
                  <td className="num"><Link to={`/vms?tenant=${t.id}`}>{formatNumber(t.virtualMachines.totalCount)}</Link></td>
                  <td className="num"><Link to={`/services?tenant=${t.id}`}>{formatNumber(t.regionServices.totalCount)}</Link></td>
                  <td className="num">{formatNumber(t.quotas.totalCount)}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      <Pager pageInfo={data?.tenants.pageInfo} total={data?.tenants.totalCount} pager={pager} />
    </div>
  );
}
