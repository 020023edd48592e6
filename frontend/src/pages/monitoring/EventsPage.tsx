// The event stream: the newest events first, read again every 5 seconds, with what the rules did
// with each (outcome), filtered by status and check in the URL.
import { useEffect } from 'react';
import { Link } from 'react-router';
import { useQuery } from 'urql';
import { graphql } from '../../gql';
import type { EventWhereInput, EventStatus } from '../../gql/graphql';
import { Problem } from '../../components/Problem';
import { Loading } from '../../components/Loading';
import { Pager, usePager } from '../../components/Pager';
import { StatusBadge } from '../../components/StatusBadge';
import { RelTime } from '../../components/ops/RelTime';
import { useParamFilters } from '../../components/ops/useParamFilters';
import '../../components/ops/ops.css';

const EventsDocument = graphql(`
  query EventStream($first: Int, $after: Cursor, $last: Int, $before: Cursor, $where: EventWhereInput) {
    events(first: $first, after: $after, last: $last, before: $before, where: $where, orderBy: { field: LAST_SEEN_AT, direction: DESC }) {
      totalCount
      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
      edges {
        node {
          id checkName status output source silenced outcome lastSeenAt processedAt
          node { id name }
          host { id name }
          cluster { id name }
          alert { id name }
        }
      }
    }
  }
`);

export default function EventsPage() {
  const pager = usePager(50);
  const f = useParamFilters(pager.reset);
  const status = f.get('status');
  const check = f.get('check');
  const where: EventWhereInput = {};
  if (status) where.status = status as EventStatus;
  if (check) where.checkNameContains = check;
  const [{ data, error, fetching }, refetch] = useQuery({ query: EventsDocument, variables: { ...pager.vars, where } });
  useEffect(() => {
    const t = setInterval(() => refetch({ requestPolicy: 'network-only' }), 5000);
    return () => clearInterval(t);
  }, [refetch]);
  const rows = data?.events.edges?.flatMap((e) => (e?.node ? [e.node] : [])) ?? [];
  return (
    <div>
      <h1>Events</h1>
      <div className="filters" role="search">
        <label>
          Status
          <select value={status} onChange={(e) => f.set('status', e.target.value)}>
            <option value="">any</option><option value="SUCCESS">success</option><option value="WARNING">warning</option><option value="CRITICAL">critical</option>
          </select>
        </label>
        <label>Check<input value={check} onChange={(e) => f.set('check', e.target.value)} placeholder="node-heartbeat" /></label>
      </div>
      <Problem error={error} />
      {!data && fetching && <Loading />}
      {data && rows.length === 0 && <p className="muted">No events match.</p>}
      {rows.length > 0 && (
        <table className="ops-table" aria-label="Events">
          <thead><tr><th>Status</th><th>Check</th><th>Where</th><th>What the rules did</th><th>Seen</th></tr></thead>
          <tbody>
            {rows.map((e) => (
              <tr key={e.id} data-testid={`event-${e.id}`}>
                <td><StatusBadge status={e.status} /></td>
                <td><strong>{e.checkName}</strong>{e.output && <div className="small muted">{e.output}</div>}</td>
                <td className="small">
                  {e.node && <div>node <Link to={`/nodes/${e.node.id}`}>{e.node.name}</Link></div>}
                  {e.host && <div>host <Link to={`/hosts/${e.host.id}`}>{e.host.name}</Link></div>}
                  {e.cluster && <div>cluster <Link to={`/clusters/${e.cluster.id}`}>{e.cluster.name}</Link></div>}
                  {e.source && <div className="muted">from {e.source}</div>}
                </td>
                <td className="small">
                  {e.processedAt ? (e.outcome || '—') : <span className="muted">waiting for the rules</span>}
                  {e.silenced && <div className="muted">silenced</div>}
                  {e.alert && <div><Link to={`/alerts?id=${e.alert.id}`}>{e.alert.name}</Link></div>}
                </td>
                <td className="nowrap"><RelTime iso={e.lastSeenAt} /></td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager pageInfo={data?.events.pageInfo} total={data?.events.totalCount} pager={pager} />
    </div>
  );
}
