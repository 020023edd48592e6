// The frame of every signed-in page: the navigation on the left, the page on the right.
import { NavLink, Outlet } from 'react-router';
import { Suspense } from 'react';
import { useAuth } from '../api/auth';
import { Loading } from './Loading';
import { useInfraAccess } from './compute/access';

// infra: a page about the fabric, nodes or operations, which tenant members may not read; it is
// left out of their navigation (the page itself still explains the refusal if opened).
const sections: { to: string; label: string; infra?: boolean }[] = [
  { to: '/', label: 'Overview' },
  { to: '/datacenters', label: 'Datacenters', infra: true },
  { to: '/clusters', label: 'Clusters', infra: true },
  { to: '/network', label: 'Network map', infra: true },
  { to: '/vms', label: 'Virtual machines' },
  { to: '/services', label: 'Region services' },
  { to: '/nodes', label: 'Nodes', infra: true },
  { to: '/tenants', label: 'Tenants & quotas' },
  { to: '/maintainers', label: 'Maintainers', infra: true },
  { to: '/alerts', label: 'Alerts' },
  { to: '/maintenance', label: 'Maintenance', infra: true },
  { to: '/tokens', label: 'API tokens' },
];

/** The page frame with navigation and the signed-in user. */
export function Layout() {
  const { me, signOut } = useAuth();
  const { infra, known } = useInfraAccess();
  // Until the roles are known every section is listed, so operators see no flicker.
  const shown = sections.filter((s) => !s.infra || infra || !known);
  return (
    <div className="app">
      <nav className="sidebar" aria-label="Sections">
        <div className="brand">VirtFlow</div>
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
