// Sign in with a username and password (the login mutation) or with an API token.
import { useState, type FormEvent } from 'react';
import { useMutation } from 'urql';
import { Navigate, useLocation } from 'react-router';
import { graphql } from '../gql';
import { useAuth } from '../api/auth';
import { takeSignOutReason } from '../api/token';
import { Problem, Message } from '../components/Problem';

const LoginDocument = graphql(`
  mutation Login($username: String!, $password: String!) {
    login(username: $username, password: $password) {
      token
    }
  }
`);

/** The sign-in page. */
export default function LoginPage() {
  const { token, signIn } = useAuth();
  const location = useLocation();
  const [mode, setMode] = useState<'password' | 'token'>('password');
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [apiToken, setAPIToken] = useState('');
  const [formError, setFormError] = useState(() => takeSignOutReason());
  const [result, login] = useMutation(LoginDocument);

  if (token) {
    const from = (location.state as { from?: string } | null)?.from ?? '/';
    return <Navigate to={from} replace />;
  }

  async function submit(e: FormEvent) {
    e.preventDefault();
    setFormError('');
    if (mode === 'token') {
      const t = apiToken.trim().replace(/^Bearer\s+/i, '');
      if (!t) return setFormError('Enter an API token.');
      signIn(t);
      return;
    }
    if (!username || !password) return setFormError('Enter a username and a password.');
    const r = await login({ username, password });
    if (r.data?.login.token) signIn(r.data.login.token);
  }

  return (
    <div className="login">
      <form onSubmit={submit} className="card" aria-label="Sign in">
        <h1>VirtFlow</h1>
        <div className="tabs" role="tablist">
          <button type="button" role="tab" aria-selected={mode === 'password'} onClick={() => setMode('password')}>
            Password
          </button>
          <button type="button" role="tab" aria-selected={mode === 'token'} onClick={() => setMode('token')}>
            API token
          </button>
        </div>
        {mode === 'password' ? (
          <>
            <label>
              Username
              <input name="username" autoComplete="username" value={username} onChange={(e) => setUsername(e.target.value)} />
            </label>
            <label>
              Password
              <input name="password" type="password" autoComplete="current-password" value={password} onChange={(e) => setPassword(e.target.value)} />
            </label>
          </>
        ) : (
          <label>
            API token
            <input name="token" type="password" placeholder="vf_…" value={apiToken} onChange={(e) => setAPIToken(e.target.value)} />
          </label>
        )}
        {formError && <Message kind="error">{formError}</Message>}
        <Problem error={result.error} />
        <button type="submit" className="primary" disabled={result.fetching}>
          Sign in
        </button>
        <p className="muted small">
          First start: the server logs a one-time admin token, or set <code>VIRTFLOW_ADMIN_TOKEN</code>.
        </p>
      </form>
    </div>
  );
}
