// Entry point: the GraphQL client, the auth state and the router around the app.
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { BrowserRouter } from 'react-router';
import { Provider } from 'urql';
import { makeClient } from './api/client';
import { AuthProvider } from './api/auth';
import { App } from './App';
import './styles.css';

const client = makeClient();

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <Provider value={client}>
      <AuthProvider>
        <BrowserRouter>
          <App />
        </BrowserRouter>
      </AuthProvider>
    </Provider>
  </StrictMode>,
);
