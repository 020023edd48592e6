// /load-balancers: every load balancer the caller may see, with its VIP, status and reason,
// listeners, how many members pass their checks and how many serving nodes announce the VIP.
import { Link } from 'react-router';
import { useQuery } from 'urql';
import { graphql } from '../../gql';
import { Loading } from '../../components/Loading';
import { Problem } from '../../components/Problem';
import { StatusBadge } from '../../components/StatusBadge';
import { describeListeners } from './listeners';
import '../../components/compute/compute.css';

const LoadBalancersDocument = graphql(`
  query LoadBalancers($first: Int) {
    loadBalancers(first: $first, orderBy: { field: NAME }) {
      totalCount
      edges {
        node {
          id name status statusReason healthCheckIntervalMs
          vip { id address }
          listeners { port protocol targetPort }
          members { vmID health }
          nodeStates { nodeID announced forwarding }
          tenant { id name }
          regionService { id name }
        }
      }
    }
  }
`);

export default function LoadBalancersPage() {
  const [{ data, error, fetching }, refresh] = useQuery({ query: LoadBalancersDocument, variables: { first: 500 } });
  const rows = (data?.loadBalancers.edges ?? []).flatMap((e) => (e?.node ? [e.node] : []));
  return (
    <div>
      <div className="spread">
        <h1>Load balancers</h1>
        <button type="button" onClick={() => refresh({ requestPolicy: 'network-only' })}>Refresh</button>
      </div>
      <p className="muted">
        A load balancer forwards its VIP&apos;s listeners to the replicas of its region service; it is active only while a
        serving node announces the VIP over BGP and forwards.
      </p>
      <Problem error={error} />
      {!data && fetching && <Loading what="Loading load balancers" />}
      {data && rows.length === 0 && <p className="muted">No load balancer yet: create a region service with a load balancer.</p>}
      {rows.length > 0 && (
        <table aria-label="Load balancers">
          <thead><tr><th>Name</th><th>Status</th><th>VIP</th><th>Listeners</th><th>Members up</th><th>Nodes announcing</th><th>Service</th><th>Tenant</th></tr></thead>
          <tbody>
            {rows.map((lb) => (
              <tr key={lb.id} data-lb-id={lb.id}>
                <td><Link to={`/load-balancers/${lb.id}`}>{lb.name}</Link></td>
                <td><StatusBadge status={lb.status} title={lb.statusReason} /><div className="small muted">{lb.statusReason}</div></td>
                <td className="mono">{lb.vip?.address ?? '—'}</td>
                <td>{describeListeners(lb.listeners)}</td>
                <td>{(lb.members ?? []).filter((m) => m.health === 'UP').length} / {(lb.members ?? []).length}</td>
                <td>{(lb.nodeStates ?? []).filter((n) => n.announced).length} / {(lb.nodeStates ?? []).length}</td>
                <td>{lb.regionService ? <Link to={`/services/${lb.regionService.id}`}>{lb.regionService.name}</Link> : '—'}</td>
                <td><Link to={`/tenants/${lb.tenant.id}`}>{lb.tenant.name}</Link></td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
