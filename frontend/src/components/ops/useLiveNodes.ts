// Live node status: every nodeStatusChanged event (optionally for one cluster) kept by node id,
// so lists can overlay the newest status on the rows they loaded.
import { useSubscription } from 'urql';
import { graphql } from '../../gql';
import type { LiveNodeStatusSubscription } from '../../gql/graphql';

const LiveNodeStatusDocument = graphql(`
  subscription LiveNodeStatus($id: ID, $clusterID: ID) {
    nodeStatusChanged(id: $id, clusterID: $clusterID) {
      id updatedAt status statusReason schedulable cordonReason drainState drainMessage drainDeadline drainUnmovable { vmID vmName reason } lastHeartbeatAt
      cpuCapacity cpuAllocated memoryCapacityMB memoryAllocatedMB diskCapacityGB diskAllocatedGB
    }
  }
`);

export type LiveNode = LiveNodeStatusSubscription['nodeStatusChanged'];

/**
 * Newest known state per node id (only nodes that changed since the page opened). With only,
 * events for other nodes are dropped, so a big fleet's heartbeats cost nothing off-page.
 */
export function useLiveNodes(clusterID?: string, id?: string, only?: ReadonlySet<string>): Record<string, LiveNode> {
  const [{ data }] = useSubscription<LiveNodeStatusSubscription, Record<string, LiveNode>>(
    { query: LiveNodeStatusDocument, variables: { clusterID, id } },
    (prev = {}, ev) => (only && !only.has(ev.nodeStatusChanged.id) ? prev : { ...prev, [ev.nodeStatusChanged.id]: ev.nodeStatusChanged }),
  );
  return data ?? {};
}
