// The frame of every signed-in page: the navigation on the left, the page on the right.
import { NavLink, Outlet } from 'react-router';
import { Suspense } from 'react';
import { useAuth } from '../api/auth';
import { Loading } from './Loading';

const sections: { to: string; label: string }[] = [
  { to: '/', label: 'Overview' },
  { to: '/datacenters', label: 'Datacenters' },
  { to: '/clusters', label: 'Clusters' },
  { to: '/network', label: 'Network map' },
  { to: '/vms', label: 'Virtual machines' },
  { to: '/services', label: 'Region services' },
  { to: '/nodes', label: 'Nodes' },
  { to: '/tenants', label: 'Tenants & quotas' },
  { to: '/maintainers', label: 'Maintainers' },
  { to: '/alerts', label: 'Alerts' },
  { to: '/maintenance', label: 'Maintenance' },
  { to: '/tokens', label: 'API tokens' },
];

/** The page frame with navigation and the signed-in user. */
export function Layout() {
  const { me, signOut } = useAuth();
  return (
    <div className="app">
      <nav className="sidebar" aria-label="Sections">
        <div className="brand">VirtFlow</div>
        <ul>
          {sections.map((s) => (
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
