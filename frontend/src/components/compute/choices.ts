// The options of the compute forms and filters (tenants, regions, flavors, images, clusters),
// read once from the API.
import { useQuery } from 'urql';
import { graphql } from '../../gql';
import { useInfraAccess } from './access';

const ChoicesDocument = graphql(`
  query ComputeChoices {
    tenants(first: 200, orderBy: { field: NAME }) { edges { node { id name } } }
    regions(first: 100, orderBy: { field: NAME }) { edges { node { id name } } }
    flavors(first: 200, orderBy: { field: NAME }, where: { disabled: false }) { edges { node { id name vcpus memoryMB diskGB } } }
    images(first: 200, orderBy: { field: NAME }) { edges { node { id name status } } }
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
    clusters: nodes(clusterResult.data?.clusters),
  };
}

/** The nodes of a connection's edges (skipping nulls). */
export { nodes as edgeNodes };
