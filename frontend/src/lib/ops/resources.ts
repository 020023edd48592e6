// Where a resource named by type and id lives in the dashboard (audit log rows, maintenance
// records, maintainers' responsibilities link to it).

const paths: Record<string, string> = {
  ComputeNode: '/nodes/',
  Host: '/hosts/',
  Rack: '/racks/',
  Floor: '/floors/',
  Datacenter: '/datacenters/',
  Cluster: '/clusters/',
  VirtualMachine: '/vms/',
  RegionService: '/services/',
  Tenant: '/tenants/',
  Network: '/ipam/networks/',
};

/** The page of a resource, or null when the dashboard has none for its type. */
export function resourcePath(type: string | null | undefined, id: string | number | null | undefined): string | null {
  if (!type || id === null || id === undefined || id === '' || id === 0) return null;
  const p = paths[type];
  return p ? p + String(id) : null;
}

/** "ComputeNode" → "compute node". */
export function typeLabel(type: string | null | undefined): string {
  if (!type) return '';
  if (type === 'APIToken') return 'API token';
  return type.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
}
