// /global-services/<id>: one global service — mode, FQDN, TTL, status and reason, the DNS
// answer last pushed, and its member region services with their region, VIP and load-balancer
// health. Attach a region service of the tenant, or detach one (region closure: its VIP leaves
// the answer on the traffic loop's next pass).
import { useState } from 'react';
import { Link, useParams } from 'react-router';
import { useMutation, useQuery } from 'urql';
import { graphql } from '../../gql';
import { Loading } from '../../components/Loading';
import { Problem } from '../../components/Problem';
import { StatusBadge } from '../../components/StatusBadge';
import { formatDateTime } from '../../lib/format';
import '../../components/compute/compute.css';

const GlobalServiceDocument = graphql(`
  query GlobalService($id: ID!) {
    node(id: $id) {
      ... on GlobalService {
        id name description mode fqdn ttl status statusReason dnsAnswer updatedAt
        tenant { id name }
        regionServices(first: 100) {
          edges {
            node {
              id name status
              region { id name }
              loadBalancer { id status statusReason vip { address } }
            }
          }
        }
      }
    }
  }
`);

const CandidatesDocument = graphql(`
  query GlobalServiceCandidates($tenant: ID!) {
    regionServices(first: 200, where: { hasTenantWith: [{ id: $tenant }], statusNEQ: DELETED }, orderBy: { field: NAME }) {
      edges { node { id name region { name } globalService { id } } }
    }
  }
`);

const UpdateMembersDocument = graphql(`
  mutation UpdateGlobalServiceMembers($id: ID!, $input: UpdateGlobalServiceInput!) {
    updateGlobalService(id: $id, input: $input) { id status statusReason updatedAt regionServices { totalCount } }
  }
`);

export default function GlobalServicePage() {
  const { id = '' } = useParams();
  const [{ data, error, fetching }, refresh] = useQuery({ query: GlobalServiceDocument, variables: { id } });
  const gs = data?.node && data.node.__typename === 'GlobalService' ? data.node : null;
  const [cands] = useQuery({ query: CandidatesDocument, variables: { tenant: gs?.tenant.id ?? '' }, pause: !gs });
  const [upd, update] = useMutation(UpdateMembersDocument);
  const [pick, setPick] = useState('');
  if (error) return <Problem error={error} title="The global service could not be loaded" />;
  if (!data && fetching) return <Loading what="Loading the global service" />;
  if (!gs) {
    return (
      <div>
        <h1>Global service not found</h1>
        <p>There is no global service {id} you may see. <Link to="/global-services">All global services</Link></p>
      </div>
    );
  }
  const members = (gs.regionServices.edges ?? []).flatMap((e) => (e?.node ? [e.node] : []));
  const free = (cands.data?.regionServices.edges ?? []).flatMap((e) => (e?.node && !e.node.globalService ? [e.node] : []));
  const change = async (input: { addRegionServiceIDs?: string[]; removeRegionServiceIDs?: string[] }) => {
    const r = await update({ id: gs.id, input });
    if (!r.error) {
      setPick('');
      refresh({ requestPolicy: 'network-only' });
    }
  };
  return (
    <div>
      <div className="breadcrumbs"><Link to="/global-services">Global services</Link><span>{gs.name}</span></div>
      <div className="spread">
        <h1>{gs.name} <StatusBadge status={gs.status} title={gs.statusReason} /></h1>
        <button type="button" onClick={() => refresh({ requestPolicy: 'network-only' })}>Refresh</button>
      </div>
      <p className="muted" data-testid="gs-reason">{gs.statusReason || 'No status reason.'}</p>
      <section className="card">
        <dl className="dl">
          <dt>Mode</dt><dd data-testid="gs-mode">{gs.mode}</dd>
          <dt>FQDN</dt><dd className="mono" data-testid="gs-fqdn">{gs.fqdn ?? '—'}</dd>
          <dt>TTL</dt><dd data-testid="gs-ttl">{gs.ttl} s</dd>
          <dt>DNS answer</dt><dd className="mono" data-testid="gs-answer">{(gs.dnsAnswer ?? []).join(', ') || 'empty'}</dd>
          <dt>Tenant</dt><dd><Link to={`/tenants/${gs.tenant.id}`}>{gs.tenant.name}</Link></dd>
          <dt>Updated</dt><dd>{formatDateTime(gs.updatedAt)}</dd>
          {gs.description && <><dt>Description</dt><dd>{gs.description}</dd></>}
        </dl>
      </section>
      <h2>Region services</h2>
      <Problem error={upd.error} title="The members were not changed" />
      {members.length === 0 ? <p className="muted">No region service is attached.</p> : (
        <table aria-label="Member region services">
          <thead><tr><th>Service</th><th>Region</th><th>VIP</th><th>Load balancer</th><th /></tr></thead>
          <tbody>
            {members.map((s) => (
              <tr key={s.id} data-member-service={s.name}>
                <td><Link to={`/services/${s.id}`}>{s.name}</Link></td>
                <td>{s.region.name}</td>
                <td className="mono">{s.loadBalancer?.vip?.address ?? '—'}</td>
                <td>
                  {s.loadBalancer ? (
                    <Link to={`/load-balancers/${s.loadBalancer.id}`}><StatusBadge status={s.loadBalancer.status} title={s.loadBalancer.statusReason} /></Link>
                  ) : 'none'}
                </td>
                <td>
                  <button type="button" className="danger" disabled={upd.fetching} onClick={() => change({ removeRegionServiceIDs: [s.id] })}>Detach</button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <form className="row" aria-label="Attach a region service" onSubmit={(e) => { e.preventDefault(); if (pick) void change({ addRegionServiceIDs: [pick] }); }}>
        <label>Region service
          <select value={pick} onChange={(e) => setPick(e.target.value)}>
            <option value="">choose…</option>
            {free.map((s) => <option key={s.id} value={s.id}>{s.name} ({s.region.name})</option>)}
          </select>
        </label>
        <button type="submit" disabled={!pick || upd.fetching}>Attach</button>
      </form>
    </div>
  );
}
