// Alerts: filters (severity, status, last seen) in the URL, pages of 25, newest first,
// acknowledging an open alert (acknowledgeAlert) and resolving it (closeAlert); the server
// records when and by whom for both. A tenant member sees
// the fatal alerts of the nodes running their VMs, without the node or host (which they may not read).
import { Link } from 'react-router';
import { useMutation, useQuery } from 'urql';
import { graphql } from '../../gql';
import type { AlertWhereInput, AlertSeverity, AlertStatus } from '../../gql/graphql';
import { useInfraAccess } from '../../components/compute/access';
import { Problem } from '../../components/Problem';
import { Loading } from '../../components/Loading';
import { Pager, usePager } from '../../components/Pager';
import { StatusBadge } from '../../components/StatusBadge';
import { RelTime } from '../../components/ops/RelTime';
import { WindowSelect } from '../../components/ops/WindowSelect';
import { useParamFilters } from '../../components/ops/useParamFilters';
import { windowStart } from '../../lib/ops/window';
import '../../components/ops/ops.css';

const AlertsDocument = graphql(`
  query AlertsList($first: Int, $after: Cursor, $last: Int, $before: Cursor, $where: AlertWhereInput, $infra: Boolean!) {
    alerts(first: $first, after: $after, last: $last, before: $before, where: $where, orderBy: { field: LAST_SEEN_AT, direction: DESC }) {
      totalCount
      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
      edges {
        node {
          id name severity status message occurrences firstSeenAt lastSeenAt closedAt closedBy acknowledgedAt acknowledgedBy
          node @include(if: $infra) { id name }
          host @include(if: $infra) { id name }
          source
          suppressedBy @include(if: $infra) { id name }
        }
      }
    }
  }
`);

const ResolveDocument = graphql(`
  mutation ResolveAlert($id: ID!) {
    closeAlert(id: $id) { id status closedAt closedBy }
  }
`);

const AcknowledgeDocument = graphql(`
  mutation AcknowledgeAlert($id: ID!) {
    acknowledgeAlert(id: $id) { id acknowledgedAt acknowledgedBy }
  }
`);

export default function AlertsPage() {
  const pager = usePager(25);
  const f = useParamFilters(pager.reset);
  const { infra, known } = useInfraAccess();
  const severity = f.get('severity');
  const status = f.get('status');
  const since = f.get('since');
  const only = f.get('id');
  const where: AlertWhereInput = {};
  if (only) where.id = only;
  if (severity) where.severity = severity as AlertSeverity;
  if (status) where.status = status as AlertStatus;
  const start = windowStart(since);
  if (start) where.lastSeenAtGTE = start;
  const [{ data, error, fetching }] = useQuery({ query: AlertsDocument, variables: { ...pager.vars, where, infra }, pause: !known });
  const [resolve, doResolve] = useMutation(ResolveDocument);
  const [ack, doAck] = useMutation(AcknowledgeDocument);

  function onResolve(id: string, name: string) {
    if (!window.confirm(`Resolve the alert "${name}"?`)) return;
    doResolve({ id });
  }

  const rows = data?.alerts.edges?.flatMap((e) => (e?.node ? [e.node] : [])) ?? [];
  return (
    <div>
      <h1>Alerts</h1>
      <div className="filters" role="search">
        <label>
          Severity
          <select value={severity} onChange={(e) => f.set('severity', e.target.value)}>
            <option value="">any</option>
            <option value="FATAL">fatal</option>
            <option value="CRITICAL">critical</option>
            <option value="WARNING">warning</option>
          </select>
        </label>
        <label>
          Status
          <select value={status} onChange={(e) => f.set('status', e.target.value)}>
            <option value="">any</option>
            <option value="OPEN">open</option>
            <option value="CLOSED">closed</option>
          </select>
        </label>
        <WindowSelect label="Last seen" value={since} onChange={(v) => f.set('since', v)} />
      </div>
      <Problem error={error ?? resolve.error ?? ack.error} />
      {!data && fetching && <Loading />}
      {data && rows.length === 0 && <p className="muted">No alerts match these filters.</p>}
      {rows.length > 0 && (
        <table className="ops-table" aria-label="Alerts">
          <thead>
            <tr><th>Severity</th><th>Alert</th><th>Where</th><th>Status</th><th className="num">Seen</th><th>Last seen</th><th /></tr>
          </thead>
          <tbody>
            {rows.map((a) => (
              <tr key={a.id} data-testid={`alert-${a.id}`}>
                <td><StatusBadge status={a.severity} /></td>
                <td>
                  <strong>{a.name}</strong>
                  {a.message && <div className="small muted">{a.message}</div>}
                </td>
                <td className="small">
                  {a.node && <div>node <Link to={`/nodes/${a.node.id}`}>{a.node.name}</Link></div>}
                  {a.host && <div>host <Link to={`/hosts/${a.host.id}`}>{a.host.name}</Link></div>}
                  {!infra && <span className="muted">a node running your VMs</span>}
                  {infra && !a.node && !a.host && <span className="muted">—</span>}
                  {a.suppressedBy && (
                    <div className="small" data-testid="suppressed-by">
                      suppressed by <Link to={`/alerts?id=${a.suppressedBy.id}`}>{a.suppressedBy.name}</Link>
                    </div>
                  )}
                  {a.source && <div className="muted">from {a.source}</div>}
                </td>
                <td>
                  <StatusBadge status={a.status} />
                  {a.status === 'CLOSED' && <div className="small muted">{a.closedBy ? `by ${a.closedBy} ` : ''}<RelTime iso={a.closedAt} /></div>}
                  {a.status === 'OPEN' && a.acknowledgedAt && (
                    <div className="small muted">acknowledged by {a.acknowledgedBy} <RelTime iso={a.acknowledgedAt} /></div>
                  )}
                </td>
                <td className="num">{a.occurrences}×</td>
                <td className="nowrap"><RelTime iso={a.lastSeenAt} /></td>
                <td className="nowrap">
                  {a.status === 'OPEN' && infra && !a.acknowledgedAt && (
                    <button type="button" disabled={ack.fetching} onClick={() => doAck({ id: a.id })}>Acknowledge</button>
                  )}{' '}
                  {a.status === 'OPEN' && infra && <button type="button" disabled={resolve.fetching} onClick={() => onResolve(a.id, a.name)}>Resolve</button>}{' '}
                  {a.status === 'OPEN' && infra && (a.node || a.host) && (
                    <Link to={`/silences?${new URLSearchParams(a.node ? { node: a.node.name } : { host: a.host?.name ?? '*' })}`}>Silence</Link>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager pageInfo={data?.alerts.pageInfo} total={data?.alerts.totalCount} pager={pager} />
    </div>
  );
}
