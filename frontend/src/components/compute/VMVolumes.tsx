// A VM's volumes on its page: each with its size, type, status and reason (ATTACHING until the
// node's agent reports the domain has it), detach, and attaching one of the tenant's volumes
// that are free (PENDING, or AVAILABLE: then only on the VM's node, which the API checks).
import { useState } from 'react';
import { useMutation, useQuery } from 'urql';
import { graphql } from '../../gql';
import { Problem } from '../Problem';
import { StatusBadge } from '../StatusBadge';
import { formatSize } from '../../lib/format';

const VMVolumesDocument = graphql(`
  query VMVolumes($id: ID!, $tenant: ID!) {
    node(id: $id) {
      ... on VirtualMachine {
        id
        volumes(first: 32) { edges { node { id name sizeGB type status statusReason } } }
      }
    }
    free: volumes(first: 100, where: { hasTenantWith: { id: $tenant }, statusIn: [PENDING, AVAILABLE] }) {
      edges { node { id name sizeGB type status } }
    }
  }
`);

const AttachVolumeDocument = graphql(`
  mutation AttachVolume($id: ID!, $vm: ID!) {
    attachVolume(id: $id, virtualMachineID: $vm) { id status statusReason }
  }
`);

const DetachVolumeDocument = graphql(`
  mutation DetachVolume($id: ID!) {
    detachVolume(id: $id) { id status statusReason }
  }
`);

export function VMVolumes({ vmID, tenantID, refreshKey }: { vmID: string; tenantID: string; refreshKey?: string }) {
  const [{ data, error }, reexecute] = useQuery({ query: VMVolumesDocument, variables: { id: vmID, tenant: tenantID, refreshKey } as { id: string; tenant: string }, requestPolicy: 'cache-and-network' });
  const [attachState, attach] = useMutation(AttachVolumeDocument);
  const [detachState, detach] = useMutation(DetachVolumeDocument);
  const [chosen, setChosen] = useState('');
  const vm = data?.node?.__typename === 'VirtualMachine' ? data.node : null;
  const vols = (vm?.volumes.edges ?? []).flatMap((e) => (e?.node ? [e.node] : []));
  const free = (data?.free.edges ?? []).flatMap((e) => (e?.node ? [e.node] : []));
  const reload = () => reexecute({ requestPolicy: 'network-only' });
  return (
    <section aria-label="Volumes">
      <h2>Volumes</h2>
      <Problem error={error} title="The volumes could not be loaded" />
      <Problem error={attachState.error ?? detachState.error} title="The volume was not changed" />
      {vols.length === 0 ? <p className="muted">No volumes.</p> : (
        <table>
          <thead><tr><th>Name</th><th>Size</th><th>Type</th><th>Status</th><th>Reason</th><th></th></tr></thead>
          <tbody>
            {vols.map((v) => (
              <tr key={v.id}>
                <td>{v.name}</td>
                <td>{formatSize(v.sizeGB, 'GiB')}</td>
                <td>{v.type}</td>
                <td><StatusBadge status={v.status} /></td>
                <td className="muted small">{v.statusReason}</td>
                <td>
                  {(v.status === 'ATTACHED' || v.status === 'ATTACHING') && (
                    <button type="button" disabled={detachState.fetching} onClick={async () => { await detach({ id: v.id }); reload(); }}>
                      Detach {v.name}
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {free.length > 0 && (
        <form className="inline-form" aria-label="Attach a volume" onSubmit={async (e) => {
          e.preventDefault();
          if (!chosen) return;
          const r = await attach({ id: chosen, vm: vmID });
          if (!r.error) setChosen('');
          reload();
        }}>
          <label>
            Attach a volume
            <select value={chosen} onChange={(e) => setChosen(e.target.value)}>
              <option value="">choose…</option>
              {free.map((v) => <option key={v.id} value={v.id}>{v.name} ({v.sizeGB} GiB {v.type}, {v.status.toLowerCase()})</option>)}
            </select>
          </label>
          <button type="submit" disabled={!chosen || attachState.fetching}>Attach</button>
        </form>
      )}
    </section>
  );
}
