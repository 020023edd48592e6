// Event rules: the list in the order the workers run them (kind, then priority), each with its
// matchers and what it does; operators create one, edit one in the same form, and switch one
// on or off (createEventRule, updateEventRule).
import { useState, type FormEvent } from 'react';
import { useMutation, useQuery } from 'urql';
import { graphql } from '../../gql';
import type { EventRuleKind, EventRuleAction, EventRuleAlertSeverity, EventRuleStatusMatch } from '../../gql/graphql';
import { Message, Problem } from '../../components/Problem';
import { Loading } from '../../components/Loading';
import { useAuth } from '../../api/auth';
import '../../components/ops/ops.css';

const RulesDocument = graphql(`
  query EventRulesList {
    eventRules(first: 200, orderBy: { field: PRIORITY, direction: ASC }) {
      totalCount
      edges {
        node {
          id name description kind priority enabled action alertSeverity statusMatch checkNamePattern nodePattern hostPattern
          rackPattern clusterPattern occurrences reissueSeconds hookURL groupBy aggregateWindowSeconds groupIntervalSeconds
        }
      }
    }
  }
`);
const CreateRuleDocument = graphql(`
  mutation CreateEventRule($input: CreateEventRuleInput!) {
    createEventRule(input: $input) { id name }
  }
`);
const UpdateRuleDocument = graphql(`
  mutation UpdateEventRule($id: ID!, $input: UpdateEventRuleInput!) {
    updateEventRule(id: $id, input: $input) { id name enabled }
  }
`);

const KINDS: EventRuleKind[] = ['FILTER', 'SILENCE', 'AGGREGATE', 'ACTION'] as EventRuleKind[];
const ACTIONS: EventRuleAction[] = ['CREATE_ALERT', 'RESOLVE_ALERT', 'CALL_HOOK'] as EventRuleAction[];

type Draft = {
  name: string; kind: string; action: string; severity: string; status: string; check: string; node: string; host: string;
  rack: string; cluster: string; occurrences: string; reissue: string; hookURL: string; groupBy: string; window: string; priority: string;
};
const empty: Draft = { name: '', kind: 'ACTION', action: 'CREATE_ALERT', severity: '', status: '', check: '*', node: '*', host: '*',
  rack: '*', cluster: '*', occurrences: '1', reissue: '0', hookURL: '', groupBy: '', window: '0', priority: '100' };

export default function RulesPage() {
  const { isOperator } = useAuth();
  const [{ data, error, fetching }, refetch] = useQuery({ query: RulesDocument });
  const [created, create] = useMutation(CreateRuleDocument);
  const [updated, update] = useMutation(UpdateRuleDocument);
  const [editing, setEditing] = useState<string | null>(null);
  const [d, setD] = useState<Draft>(empty);
  const [msg, setMsg] = useState('');
  const set = (k: keyof Draft) => (e: { target: { value: string } }) => setD({ ...d, [k]: e.target.value });
  const rows = data?.eventRules.edges?.flatMap((e) => (e?.node ? [e.node] : [])) ?? [];
  const ordered = [...rows].sort((a, b) => KINDS.indexOf(a.kind) - KINDS.indexOf(b.kind) || a.priority - b.priority);

  function edit(id: string) {
    const r = rows.find((x) => x.id === id);
    if (!r) return;
    setEditing(id);
    setMsg('');
    setD({ name: r.name, kind: r.kind, action: r.action ?? '', severity: r.alertSeverity ?? '', status: r.statusMatch ?? '',
      check: r.checkNamePattern, node: r.nodePattern, host: r.hostPattern, rack: r.rackPattern, cluster: r.clusterPattern,
      occurrences: String(r.occurrences), reissue: String(r.reissueSeconds), hookURL: r.hookURL ?? '', groupBy: (r.groupBy ?? []).join(','),
      window: String(r.aggregateWindowSeconds), priority: String(r.priority) });
  }

  async function submit(e: FormEvent) {
    e.preventDefault();
    setMsg('');
    if (!d.name.trim()) return setMsg('Give the rule a name.');
    const common = {
      name: d.name.trim(), priority: Number(d.priority), checkNamePattern: d.check || '*', nodePattern: d.node || '*', hostPattern: d.host || '*',
      rackPattern: d.rack || '*', clusterPattern: d.cluster || '*', occurrences: Number(d.occurrences) || 1,
      reissueSeconds: Number(d.reissue) || 0, aggregateWindowSeconds: Number(d.window) || 0,
      groupBy: d.groupBy ? d.groupBy.split(',').map((s) => s.trim()).filter(Boolean) : undefined,
      hookURL: d.hookURL || undefined,
    };
    const action = d.kind === 'ACTION' || d.kind === 'AGGREGATE' ? ((d.action || undefined) as EventRuleAction | undefined) : undefined;
    const severity = (d.severity || undefined) as EventRuleAlertSeverity | undefined;
    const status = (d.status || undefined) as EventRuleStatusMatch | undefined;
    const r = editing
      ? await update({ id: editing, input: { ...common, action, alertSeverity: severity, statusMatch: status } })
      : await create({ input: { ...common, kind: d.kind as EventRuleKind, action, alertSeverity: severity, statusMatch: status } });
    if (r.data) {
      setMsg(editing ? 'Rule saved.' : 'Rule created.');
      setEditing(null);
      setD(empty);
      refetch({ requestPolicy: 'network-only' });
    }
  }

  async function toggle(id: string, enabled: boolean) {
    const r = await update({ id, input: { enabled: !enabled } });
    if (r.data) refetch({ requestPolicy: 'network-only' });
  }

  return (
    <div>
      <h1>Event rules</h1>
      <p className="muted small">The workers run FILTER, SILENCE, AGGREGATE and ACTION rules in that order, then by priority (lowest first).</p>
      {isOperator && (
        <form className="card" onSubmit={submit} aria-label={editing ? 'Edit rule' : 'New rule'} style={{ marginBottom: '.75rem' }}>
          <h2 style={{ marginTop: 0 }}>{editing ? `Edit rule ${d.name}` : 'New rule'}</h2>
          <div className="fields">
            <label>Name<input value={d.name} onChange={set('name')} required maxLength={128} /></label>
            <label>Kind
              <select value={d.kind} onChange={set('kind')} disabled={!!editing}>
                {KINDS.map((k) => <option key={k} value={k}>{k.toLowerCase()}</option>)}
              </select>
            </label>
            <label>Action
              <select value={d.action} onChange={set('action')}>
                <option value="">none</option>
                {ACTIONS.map((k) => <option key={k} value={k}>{k.replace(/_/g, ' ').toLowerCase()}</option>)}
              </select>
            </label>
            <label>Status
              <select value={d.status} onChange={set('status')}>
                <option value="">any</option><option value="SUCCESS">success</option><option value="WARNING">warning</option><option value="CRITICAL">critical</option>
              </select>
            </label>
            <label>Alert severity
              <select value={d.severity} onChange={set('severity')}>
                <option value="">from the event</option><option value="FATAL">fatal</option><option value="CRITICAL">critical</option><option value="WARNING">warning</option>
              </select>
            </label>
            <label>Check pattern<input value={d.check} onChange={set('check')} /></label>
            <label>Node pattern<input value={d.node} onChange={set('node')} /></label>
            <label>Host pattern<input value={d.host} onChange={set('host')} /></label>
            <label>Rack pattern<input value={d.rack} onChange={set('rack')} /></label>
            <label>Cluster pattern<input value={d.cluster} onChange={set('cluster')} /></label>
            <label>Occurrences<input type="number" min="1" value={d.occurrences} onChange={set('occurrences')} /></label>
            <label>Reissue (s)<input type="number" min="0" value={d.reissue} onChange={set('reissue')} /></label>
            <label>Priority<input type="number" min="0" max="10000" value={d.priority} onChange={set('priority')} /></label>
            <label>Hook URL<input type="url" value={d.hookURL} onChange={set('hookURL')} placeholder="https://pager.example/hook" /></label>
            <label>Group by<input value={d.groupBy} onChange={set('groupBy')} placeholder="rack,check" /></label>
            <label>Group wait (s)<input type="number" min="0" value={d.window} onChange={set('window')} /></label>
          </div>
          <button type="submit" disabled={created.fetching || updated.fetching}>{editing ? 'Save rule' : 'Create rule'}</button>{' '}
          {editing && <button type="button" onClick={() => { setEditing(null); setD(empty); }}>Cancel</button>}
          <Problem error={created.error ?? updated.error} />
          {msg && <Message>{msg}</Message>}
        </form>
      )}
      <Problem error={error} />
      {!data && fetching && <Loading />}
      {data && rows.length === 0 && <p className="muted">No rules: events are stored and nothing acts on them.</p>}
      {rows.length > 0 && (
        <table className="ops-table" aria-label="Event rules">
          <thead><tr><th>Rule</th><th>Kind</th><th>Matches</th><th>Does</th><th>Enabled</th><th /></tr></thead>
          <tbody>
            {ordered.map((r) => (
              <tr key={r.id} data-testid={`rule-${r.name}`}>
                <td><strong>{r.name}</strong> <span className="small muted">#{r.priority}</span></td>
                <td>{r.kind.toLowerCase()}</td>
                <td className="small">
                  check {r.checkNamePattern}{r.statusMatch ? ` · ${r.statusMatch.toLowerCase()}` : ''} · node {r.nodePattern} · host {r.hostPattern}
                  {r.rackPattern !== '*' && ` · rack ${r.rackPattern}`}{r.clusterPattern !== '*' && ` · cluster ${r.clusterPattern}`}
                </td>
                <td className="small">
                  {r.action ? r.action.replace(/_/g, ' ').toLowerCase() : '—'}
                  {r.hookURL && <div className="muted">{r.hookURL}</div>}
                  {r.occurrences > 1 && <div className="muted">after {r.occurrences} in a row</div>}
                  {r.reissueSeconds > 0 && <div className="muted">reissue after {r.reissueSeconds} s</div>}
                  {r.groupBy && r.groupBy.length > 0 && <div className="muted">group by {r.groupBy.join(', ')}, wait {r.aggregateWindowSeconds} s</div>}
                </td>
                <td>{r.enabled ? 'yes' : 'no'}</td>
                <td className="nowrap">
                  {isOperator && <button type="button" onClick={() => edit(r.id)}>Edit</button>}{' '}
                  {isOperator && <button type="button" disabled={updated.fetching} onClick={() => toggle(r.id, r.enabled)}>{r.enabled ? 'Disable' : 'Enable'}</button>}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
