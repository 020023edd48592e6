// /clusters: every cluster with its region, datacenter, node and VM counts; each opens its virtual rack.
import { Link } from 'react-router';
import { useQuery } from 'urql';
import { graphql } from '../../gql';
import { Loading } from '../../components/Loading';
import { Pager, usePager } from '../../components/Pager';
import { Problem } from '../../components/Problem';
import { formatLabels } from '../../lib/compute/policy';
import { formatNumber } from '../../lib/format';

const ClustersDocument = graphql(`
  query Clusters($first: Int, $after: Cursor, $last: Int, $before: Cursor) {
    clusters(first: $first, after: $after, last: $last, before: $before, orderBy: { field: NAME }) {
      totalCount
      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
      edges {
        node {
          id name labels weight
          region { id name }
          datacenter { id name }
          nodes { totalCount }
          virtualMachines(where: { statusNEQ: DELETED }) { totalCount }
        }
      }
    }
  }
`);

export default function ClustersPage() {
  const pager = usePager(25);
  const [{ data, error, fetching }] = useQuery({ query: ClustersDocument, variables: pager.vars });
  const rows = (data?.clusters.edges ?? []).flatMap((e) => (e?.node ? [e.node] : []));
  return (
    <div>
      <h1>Clusters</h1>
      <Problem error={error} />
      {!data && fetching && <Loading what="Loading clusters" />}
      {data && rows.length === 0 && <p className="muted">No clusters yet.</p>}
      {rows.length > 0 && (
        <table aria-label="Clusters">
          <thead><tr><th>Cluster</th><th>Region</th><th>Datacenter</th><th>Nodes</th><th>VMs</th><th>Labels</th></tr></thead>
          <tbody>
            {rows.map((c) => (
              <tr key={c.id}>
                <td><Link to={`/clusters/${c.id}`}>{c.name}</Link></td>
                <td>{c.region.name}</td>
                <td><Link to={`/datacenters/${c.datacenter.id}`}>{c.datacenter.name}</Link></td>
                <td>{formatNumber(c.nodes.totalCount)}</td>
                <td>{formatNumber(c.virtualMachines.totalCount)}</td>
                <td className="small">{formatLabels(c.labels) || '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager pageInfo={data?.clusters.pageInfo} total={data?.clusters.totalCount} pager={pager} />
    </div>
  );
}
