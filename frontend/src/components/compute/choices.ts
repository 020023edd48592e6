// The options of the compute forms and filters (tenants, regions, flavors, images, clusters),
// read once from the API.
import { useQuery } from 'urql';
import { graphql } from '../../gql';
import { useInfraAccess } from './access';
import { formatSize } from '../../lib/format';
import { exclusiveLabel } from '../../lib/compute/flavor';

const ChoicesDocument = graphql(`
  query ComputeChoices {
    tenants(first: 200, orderBy: { field: NAME }) { edges { node { id name } } }
    regions(first: 100, orderBy: { field: NAME }) { edges { node { id name } } }
    flavors(first: 200, orderBy: { field: NAME }, where: { disabled: false }) { edges { node { id name vcpus memoryMB diskGB exclusive } } }
    images(first: 200, orderBy: { field: NAME }) { edges { node { id name status } } }
    availabilityZones(first: 200, orderBy: { field: NAME }) { edges { node { id name region { id } } } }
  }
`);

// Tenant members may not read clusters: asked apart, and only of those who may.
const ClusterChoicesDocument = graphql(`
  query ComputeClusterChoices {
    clusters(first: 200, orderBy: { field: NAME }) { edges { node { id name region { id } } } }
  }
`);

const nodes = <T,>(c: { edges?: ({ node?: T | null } | null)[] | null } | undefined | null): T[] =>
  (c?.edges ?? []).flatMap((e) => (e?.node ? [e.node] : []));

/** The choices and the query state (error, fetching). */
export function useChoices() {
  const [{ data, error, fetching }] = useQuery({ query: ChoicesDocument });
  const { infra, known } = useInfraAccess();
  const [clusterResult] = useQuery({ query: ClusterChoicesDocument, pause: !known || !infra });
  return {
    error,
    fetching,
    tenants: nodes(data?.tenants),
    regions: nodes(data?.regions),
    flavors: nodes(data?.flavors),
    images: nodes(data?.images),
    zones: nodes(data?.availabilityZones),
    clusters: nodes(clusterResult.data?.clusters),
  };
}

/** The nodes of a connection's edges (skipping nulls). */
export { nodes as edgeNodes };

/**
 * How a flavor is offered in the create forms: name, vCPUs, memory and disk, and for a
 * whole-machine flavor what it takes alone (see exclusiveLabel).
 */
export function describeFlavor(f: { name: string; vcpus: number; memoryMB: number; diskGB: number; exclusive?: string }): string {
  const alone = exclusiveLabel(f.exclusive);
  return `${f.name} — ${f.vcpus} vCPU, ${formatSize(f.memoryMB, 'MiB')}, ${formatSize(f.diskGB, 'GiB')}${alone ? ` — ${alone}` : ''}`;
}

/** How an image is offered: its name, with its status when it cannot be used yet. */
export function describeImage(i: { name: string; status: string }): string {
  return i.status === 'ACTIVE' ? i.name : `${i.name} (${i.status.toLowerCase()})`;
}

/** Whether an image cannot be booted (only ACTIVE images can). */
export const imageUnusable = (i: { status: string }): boolean => i.status !== 'ACTIVE';
