// Silences: the active and recent ones (matchers, window, who, why), a form to create one —
// prefilled from an alert's "Silence" (?node=…&host=…&check=…) — and "Expire" to end one now.
// Maintenance, cordons and drains silence their nodes on their own (see the Monitoring README).
import { useState, type FormEvent } from 'react';
import { useSearchParams } from 'react-router';
import { useMutation, useQuery } from 'urql';
import { graphql } from '../../gql';
import { Message, Problem } from '../../components/Problem';
import { Loading } from '../../components/Loading';
import { Pager, usePager } from '../../components/Pager';
import { RelTime } from '../../components/ops/RelTime';
import { useAuth } from '../../api/auth';
import '../../components/ops/ops.css';

const SilencesDocument = graphql(`
  query SilencesList($first: Int, $after: Cursor, $last: Int, $before: Cursor) {
    silences(first: $first, after: $after, last: $last, before: $before, orderBy: { field: ENDS_AT, direction: DESC }) {
      totalCount
      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
      edges { node { id checkNamePattern nodePattern hostPattern labelMatchers startsAt endsAt createdBy comment } }
    }
  }
`);
const CreateSilenceDocument = graphql(`
  mutation CreateSilence($input: CreateSilenceInput!) {
    createSilence(input: $input) { id endsAt createdBy }
  }
`);
const ExpireSilenceDocument = graphql(`
  mutation ExpireSilence($id: ID!, $input: UpdateSilenceInput!) {
    updateSilence(id: $id, input: $input) { id endsAt }
  }
`);

/** Now, plus a second in case the server's clock runs a little ahead of the browser's. */
function aheadOfNow(): number {
  return Date.now() + 1000;
}

export default function SilencesPage() {
  const pager = usePager(25);
  const [params] = useSearchParams();
  const { isOperator } = useAuth();
  const [{ data, error, fetching }, refetch] = useQuery({ query: SilencesDocument, variables: pager.vars });
  const [created, create] = useMutation(CreateSilenceDocument);
  const [expired, expire] = useMutation(ExpireSilenceDocument);
  const [node, setNode] = useState(params.get('node') ?? '*');
  const [host, setHost] = useState(params.get('host') ?? '*');
  const [check, setCheck] = useState(params.get('check') ?? '*');
  const [hours, setHours] = useState('2');
  const [comment, setComment] = useState('');
  const [msg, setMsg] = useState('');
  // when the list was last asked for: what is active is judged against it
  const [now, setNow] = useState(() => Date.now());

  async function submit(e: FormEvent) {
    e.preventDefault();
    setMsg('');
    const h = Number(hours);
    if (!comment.trim()) return setMsg('Say why (the comment is required).');
    if (!(h > 0 && h <= 720)) return setMsg('A silence lasts between a few minutes and 30 days (720 hours).');
    const r = await create({
      input: { nodePattern: node || '*', hostPattern: host || '*', checkNamePattern: check || '*', comment: comment.trim(),
        endsAt: new Date(Date.now() + h * 3600_000).toISOString() },
    });
    if (r.data) {
      setComment('');
      setMsg(`Silence created by ${r.data.createSilence.createdBy}.`);
      setNow(aheadOfNow());
      refetch({ requestPolicy: 'network-only' });
    }
  }

  async function onExpire(id: string) {
    if (!window.confirm('End this silence now?')) return;
    const r = await expire({ id, input: { endsAt: new Date().toISOString() } });
    if (r.data) {
      setNow(aheadOfNow());
      refetch({ requestPolicy: 'network-only' });
    }
  }

  const rows = data?.silences.edges?.flatMap((e) => (e?.node ? [e.node] : [])) ?? [];
  return (
    <div>
      <h1>Silences</h1>
      <p className="muted small">
        Events matching an active silence are stored flagged and nothing acts on them. Nodes and hosts under open
        maintenance, and cordoned or draining nodes, are silenced without a row here.
      </p>
      {isOperator && (
        <form className="card" onSubmit={submit} aria-label="New silence" style={{ marginBottom: '.75rem' }}>
          <h2 style={{ marginTop: 0 }}>New silence</h2>
          <div className="fields">
            <label>Node pattern<input value={node} onChange={(e) => setNode(e.target.value)} maxLength={256} /></label>
            <label>Host pattern<input value={host} onChange={(e) => setHost(e.target.value)} maxLength={256} /></label>
            <label>Check pattern<input value={check} onChange={(e) => setCheck(e.target.value)} maxLength={256} /></label>
            <label>Hours<input type="number" min="0.1" max="720" step="0.1" value={hours} onChange={(e) => setHours(e.target.value)} /></label>
            <label>Comment<input value={comment} onChange={(e) => setComment(e.target.value)} required maxLength={4096} placeholder="kernel update" /></label>
          </div>
          <button type="submit" disabled={created.fetching}>Create silence</button>
          <Problem error={created.error} />
          {msg && <Message>{msg}</Message>}
        </form>
      )}
      <Problem error={error ?? expired.error} />
      {!data && fetching && <Loading />}
      {data && rows.length === 0 && <p className="muted">No silences.</p>}
      {rows.length > 0 && (
        <table className="ops-table" aria-label="Silences">
          <thead>
            <tr><th>Matches</th><th>Window</th><th>By</th><th>Comment</th><th /></tr>
          </thead>
          <tbody>
            {rows.map((s) => {
              const active = Date.parse(s.startsAt) <= now && Date.parse(s.endsAt) > now;
              return (
                <tr key={s.id} data-testid={`silence-${s.id}`}>
                  <td className="small">node {s.nodePattern} · host {s.hostPattern} · check {s.checkNamePattern}</td>
                  <td className="small nowrap">
                    {active ? <strong>active</strong> : Date.parse(s.endsAt) <= now ? 'ended' : 'planned'}
                    {' '}until <RelTime iso={s.endsAt} />
                  </td>
                  <td className="small">{s.createdBy}</td>
                  <td>{s.comment}</td>
                  <td>{isOperator && active && <button type="button" disabled={expired.fetching} onClick={() => onExpire(s.id)}>Expire</button>}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      <Pager pageInfo={data?.silences.pageInfo} total={data?.silences.totalCount} pager={pager} />
    </div>
  );
}
