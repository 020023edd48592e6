// One tenant: members, quotas per host group with usage bars (quotaUsage), setting a quota
// (operators), and its VM count and region services.
import { Link, useParams } from 'react-router';
import { useQuery } from 'urql';
import { graphql } from '../../gql';
import { useAuth } from '../../api/auth';
import { Problem } from '../../components/Problem';
import { Loading } from '../../components/Loading';
import { StatusBadge } from '../../components/StatusBadge';
import { QuotaUsageTable } from '../../components/ops/QuotaUsageTable';
import { SetQuotaForm } from '../../components/ops/SetQuotaForm';
import '../../components/ops/ops.css';
import { HistoryLink } from '../../components/dcim/HistoryLink';
import { formatNumber } from '../../lib/format';

const TenantDocument = graphql(`
  query TenantDetails($id: ID!) {
    node(id: $id) {
      __typename
      ... on Tenant {
        id name displayName description status
        members(first: 100) { totalCount edges { node { id username displayName email } } }
        virtualMachines { totalCount }
        regionServices(first: 50) { totalCount edges { node { id name status replicas region { id name } } } }
      }
    }
  }
`);

export default function TenantPage() {
  const { id = '' } = useParams();
  const { isOperator } = useAuth();
  const [{ data, error, fetching }] = useQuery({ query: TenantDocument, variables: { id } });
  if (error) return <><h1>Tenant</h1><Problem error={error} /></>;
  if (!data) return fetching ? <Loading /> : null;
  const t = data.node?.__typename === 'Tenant' ? data.node : null;
  if (!t) return <><h1>Tenant</h1><p className="muted">There is no tenant with id {id}, or you may not see it.</p></>;
  const members = t.members.edges?.flatMap((e) => (e?.node ? [e.node] : [])) ?? [];
  const services = t.regionServices.edges?.flatMap((e) => (e?.node ? [e.node] : [])) ?? [];
  return (
    <div>
      <div className="breadcrumbs"><Link to="/tenants">Tenants</Link><span>{t.name}</span></div>
      <div className="spread">
        <h1>{t.displayName || t.name}</h1>
        <HistoryLink type="Tenant" id={t.id} />
        <StatusBadge status={t.status} />
      </div>
      {t.description && <p>{t.description}</p>}
      <div className="count-row">
        <Link className="count-tile count-busy" to={`/vms?tenant=${t.id}`}><span className="count-n">{formatNumber(t.virtualMachines.totalCount)}</span><span className="count-label">virtual machines</span></Link>
        <Link className="count-tile count-busy" to={`/services?tenant=${t.id}`}><span className="count-n">{formatNumber(t.regionServices.totalCount)}</span><span className="count-label">region services</span></Link>
        <div className="count-tile"><span className="count-n">{formatNumber(t.members.totalCount)}</span><span className="count-label">members</span></div>
      </div>
      <h2>Quotas</h2>
      <QuotaUsageTable tenantID={t.id} />
      {isOperator && <SetQuotaForm tenantID={t.id} />}
      <div className="ops-cols" style={{ marginTop: '1rem' }}>
        <section>
          <h2>Members</h2>
          {members.length === 0 ? <p className="muted">No members.</p> : (
            <table className="ops-table" aria-label="Members">
              <thead><tr><th>User</th><th>Name</th><th>Email</th></tr></thead>
              <tbody>{members.map((m) => <tr key={m.id}><td>{m.username}</td><td>{m.displayName ?? ''}</td><td>{m.email ?? ''}</td></tr>)}</tbody>
            </table>
          )}
        </section>
        <section>
          <h2>Region services</h2>
          {services.length === 0 ? <p className="muted">This tenant runs no region services.</p> : (
            <table className="ops-table" aria-label="Region services">
              <thead><tr><th>Service</th><th>Region</th><th className="num">Replicas</th><th>Status</th></tr></thead>
              <tbody>
                {services.map((s) => (
                  <tr key={s.id}>
                    <td><Link to={`/services/${s.id}`}>{s.name}</Link></td>
                    <td>{s.region.name}</td>
                    <td className="num">{s.replicas}</td>
                    <td><StatusBadge status={s.status} /></td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </section>
      </div>
    </div>
  );
}
