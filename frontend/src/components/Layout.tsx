// The frame of every signed-in page: the navigation on the left, the page on the right.
import { NavLink, Outlet } from 'react-router';
import { Suspense, useState } from 'react';
import { useAuth } from '../api/auth';
import { Loading } from './Loading';
import { useInfraAccess } from './compute/access';

// infra: a page about the fabric, nodes or operations, which tenant members may not read; it is
// left out of their navigation (the page itself still explains the refusal if opened).
const sections: { to: string; label: string; infra?: boolean }[] = [
  { to: '/', label: 'Overview' },
  { to: '/datacenters', label: 'Datacenters', infra: true },
  { to: '/dcim/import', label: 'Import / export', infra: true },
  { to: '/clusters', label: 'Clusters', infra: true },
  { to: '/network', label: 'Network map', infra: true },
  { to: '/network/routes', label: 'Routes (BGP)' },
  { to: '/vms', label: 'Virtual machines' },
  { to: '/images', label: 'Images' },
  { to: '/services', label: 'Region services' },
  { to: '/load-balancers', label: 'Load balancers' },
  { to: '/global-services', label: 'Global services' },
  { to: '/kubernetes', label: 'Kubernetes clusters' },
  { to: '/nodes', label: 'Nodes', infra: true },
  { to: '/tenants', label: 'Tenants & quotas' },
  { to: '/usage', label: 'Usage & invoices' },
  { to: '/maintainers', label: 'Maintainers', infra: true },
  { to: '/alerts', label: 'Alerts' },
  { to: '/events', label: 'Events', infra: true },
  { to: '/rules', label: 'Event rules', infra: true },
  { to: '/silences', label: 'Silences', infra: true },
  { to: '/deliveries', label: 'Hook deliveries', infra: true },
  { to: '/maintenance', label: 'Maintenance', infra: true },
  { to: '/ssh-keys', label: 'SSH keys' },
  { to: '/ipam/networks', label: 'IP addresses', infra: true },
  { to: '/changes', label: 'Change log' },
  { to: '/people', label: 'People & access' },
  { to: '/tokens', label: 'API tokens' },
];

const COLLAPSED_KEY = 'virtflow.sidebar.collapsed';

/** The sidebar starts collapsed when the user left it so, or on a window narrower than 1100 px. */
function initiallyCollapsed(): boolean {
  try {
    const saved = localStorage.getItem(COLLAPSED_KEY);
    if (saved !== null) return saved === '1';
  } catch {
    // no storage: fall back to the width
  }
  return window.innerWidth < 1100;
}

/** The page frame with navigation and the signed-in user. */
export function Layout() {
  const { me, signOut } = useAuth();
  const { infra, known } = useInfraAccess();
  // Until the roles are known every section is listed, so operators see no flicker.
  const shown = sections.filter((s) => !s.infra || infra || !known);
  const [collapsed, setCollapsed] = useState(initiallyCollapsed);
  const toggle = () => {
    setCollapsed(!collapsed);
    try {
      localStorage.setItem(COLLAPSED_KEY, collapsed ? '0' : '1');
    } catch {
      // storage may be disabled; the choice then lasts for this page only
    }
  };
  return (
    <div className={collapsed ? 'app app-collapsed' : 'app'}>
      <nav className="sidebar" aria-label="Sections">
        <div className="brand">
          <button type="button" className="sidebar-toggle" onClick={toggle} aria-expanded={!collapsed} aria-label={collapsed ? 'Show navigation' : 'Hide navigation'} title={collapsed ? 'Show navigation' : 'Hide navigation'}>
            ☰
          </button>
          <span className="brand-name">VirtFlow</span>
        </div>
        <ul>
          {shown.map((s) => (
            <li key={s.to}>
              <NavLink to={s.to} end={s.to === '/'}>
                {s.label}
              </NavLink>
            </li>
          ))}
        </ul>
        <div className="whoami">
          <span title="signed in as">{me ? me.displayName || me.username : '…'}</span>
          <button type="button" className="link" onClick={signOut}>
            Sign out
          </button>
          <a href="/playground">GraphiQL</a>
        </div>
      </nav>
      <main className="content">
        <Suspense fallback={<Loading />}>
          <Outlet />
        </Suspense>
      </main>
    </div>
  );
}
