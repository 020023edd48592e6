// /global-services: every global service the caller may see — mode, FQDN, TTL, status and
// reason, the DNS answer last pushed, and how many member region services it joins.
import { Link } from 'react-router';
import { useQuery } from 'urql';
import { graphql } from '../../gql';
import { Loading } from '../../components/Loading';
import { Problem } from '../../components/Problem';
import { StatusBadge } from '../../components/StatusBadge';
import '../../components/compute/compute.css';

const GlobalServicesDocument = graphql(`
  query GlobalServices($first: Int) {
    globalServices(first: $first, orderBy: { field: NAME }) {
      totalCount
      edges {
        node {
          id name mode fqdn ttl status statusReason dnsAnswer
          tenant { id name }
          regionServices { totalCount }
        }
      }
    }
  }
`);

export default function GlobalServicesPage() {
  const [{ data, error, fetching }, refresh] = useQuery({ query: GlobalServicesDocument, variables: { first: 500 } });
  const rows = (data?.globalServices.edges ?? []).flatMap((e) => (e?.node ? [e.node] : []));
  return (
    <div>
      <div className="spread">
        <h1>Global services</h1>
        <button type="button" onClick={() => refresh({ requestPolicy: 'network-only' })}>Refresh</button>
      </div>
      <p className="muted">
        A global service joins region services of several regions: GSLB answers its DNS name with the healthy
        regions&apos; VIPs, anycast announces one VIP from every region.
      </p>
      <Problem error={error} />
      {!data && fetching && <Loading what="Loading global services" />}
      {data && rows.length === 0 && <p className="muted">No global service yet.</p>}
      {rows.length > 0 && (
        <table aria-label="Global services">
          <thead><tr><th>Name</th><th>Status</th><th>Mode</th><th>FQDN</th><th>TTL</th><th>DNS answer</th><th>Region services</th><th>Tenant</th></tr></thead>
          <tbody>
            {rows.map((g) => (
              <tr key={g.id} data-global-service-id={g.id}>
                <td><Link to={`/global-services/${g.id}`}>{g.name}</Link></td>
                <td><StatusBadge status={g.status} title={g.statusReason} /><div className="small muted">{g.statusReason}</div></td>
                <td>{g.mode}</td>
                <td className="mono">{g.fqdn ?? '—'}</td>
                <td>{g.ttl} s</td>
                <td className="mono">{(g.dnsAnswer ?? []).join(', ') || 'empty'}</td>
                <td>{g.regionServices.totalCount}</td>
                <td><Link to={`/tenants/${g.tenant.id}`}>{g.tenant.name}</Link></td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
