// Cordon (with a reason), uncordon and drain a node; the drain's report is shown below the buttons.
// Re-enroll its agent: the old agent's token is revoked and a one-time join token shown.
// A node that is not READY cannot confirm its VMs stopped: it is drained with force, once fenced.
import { useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { useMutation } from 'urql';
import { graphql } from '../../gql';
import type { DrainNodeMutation } from '../../gql/graphql';
import { Problem } from '../Problem';
import { DrainReportView } from './DrainReportView';
import { drainNeedsForce } from '../../lib/compute/vmStatus';

const CordonDocument = graphql(`
  mutation CordonNode($id: ID!, $reason: String) {
    cordonNode(id: $id, reason: $reason) { id updatedAt schedulable cordonReason drainState }
  }
`);
const UncordonDocument = graphql(`
  mutation UncordonNode($id: ID!) {
    uncordonNode(id: $id) { id updatedAt schedulable cordonReason drainState drainMessage }
  }
`);
const DrainDocument = graphql(`
  mutation DrainNode($id: ID!, $timeoutSeconds: Int, $force: Boolean) {
    drainNode(id: $id, timeoutSeconds: $timeoutSeconds, force: $force) {
      node { id updatedAt schedulable cordonReason drainState drainMessage drainDeadline drainUnmovable { vmID vmName reason } drainForced }
      maintenance { id title status startsAt }
      unmovable { reason virtualMachine { id name status } }
      moving { id name status }
    }
  }
`);

const ReenrollDocument = graphql(`
  mutation ReenrollComputeNode($id: ID!) {
    reenrollComputeNode(id: $id) { token revokedTokens joinToken { id prefix expiresAt } }
  }
`);

export function NodeActions({ node }: { node: { id: string; name: string; status: string; schedulable: boolean; drainState?: string | null } }) {
  const [reason, setReason] = useState('');
  const [timeoutMin, setTimeoutMin] = useState('30');
  const [report, setReport] = useState<DrainNodeMutation['drainNode'] | null>(null);
  const [cordon, doCordon] = useMutation(CordonDocument);
  const [uncordon, doUncordon] = useMutation(UncordonDocument);
  const [drain, doDrain] = useMutation(DrainDocument);
  const [reenroll, doReenroll] = useMutation(ReenrollDocument);
  const busy = cordon.fetching || uncordon.fetching || drain.fetching || reenroll.fetching;
  async function submitReenroll() {
    if (!window.confirm(`Re-enroll the agent of ${node.name}? Its current agent token is revoked now: that agent stops working. ` +
      'You get a one-time join token for the new agent (--join-token).')) return;
    await doReenroll({ id: node.id });
  }
  const joinToken = reenroll.data?.reenrollComputeNode;

  function submitCordon(e: FormEvent) {
    e.preventDefault();
    doCordon({ id: node.id, reason: reason.trim() || null }).then((r) => !r.error && setReason(''));
  }
  const needsForce = drainNeedsForce(node.status);
  async function submitDrain(force: boolean) {
    const question = force
      ? `Drain ${node.name} with force? It is ${node.status.replace(/_/g, ' ').toLowerCase()} and cannot confirm that its VMs stopped: ` +
        'they are started on other nodes at once, so only do this when the node is fenced (powered off). Its agent removes the old copies if it comes back.'
      : `Drain ${node.name}? It is cordoned and its VMs are moved to other nodes.`;
    if (!window.confirm(question)) return;
    const mins = Number(timeoutMin);
    const r = await doDrain({ id: node.id, timeoutSeconds: Number.isFinite(mins) && mins > 0 ? Math.round(mins * 60) : undefined, force: force || undefined });
    if (r.data) setReport(r.data.drainNode);
  }

  return (
    <div>
      {node.schedulable ? (
        <form className="actions" onSubmit={submitCordon} aria-label="Cordon">
          <label style={{ flex: 1 }}>
            Cordon reason
            <input name="reason" value={reason} placeholder="e.g. replacing a DIMM" onChange={(e) => setReason(e.target.value)} />
          </label>
          <button type="submit" disabled={busy}>Cordon</button>
        </form>
      ) : (
        <div className="actions">
          <button type="button" disabled={busy} onClick={() => doUncordon({ id: node.id })}>Uncordon</button>
          {node.drainState === 'DRAINING' && <span className="muted small">uncordoning ends the drain</span>}
        </div>
      )}
      <div className="actions" style={{ marginTop: '.75rem' }}>
        <label>
          Drain timeout (min)
          <input type="number" min={1} value={timeoutMin} style={{ width: '7rem' }} onChange={(e) => setTimeoutMin(e.target.value)} />
        </label>
        <button type="button" className="danger" disabled={busy || node.drainState === 'DRAINING'} onClick={() => submitDrain(false)}>Drain</button>
        {needsForce && (
          <button type="button" className="danger" disabled={busy} onClick={() => submitDrain(true)}
            title="The node cannot confirm its VMs stopped: they are recreated elsewhere at once">
            Drain with force (node is fenced)
          </button>
        )}
      </div>
      <div className="actions" style={{ marginTop: '.75rem' }}>
        <button type="button" disabled={busy} onClick={submitReenroll}
          title="Revoke this node's agent token and make a join token for a new agent">Re-enroll agent</button>
      </div>
      {joinToken && (
        <p className="small" role="status">
          {joinToken.revokedTokens} agent token(s) revoked. Join token for the new agent (shown once, expires {joinToken.joinToken.expiresAt}):{' '}
          <code>{joinToken.token}</code>
        </p>
      )}
      <Problem error={cordon.error ?? uncordon.error ?? drain.error ?? reenroll.error} />
      {report && <DrainReportView report={report} />}
      {report?.maintenance && (
        <p className="small">Maintenance record: <Link to={`/maintenance?id=${report.maintenance.id}`}>{report.maintenance.title}</Link></p>
      )}
    </div>
  );
}
