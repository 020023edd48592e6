// Live VM status: the virtualMachineStatusChanged subscription, accumulated as the latest event
// per VM id (see lib/compute/live.ts for how events are laid over query results).
import { useSubscription } from 'urql';
import { graphql } from '../../gql';
import type { VmEventFragment } from '../../gql/graphql';
import { addEvent } from '../../lib/compute/live';
import { useInfraAccess } from './access';

export const VMEventFragment = graphql(`
  fragment VMEvent on VirtualMachine {
    id
    name
    status
    statusReason
    statusChangedAt
    guestState
    guestReadyAt
    guestHostname
    guestAddresses
    updatedAt
    allocatedVcpus
    allocatedMemoryMB
    allocatedDiskGB
    tenant { id name }
    flavor { id name vcpus memoryMB }
    node @include(if: $infra) { id name status }
    cluster @include(if: $infra) { id name }
    regionService { id }
  }
`);

const VMStatusDocument = graphql(`
  subscription VMStatusChanged($id: ID, $tenantID: ID, $clusterID: ID, $infra: Boolean!) {
    virtualMachineStatusChanged(id: $id, tenantID: $tenantID, clusterID: $clusterID) {
      ...VMEvent
    }
  }
`);

export type VMEvent = VmEventFragment;

/** The latest event per VM id since mount, for the VMs the filter selects. */
export function useVMEvents(filter: { id?: string; tenantID?: string; clusterID?: string } = {}, pause = false) {
  const { infra, known } = useInfraAccess();
  const [{ data, error }] = useSubscription(
    { query: VMStatusDocument, variables: { ...filter, infra }, pause: pause || !known },
    (prev: Record<string, VMEvent> | undefined, ev) => addEvent(prev, ev.virtualMachineStatusChanged),
  );
  return { events: data, error };
}
