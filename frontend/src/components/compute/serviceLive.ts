// Live region service status: the regionServiceStatusChanged subscription, accumulated as the
// latest event per service id.
import { useSubscription } from 'urql';
import { graphql } from '../../gql';
import type { ServiceEventFragment } from '../../gql/graphql';
import { addEvent } from '../../lib/compute/live';

export const ServiceEventFragmentDoc = graphql(`
  fragment ServiceEvent on RegionService {
    id
    name
    status
    statusReason
    statusChangedAt
    updatedAt
    replicas
    allowPartial
    tenant { id name }
    region { id name }
    flavor { id name }
    image { id name }
  }
`);

const ServiceStatusDocument = graphql(`
  subscription ServiceStatusChanged($id: ID, $tenantID: ID) {
    regionServiceStatusChanged(id: $id, tenantID: $tenantID) { ...ServiceEvent }
  }
`);

export type ServiceEvent = ServiceEventFragment;

/** The latest event per service id since mount. */
export function useServiceEvents(filter: { id?: string; tenantID?: string } = {}) {
  const [{ data, error }] = useSubscription(
    { query: ServiceStatusDocument, variables: filter },
    (prev: Record<string, ServiceEvent> | undefined, ev) => addEvent(prev, ev.regionServiceStatusChanged),
  );
  return { events: data, error };
}
