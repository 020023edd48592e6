// Maintenance records: filters (status, starts) in the URL, pages of 25, each with its hosts
// and nodes, who opened it, and start / close actions; operators plan new ones (?plan=<node id>
// opens the form for that node).
import { Link, useNavigate } from 'react-router';
import { useMutation, useQuery } from 'urql';
import { graphql } from '../../gql';
import type { MaintenanceWhereInput, MaintenanceStatus } from '../../gql/graphql';
import { Problem } from '../../components/Problem';
import { Loading } from '../../components/Loading';
import { Pager, usePager } from '../../components/Pager';
import { StatusBadge } from '../../components/StatusBadge';
import { RelTime } from '../../components/ops/RelTime';
import { WindowSelect } from '../../components/ops/WindowSelect';
import { useParamFilters } from '../../components/ops/useParamFilters';
import { windowStart } from '../../lib/ops/window';
import { formatDateTime } from '../../lib/format';
import { PlanMaintenanceForm } from '../../components/ops/PlanMaintenanceForm';
import { useAuth } from '../../api/auth';
import '../../components/ops/ops.css';

const MaintenancesDocument = graphql(`
  query MaintenanceList($first: Int, $after: Cursor, $last: Int, $before: Cursor, $where: MaintenanceWhereInput) {
    maintenances(first: $first, after: $after, last: $last, before: $before, where: $where, orderBy: { field: STARTS_AT, direction: DESC }) {
      totalCount
      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
      edges {
        node {
          id title description status startsAt endsAt openedBy automatic
          maintainer { id name }
          hosts(first: 10) { totalCount edges { node { id name } } }
          nodes(first: 10) { totalCount edges { node { id name } } }
        }
      }
    }
  }
`);

const UpdateDocument = graphql(`
  mutation UpdateMaintenanceStatus($id: ID!, $input: UpdateMaintenanceInput!) {
    updateMaintenance(id: $id, input: $input) { id status endsAt }
  }
`);

export default function MaintenancePage() {
  const pager = usePager(25);
  const f = useParamFilters(pager.reset);
  const status = f.get('status');
  const since = f.get('since');
  const only = f.get('id');
  const plan = f.get('plan');
  const { isOperator } = useAuth();
  const navigate = useNavigate();
  const where: MaintenanceWhereInput = {};
  if (only) where.id = only;
  if (status) where.status = status as MaintenanceStatus;
  const start = windowStart(since);
  if (start) where.or = [{ startsAtGTE: start }, { endsAtGTE: start }, { endsAtIsNil: true }];
  const [{ data, error, fetching }] = useQuery({ query: MaintenancesDocument, variables: { ...pager.vars, where } });
  const [upd, doUpdate] = useMutation(UpdateDocument);

  function setStatus(id: string, title: string, s: MaintenanceStatus) {
    if (s === 'CLOSED' && !window.confirm(`Close the maintenance "${title}"?`)) return;
    doUpdate({ id, input: s === 'CLOSED' ? { status: s, endsAt: new Date().toISOString() } : { status: s } });
  }

  const rows = data?.maintenances.edges?.flatMap((e) => (e?.node ? [e.node] : [])) ?? [];
  return (
    <div>
      <div className="spread">
        <h1>Maintenance</h1>
        {isOperator && plan === '' && <button type="button" className="primary" onClick={() => f.set('plan', 'new')}>Plan maintenance</button>}
      </div>
      {isOperator && plan !== '' && (
        <PlanMaintenanceForm
          nodeID={plan === 'new' ? undefined : plan}
          onPlanned={(id) => navigate(`/maintenance?id=${encodeURIComponent(id)}`)}
          onCancel={() => f.set('plan', '')}
        />
      )}
      <div className="filters" role="search">
        <label>
          Status
          <select value={status} onChange={(e) => f.set('status', e.target.value)}>
            <option value="">any</option>
            <option value="PLANNED">planned</option>
            <option value="IN_PROGRESS">in progress</option>
            <option value="CLOSED">closed</option>
          </select>
        </label>
        <WindowSelect label="Active during" value={since} onChange={(v) => f.set('since', v)} />
        {only && <button type="button" className="link" onClick={() => f.set('id', '')}>show all records</button>}
      </div>
      <Problem error={error ?? upd.error} />
      {!data && fetching && <Loading />}
      {data && rows.length === 0 && <p className="muted">No maintenance records match these filters.</p>}
      {rows.length > 0 && (
        <table className="ops-table" aria-label="Maintenance records">
          <thead>
            <tr><th>Maintenance</th><th>Status</th><th>When</th><th>Resources</th><th>Who</th><th /></tr>
          </thead>
          <tbody>
            {rows.map((m) => {
              const hosts = m.hosts.edges?.flatMap((e) => (e?.node ? [e.node] : [])) ?? [];
              const nodes = m.nodes.edges?.flatMap((e) => (e?.node ? [e.node] : [])) ?? [];
              return (
                <tr key={m.id} data-testid={`maintenance-${m.id}`}>
                  <td>
                    <strong>{m.title}</strong>
                    {m.description && <div className="small muted">{m.description}</div>}
                  </td>
                  <td><StatusBadge status={m.status} /></td>
                  <td className="small nowrap">
                    <div title={formatDateTime(m.startsAt)}>from <RelTime iso={m.startsAt} /></div>
                    <div title={formatDateTime(m.endsAt)}>until {m.endsAt ? <RelTime iso={m.endsAt} /> : 'open-ended'}</div>
                  </td>
                  <td className="small">
                    {hosts.map((h) => <div key={h.id}>host <Link to={`/hosts/${h.id}`}>{h.name}</Link></div>)}
                    {m.hosts.totalCount > hosts.length && <div className="muted">and {m.hosts.totalCount - hosts.length} more hosts</div>}
                    {nodes.map((n) => <div key={n.id}>node <Link to={`/nodes/${n.id}`}>{n.name}</Link></div>)}
                    {m.nodes.totalCount > nodes.length && <div className="muted">and {m.nodes.totalCount - nodes.length} more nodes</div>}
                    {hosts.length + nodes.length === 0 && <span className="muted">none</span>}
                  </td>
                  <td className="small">
                    {m.maintainer && <div><Link to={`/maintainers#maintainer-${m.maintainer.id}`}>{m.maintainer.name}</Link></div>}
                    <div className="muted">{m.automatic ? 'opened automatically' : m.openedBy ? `opened by ${m.openedBy}` : ''}</div>
                  </td>
                  <td className="nowrap">
                    {m.status === 'PLANNED' && <button type="button" disabled={upd.fetching} onClick={() => setStatus(m.id, m.title, 'IN_PROGRESS')}>Start</button>}{' '}
                    {m.status !== 'CLOSED' && <button type="button" disabled={upd.fetching} onClick={() => setStatus(m.id, m.title, 'CLOSED')}>Close</button>}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      <Pager pageInfo={data?.maintenances.pageInfo} total={data?.maintenances.totalCount} pager={pager} />
    </div>
  );
}
