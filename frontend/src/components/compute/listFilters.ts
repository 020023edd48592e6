// The status, tenant and region filters of the VM and region-service lists, kept in the URL
// (?status=ACTIVE&tenant=…&region=…) so the overview can link to a filtered list.
import { useParamFilters } from '../ops/useParamFilters';

/** The list filters; a status outside statuses (and DELETED) in the URL is ignored. */
export function useListFilters(statuses: readonly string[]) {
  const f = useParamFilters();
  const raw = f.get('status');
  return {
    status: raw === 'DELETED' || statuses.includes(raw) ? raw : '',
    setStatus: (v: string) => f.set('status', v),
    tenant: f.get('tenant'),
    setTenant: (v: string) => f.set('tenant', v),
    region: f.get('region'),
    setRegion: (v: string) => f.set('region', v),
  };
}
