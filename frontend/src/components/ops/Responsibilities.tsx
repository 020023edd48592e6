// What a maintainer or group is responsible for: per kind (racks, hosts, nodes, ...) the count and
// the first few, each linking to its page.
import { Link } from 'react-router';
import { formatNumber } from '../../lib/format';

interface Conn {
  totalCount: number;
  edges?: ({ node?: { id: string; name: string } | null } | null)[] | null;
}

export interface ResponsibilityKinds {
  racks: Conn;
  hosts: Conn;
  nodes: Conn;
  clusters: Conn;
  virtualMachines: Conn;
  kubernetesClusters: Conn;
}

const kinds: { key: keyof ResponsibilityKinds; label: string; path: string | null }[] = [
  { key: 'racks', label: 'Racks', path: '/racks/' },
  { key: 'hosts', label: 'Hosts', path: '/hosts/' },
  { key: 'nodes', label: 'Nodes', path: '/nodes/' },
  { key: 'clusters', label: 'Clusters', path: '/clusters/' },
  { key: 'virtualMachines', label: 'VMs', path: '/vms/' },
  { key: 'kubernetesClusters', label: 'Kubernetes clusters', path: null },
];

export function Responsibilities({ of }: { of: ResponsibilityKinds }) {
  const present = kinds.filter((k) => of[k.key].totalCount > 0);
  if (present.length === 0) return <span className="muted small">nothing directly</span>;
  return (
    <ul className="resp">
      {present.map((k) => {
        const c = of[k.key];
        const items = c.edges?.flatMap((e) => (e?.node ? [e.node] : [])) ?? [];
        return (
          <li key={k.key}>
            <strong>{k.label} ({formatNumber(c.totalCount)}):</strong>{' '}
            {items.map((it, i) => (
              <span key={it.id}>
                {i > 0 && ', '}
                {k.path ? <Link to={k.path + it.id}>{it.name}</Link> : it.name}
              </span>
            ))}
            {c.totalCount > items.length && <span className="muted"> and {c.totalCount - items.length} more</span>}
          </li>
        );
      })}
    </ul>
  );
}
