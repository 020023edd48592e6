// The app: sign-in gate, page frame and routes.
import { Navigate, Route, Routes, useLocation } from 'react-router';
import type { ReactNode } from 'react';
import { useAuth } from './api/auth';
import { Layout } from './components/Layout';
import LoginPage from './pages/LoginPage';
import { pages } from './routes';

/** Sends signed-out visitors to /login, remembering where they wanted to go. */
function RequireAuth({ children }: { children: ReactNode }) {
  const { token } = useAuth();
  const location = useLocation();
  if (!token) return <Navigate to="/login" replace state={{ from: location.pathname + location.search }} />;
  return <>{children}</>;
}

function NotFound() {
  return (
    <div>
      <h1>Not found</h1>
      <p>There is no page at this address.</p>
    </div>
  );
}

/** The whole dashboard. */
export function App() {
  return (
    <Routes>
      <Route path="/login" element={<LoginPage />} />
      <Route
        element={
          <RequireAuth>
            <Layout />
          </RequireAuth>
        }
      >
        {pages.map(({ path, page: Page }) => (
          <Route key={path} path={path} element={<Page />} />
        ))}
        <Route path="*" element={<NotFound />} />
      </Route>
    </Routes>
  );
}
