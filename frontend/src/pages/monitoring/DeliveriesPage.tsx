// Hook deliveries: every notification a rule or a maintainer group's routing sent, newest first,
// with its attempts, last HTTP status and error — the history Alertmanager does not keep.
import { Link } from 'react-router';
import { useQuery } from 'urql';
import { graphql } from '../../gql';
import type { HookDeliveryWhereInput, HookDeliveryStatus } from '../../gql/graphql';
import { Problem } from '../../components/Problem';
import { Loading } from '../../components/Loading';
import { Pager, usePager } from '../../components/Pager';
import { StatusBadge } from '../../components/StatusBadge';
import { RelTime } from '../../components/ops/RelTime';
import { useParamFilters } from '../../components/ops/useParamFilters';
import '../../components/ops/ops.css';

const DeliveriesDocument = graphql(`
  query HookDeliveriesList($first: Int, $after: Cursor, $last: Int, $before: Cursor, $where: HookDeliveryWhereInput) {
    hookDeliveries(first: $first, after: $after, last: $last, before: $before, where: $where, orderBy: { field: CREATED_AT, direction: DESC }) {
      totalCount
      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
      edges {
        node {
          id url idempotencyKey status attempts responseStatus lastError createdAt deliveredAt lastAttemptAt
          rule { id name }
          maintainerGroup { id name }
          alert { id name }
        }
      }
    }
  }
`);

export default function DeliveriesPage() {
  const pager = usePager(25);
  const f = useParamFilters(pager.reset);
  const status = f.get('status');
  const where: HookDeliveryWhereInput = {};
  if (status) where.status = status as HookDeliveryStatus;
  const [{ data, error, fetching }] = useQuery({ query: DeliveriesDocument, variables: { ...pager.vars, where } });
  const rows = data?.hookDeliveries.edges?.flatMap((e) => (e?.node ? [e.node] : [])) ?? [];
  return (
    <div>
      <h1>Hook deliveries</h1>
      <div className="filters" role="search">
        <label>
          Status
          <select value={status} onChange={(e) => f.set('status', e.target.value)}>
            <option value="">any</option><option value="PENDING">pending</option><option value="DELIVERED">delivered</option><option value="FAILED">failed</option>
          </select>
        </label>
      </div>
      <Problem error={error} />
      {!data && fetching && <Loading />}
      {data && rows.length === 0 && <p className="muted">No deliveries.</p>}
      {rows.length > 0 && (
        <table className="ops-table" aria-label="Hook deliveries">
          <thead><tr><th>Status</th><th>To</th><th>For</th><th className="num">Attempts</th><th>Last answer</th><th>Created</th></tr></thead>
          <tbody>
            {rows.map((d) => (
              <tr key={d.id} data-testid={`delivery-${d.id}`}>
                <td><StatusBadge status={d.status} /></td>
                <td className="small">{d.url}<div className="muted" title="Idempotency-Key">{d.idempotencyKey}</div></td>
                <td className="small">
                  {d.rule && <div>rule {d.rule.name}</div>}
                  {d.maintainerGroup && <div>group {d.maintainerGroup.name}</div>}
                  {d.alert && <div><Link to={`/alerts?id=${d.alert.id}`}>{d.alert.name}</Link></div>}
                </td>
                <td className="num">{d.attempts}</td>
                <td className="small">
                  {d.responseStatus ? `HTTP ${d.responseStatus}` : '—'}
                  {d.lastError && <div className="muted">{d.lastError}</div>}
                  {d.deliveredAt && <div>delivered <RelTime iso={d.deliveredAt} /></div>}
                </td>
                <td className="nowrap"><RelTime iso={d.createdAt} /></td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager pageInfo={data?.hookDeliveries.pageInfo} total={data?.hookDeliveries.totalCount} pager={pager} />
    </div>
  );
}
