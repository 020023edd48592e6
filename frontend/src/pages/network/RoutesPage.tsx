// Routes: which node announces which VM address (routed network mode, issue 27). Each row is
// a VM address's /32 as its node's agent last reported it (VirtualMachine.routes, listed by
// vmRoutes): the node, whether its BGP speaker announces it, the address's namespace on the
// node and the namespace's own 169.254.32.0/19 address (the node's next hop to the VM).
import { Link } from 'react-router';
import { useQuery } from 'urql';
import { graphql } from '../../gql';
import { Problem } from '../../components/Problem';
import { Loading } from '../../components/Loading';
import { RelTime } from '../../components/ops/RelTime';
import '../../components/ops/ops.css';

const RoutesDocument = graphql(`
  query VMRoutesList($first: Int) {
    vmRoutes(first: $first) {
      virtualMachine { id name status }
      route { address node namespace linkAddress announced updatedAt }
    }
  }
`);

export default function RoutesPage() {
  const [{ data, error, fetching }, refresh] = useQuery({ query: RoutesDocument, variables: { first: 1000 } });
  const rows = data?.vmRoutes ?? [];
  const announced = rows.filter((r) => r.route.announced).length;
  return (
    <div>
      <h1>Routes</h1>
      <p className="muted">
        VM addresses in routed network mode: each is a /32 its node announces to the rack-leaf routers by BGP.
        {data ? ` ${announced} of ${rows.length} announced.` : ''}{' '}
        <button type="button" onClick={() => refresh({ requestPolicy: 'network-only' })}>Refresh</button>
      </p>
      {error && <Problem error={error} />}
      {fetching && !data && <Loading />}
      {data && rows.length === 0 && <p>No VM address is routed: the nodes run in bridged mode, or no VM runs yet.</p>}
      {rows.length > 0 && (
        <table className="ops-table" aria-label="VM routes">
          <thead>
            <tr>
              <th>Address</th>
              <th>Node</th>
              <th>Announced</th>
              <th>Virtual machine</th>
              <th>Namespace</th>
              <th>Next hop on the node</th>
              <th>Reported</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={`${r.virtualMachine.id}-${r.route.address}`}>
                <td><code>{r.route.address}/32</code></td>
                <td>{r.route.node}</td>
                <td>{r.route.announced ? 'yes' : <strong>no</strong>}</td>
                <td><Link to={`/vms/${r.virtualMachine.id}`}>{r.virtualMachine.name}</Link></td>
                <td><code>{r.route.namespace}</code></td>
                <td><code>{r.route.linkAddress}</code></td>
                <td><RelTime iso={r.route.updatedAt} /></td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
