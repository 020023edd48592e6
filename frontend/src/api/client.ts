// The GraphQL client: queries and mutations over HTTP POST to /query, subscriptions over a
// graphql-ws websocket on the same path. Both carry the bearer token; an UNAUTHENTICATED
// answer signs the user out.
import { Client, cacheExchange, fetchExchange, mapExchange, subscriptionExchange } from 'urql';
import { createClient as createWSClient, type Client as WSClient } from 'graphql-ws';
import { getToken, setToken } from './token';

let ws: WSClient | null = null;

function wsURL(): string {
  const { protocol, host } = window.location;
  return `${protocol === 'https:' ? 'wss' : 'ws'}://${host}/query`;
}

/** The websocket client, made on first use and remade when the token changes. */
function websocket(): WSClient {
  if (!ws) {
    ws = createWSClient({
      url: wsURL(),
      lazy: true,
      retryAttempts: Infinity,
      shouldRetry: () => true,
      connectionParams: () => {
        const t = getToken();
        return t ? { Authorization: `Bearer ${t}` } : {};
      },
    });
  }
  return ws;
}

/** Closes the websocket so the next subscription authenticates with the current token. */
export function resetWebsocket(): void {
  ws?.dispose();
  ws = null;
}

/** Makes the client the whole app shares (see main.tsx). */
export function makeClient(): Client {
  return new Client({
    url: '/query',
    requestPolicy: 'cache-and-network',
    fetchOptions: () => {
      const t = getToken();
      const headers: Record<string, string> = t ? { Authorization: `Bearer ${t}` } : {};
      return { headers };
    },
    exchanges: [
      mapExchange({
        onError(error) {
          const unauthenticated =
            error.response?.status === 401 ||
            error.graphQLErrors.some((e) => e.extensions?.code === 'UNAUTHENTICATED');
          if (unauthenticated && getToken()) setToken(null, 'The token was rejected or has expired: sign in again.');
        },
      }),
      cacheExchange,
      fetchExchange,
      subscriptionExchange({
        forwardSubscription(request) {
          const input = { ...request, query: request.query || '' };
          return {
            subscribe(sink) {
              const unsubscribe = websocket().subscribe(input, sink);
              return { unsubscribe };
            },
          };
        },
      }),
    ],
  });
}
