// Operators: plan a maintenance (createMaintenance) — title, description, when, and the compute
// node it concerns when opened from a node's page (/maintenance?plan=<node id>). The server
// records who opened it.
import { useState, type FormEvent } from 'react';
import { useMutation, useQuery } from 'urql';
import { graphql } from '../../gql';
import { Message, Problem } from '../Problem';
import { fromLocalInput, toLocalInput } from '../../lib/format';

const PlanNodeDocument = graphql(`
  query PlanMaintenanceNode($id: ID!) {
    node(id: $id) { ... on ComputeNode { id name } }
  }
`);
const CreateMaintenanceDocument = graphql(`
  mutation PlanMaintenance($input: CreateMaintenanceInput!) {
    createMaintenance(input: $input) { id title status startsAt endsAt openedBy }
  }
`);

/** The next full hour from now. */
function nextHour(): Date {
  const d = new Date(Date.now() + 3600_000);
  d.setMinutes(0, 0, 0);
  return d;
}

/** The plan form; nodeID preselects the node; onPlanned gets the new record's id. */
export function PlanMaintenanceForm({ nodeID, onPlanned, onCancel }: { nodeID?: string; onPlanned: (id: string) => void; onCancel: () => void }) {
  const [node] = useQuery({ query: PlanNodeDocument, variables: { id: nodeID ?? '' }, pause: !nodeID });
  const [created, create] = useMutation(CreateMaintenanceDocument);
  const [title, setTitle] = useState('');
  const [description, setDescription] = useState('');
  const [starts, setStarts] = useState(() => toLocalInput(nextHour()));
  const [ends, setEnds] = useState('');
  const [msg, setMsg] = useState('');
  const target = node.data?.node?.__typename === 'ComputeNode' ? node.data.node : null;

  async function submit(e: FormEvent) {
    e.preventDefault();
    setMsg('');
    const startsAt = fromLocalInput(starts);
    const endsAt = ends ? fromLocalInput(ends) : null;
    if (!title.trim()) return setMsg('Give the maintenance a title.');
    if (!startsAt) return setMsg('Say when it starts.');
    if (ends && !endsAt) return setMsg('The end is not a valid time.');
    const r = await create({
      input: { title: title.trim(), description: description.trim() || undefined, startsAt, endsAt, nodeIDs: target ? [target.id] : undefined },
    });
    if (r.data) onPlanned(r.data.createMaintenance.id);
  }

  return (
    <form className="card" onSubmit={submit} aria-label="Plan maintenance" style={{ marginBottom: '.75rem' }}>
      <h3 style={{ marginTop: 0 }}>Plan maintenance{target ? ` of ${target.name}` : ''}</h3>
      <Problem error={node.error} title="The node could not be read" />
      <div className="fields">
        <label>Title<input value={title} onChange={(e) => setTitle(e.target.value)} required maxLength={256} placeholder="replace PSU 2" /></label>
        <label>Description<input value={description} onChange={(e) => setDescription(e.target.value)} /></label>
        <label>Starts<input type="datetime-local" value={starts} onChange={(e) => setStarts(e.target.value)} required /></label>
        <label>Ends<input type="datetime-local" value={ends} onChange={(e) => setEnds(e.target.value)} /></label>
      </div>
      <div className="form-actions">
        <button type="submit" className="primary" disabled={created.fetching}>{created.fetching ? 'Planning…' : 'Plan'}</button>
        <button type="button" onClick={onCancel}>Cancel</button>
      </div>
      {msg && <Message kind="error">{msg}</Message>}
      <Problem error={created.error} title="The maintenance was not planned" />
    </form>
  );
}
