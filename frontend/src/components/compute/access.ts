// What the signed-in user may read of the infrastructure: tenant members may not read clusters
// or compute nodes, so queries ask for them only with $infra (a @include condition).
import { useAuth } from '../../api/auth';

/** infra: the user holds a role outside any tenant; known: `me` has loaded (pause queries until then). */
export function useInfraAccess(): { infra: boolean; known: boolean } {
  const { me } = useAuth();
  const infra = !!me?.roleBindings.edges?.some((e) => !!e?.node && !e.node.tenant);
  return { infra, known: !!me };
}
