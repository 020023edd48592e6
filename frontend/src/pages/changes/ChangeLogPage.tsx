// /changes: the audit log as a change log: who did what to which object and when, filtered by
// actor, object type and id, action and time (kept in the URL, so object pages link to their
// history), each row expandable to a before/after diff of the object.
import { useState } from 'react';
import { Link } from 'react-router';
import { useQuery } from 'urql';
import { graphql } from '../../gql';
import type { AuditLogWhereInput, ChangeLogQuery } from '../../gql/graphql';
import { Problem } from '../../components/Problem';
import { Loading } from '../../components/Loading';
import { Pager, usePager } from '../../components/Pager';
import { RelTime } from '../../components/ops/RelTime';
import { useParamFilters } from '../../components/ops/useParamFilters';
import { resourcePath, typeLabel } from '../../lib/ops/resources';
import { diff } from '../../lib/changes/diff';
import { formatDateTime, formatNumber, fromLocalInput } from '../../lib/format';
import './changes.css';

const ChangeLogDocument = graphql(`
  query ChangeLog($first: Int, $after: Cursor, $last: Int, $before: Cursor, $where: AuditLogWhereInput) {
    auditLogs(first: $first, after: $after, last: $last, before: $before, where: $where, orderBy: { field: CREATED_AT, direction: DESC }) {
      totalCount
      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
      edges { node { id createdAt actor action objectType objectID tenantID before after requestID sourceIP } }
    }
  }
`);

type Row = NonNullable<NonNullable<NonNullable<ChangeLogQuery['auditLogs']['edges']>[number]>['node']>;

/** Object types an operator edits, for the filter (any other can be typed in the URL). */
const TYPES = [
  'Datacenter', 'Floor', 'Rack', 'Host', 'Port', 'Link', 'Network', 'IPAddress', 'IPRange', 'ComputeNode', 'Cluster',
  'VirtualMachine', 'RegionService', 'Tenant', 'Quota', 'User', 'RoleBinding', 'APIToken', 'Maintenance', 'Alert',
];

/** Hides routine telemetry from the agents unless asked for: heartbeats and the status
 * reports node agents send (nodeagent/operations.graphql's mutations). */
export const AGENT_NOISE = [
  'reportNodeStatus', 'heartbeat', 'reportVMStatus', 'reportAssignmentStatus', 'reportEvents', 'reportLoadBalancerState',
];

/** The where filter of the page's URL parameters. */
export function whereOf(get: (k: string) => string): AuditLogWhereInput {
  const w: AuditLogWhereInput = {};
  if (get('actor')) w.actorContainsFold = get('actor');
  if (get('objectType')) w.objectType = get('objectType');
  const id = Number(get('objectID'));
  if (get('objectID') && Number.isInteger(id)) w.objectID = id;
  if (get('action')) w.actionContainsFold = get('action');
  const since = fromLocalInput(get('since'));
  if (since) w.createdAtGTE = since;
  const until = fromLocalInput(get('until'));
  if (until) w.createdAtLTE = until;
  if (!get('agents')) w.actionNotIn = AGENT_NOISE;
  return w;
}

function Diff({ row }: { row: Row }) {
  const [all, setAll] = useState(false);
  const fields = diff(row.before, row.after, all);
  return (
    <div className="change-diff" data-testid="change-diff">
      <div className="row small muted">
        <span>{formatDateTime(row.createdAt)}</span>
        {row.requestID && <span>request {row.requestID}</span>}
        {row.sourceIP && <span>from {row.sourceIP}</span>}
        <label className="inline">
          <input type="checkbox" checked={all} onChange={(e) => setAll(e.target.checked)} /> unchanged fields too
        </label>
      </div>
      {fields.length === 0 ? (
        <p className="muted small">No field changed{row.before || row.after ? '' : ': this change recorded no snapshot'}.</p>
      ) : (
        <table aria-label="Before and after">
          <thead>
            <tr>
              <th>Field</th>
              <th>Before</th>
              <th>After</th>
            </tr>
          </thead>
          <tbody>
            {fields.map((f) => (
              <tr key={f.path} className={`diff-${f.kind}`} data-field={f.path}>
                <td>
                  <code>{f.path}</code>
                </td>
                <td className="diff-before">{f.before ?? <span className="muted">—</span>}</td>
                <td className="diff-after">{f.after ?? <span className="muted">—</span>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}

export default function ChangeLogPage() {
  const pager = usePager(50);
  const f = useParamFilters(pager.reset);
  const where = whereOf(f.get);
  const [{ data, error, fetching }] = useQuery({ query: ChangeLogDocument, variables: { ...pager.vars, where } });
  const [open, setOpen] = useState<string | null>(null);
  const rows = data?.auditLogs.edges?.flatMap((e) => (e?.node ? [e.node] : [])) ?? [];
  const text = (key: string, label: string, placeholder?: string) => (
    <label>
      {label}
      <input value={f.get(key)} placeholder={placeholder} onChange={(e) => f.set(key, e.target.value)} />
    </label>
  );
  return (
    <div>
      <h1>Change log</h1>
      <form className="filters" aria-label="Filter changes" onSubmit={(e) => e.preventDefault()}>
        {text('actor', 'Who', 'user or system')}
        <label>
          Object type
          <select value={f.get('objectType')} onChange={(e) => f.set('objectType', e.target.value)}>
            <option value="">any</option>
            {[...new Set([...TYPES, f.get('objectType')].filter(Boolean))].map((t) => (
              <option key={t} value={t}>
                {typeLabel(t)}
              </option>
            ))}
          </select>
        </label>
        {text('objectID', 'Object id')}
        {text('action', 'Action', 'e.g. update')}
        <label>
          Since
          <input type="datetime-local" value={f.get('since')} onChange={(e) => f.set('since', e.target.value)} />
        </label>
        <label>
          Until
          <input type="datetime-local" value={f.get('until')} onChange={(e) => f.set('until', e.target.value)} />
        </label>
        <label className="inline">
          <span>
            <input type="checkbox" checked={!!f.get('agents')} onChange={(e) => f.set('agents', e.target.checked ? '1' : '')} /> agent reports
          </span>
        </label>
      </form>
      <Problem error={error} />
      {fetching && !data && <Loading />}
      {data && rows.length === 0 && <p className="muted">No change matches these filters.</p>}
      {rows.length > 0 && (
        <table aria-label="Changes" className="changes">
          <thead>
            <tr>
              <th>When</th>
              <th>Who</th>
              <th>What</th>
              <th>Object</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => {
              const to = resourcePath(r.objectType, r.objectID);
              const what = r.objectType ? `${typeLabel(r.objectType)} ${r.objectID ?? ''}` : '—';
              const isOpen = open === r.id;
              return [
                <tr key={r.id} data-testid="change" data-action={r.action} data-object={`${r.objectType ?? ''}:${r.objectID ?? ''}`}>
                  <td className="nowrap">
                    <RelTime iso={r.createdAt} />
                  </td>
                  <td>{r.actor}</td>
                  <td>
                    <code>{r.action}</code>
                  </td>
                  <td>{to ? <Link to={to}>{what}</Link> : <span>{what}</span>}</td>
                  <td>
                    <button type="button" className="link" aria-expanded={isOpen} onClick={() => setOpen(isOpen ? null : r.id)}>
                      {isOpen ? 'Hide diff' : 'Diff'}
                    </button>
                  </td>
                </tr>,
                isOpen && (
                  <tr key={r.id + '-diff'}>
                    <td colSpan={5}>
                      <Diff row={r} />
                    </td>
                  </tr>
                ),
              ];
            })}
          </tbody>
        </table>
      )}
      <Pager pageInfo={data?.auditLogs.pageInfo} total={data?.auditLogs.totalCount} pager={pager} />
      {data && <p className="muted small">{formatNumber(data.auditLogs.totalCount)} changes match.</p>}
    </div>
  );
}
