// Starts GraphiQL for the page served by internal/playground. Not from npm:
// this file is part of the virtflow sources. It needs the React, ReactDOM and
// GraphiQL UMD globals, loaded by the page before it.
(function () {
  'use strict';

  var root = document.getElementById('graphiql');
  var endpoint = root.getAttribute('data-endpoint') || '/query';

  // Resolve the endpoint against the page, then derive the WebSocket URL for
  // subscriptions (graphql-transport-ws) from it: same host and path,
  // ws: for http: and wss: for https:.
  var httpURL = new URL(endpoint, window.location.href);
  var wsURL = new URL(httpURL.href);
  wsURL.protocol = httpURL.protocol === 'https:' ? 'wss:' : 'ws:';

  // createFetcher is @graphiql/toolkit's createGraphiQLFetcher. The headers
  // typed in the Headers editor are passed to it per request: they become
  // HTTP headers of the POST, and for subscriptions they are merged into the
  // connection_init payload (connectionParams) of the graphql-ws client.
  var fetcher = GraphiQL.createFetcher({
    url: httpURL.href,
    subscriptionUrl: wsURL.href,
  });

  ReactDOM.createRoot(root).render(
    React.createElement(GraphiQL, {
      fetcher: fetcher,
      isHeadersEditorEnabled: true,
      // Do not keep tokens typed in the Headers editor in localStorage.
      shouldPersistHeaders: false,
    }),
  );
})();
