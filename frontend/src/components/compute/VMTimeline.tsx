// The status timeline of a VM: its transitions from the audit log (who, when, from what to
// what, and why), newest first, read again whenever the VM's status changes. The audit log is
// read by administrators and tenant admins only; for anyone else (a tenant member) the API
// answers FORBIDDEN and the page simply has no timeline, rather than an error box.
import { useEffect } from 'react';
import { Link } from 'react-router';
import { useQuery } from 'urql';
import { graphql } from '../../gql';
import { Problem } from '../Problem';
import { problems } from '../../api/errors';
import { StatusBadge } from '../StatusBadge';
import { statusTimeline } from '../../lib/compute/timeline';
import { formatDateTime } from '../../lib/format';

const VMTimelineDocument = graphql(`
  query VMTimeline($id: Int!) {
    auditLogs(first: 100, where: { objectType: "VirtualMachine", objectID: $id }, orderBy: { field: CREATED_AT, direction: DESC }) {
      edges { node { id createdAt actor action before after } }
    }
  }
`);

/** The timeline of VM id; status is its current status, to refresh on a change. */
export function VMTimeline({ id, status }: { id: string; status: string }) {
  const [{ data, error }, reexecute] = useQuery({ query: VMTimelineDocument, variables: { id: Number(id) } });
  useEffect(() => {
    reexecute({ requestPolicy: 'network-only' });
  }, [status, reexecute]);
  const rows = (data?.auditLogs.edges ?? []).flatMap((e) => (e?.node ? [e.node] : []));
  const steps = statusTimeline(rows).reverse();
  if (!data && !error) return null;
  if (problems(error).some((p) => p.code === 'FORBIDDEN')) return null;
  return (
    <section className="card" aria-labelledby="vm-timeline">
      <div className="spread">
        <h2 id="vm-timeline">Status timeline</h2>
        <Link to={`/changes?objectType=VirtualMachine&objectID=${encodeURIComponent(id)}`}>History</Link>
      </div>
      <Problem error={error} title="The timeline could not be loaded" />
      {data && steps.length === 0 && <p className="muted">No status change recorded.</p>}
      <ol className="vm-timeline">
        {steps.map((s) => (
          <li key={s.id} data-testid="timeline-step" data-to={s.to}>
            <time dateTime={s.at}>{formatDateTime(s.at)}</time>{' '}
            {s.from && <><StatusBadge status={s.from} /> → </>}
            <StatusBadge status={s.to} /> <span className="muted">by</span> <strong>{s.actor}</strong>{' '}
            <code>{s.action}</code>
            {s.reason && <div className="small">{s.reason}</div>}
          </li>
        ))}
      </ol>
    </section>
  );
}
