// Flavors as the dashboard describes them.

/** What an exclusive flavor's VM takes alone: a whole machine, one NUMA node; '' for a shared one. */
export function exclusiveLabel(exclusive?: string): string {
  switch (exclusive) {
    case 'HOST':
      return 'whole machine, alone';
    case 'NUMA_NODE':
      return 'one NUMA node, alone';
    default:
      return '';
  }
}
