// Package playground serves a self-contained GraphiQL IDE: the HTML page and
// every script and stylesheet it needs are embedded in the binary, so the
// page works with no internet access (no CDN), e.g. in air-gapped
// datacenters.
//
// # Mounting
//
// [Handler] must be mounted behind [net/http.StripPrefix] with the prefix
// it is published under, and for both the bare path and the subtree:
//
//	h := http.StripPrefix("/playground", playground.Handler("VirtFlow", "/query"))
//	mux.Handle("/playground", h)  // handler sees ""
//	mux.Handle("/playground/", h) // handler sees "/" and "/assets/..."
//
// After the prefix is stripped the handler answers:
//
//	"" and "/"       the GraphiQL page (text/html)
//	"/assets/NAME"   an embedded asset, e.g. /playground/assets/graphiql.min.js
//	anything else    404
//
// The page links its assets with relative URLs computed from the path the
// browser asked for (the request URI, which StripPrefix leaves alone), so
// they resolve to PREFIX/assets/NAME whether the page was loaded as
// /playground or /playground/, and also behind a reverse proxy that adds a
// further prefix. Only GET and HEAD are allowed.
//
// # Assets
//
// The files under assets/ are the UMD builds of graphiql, react and
// react-dom taken unchanged from the npm registry (see assets/README.md for
// versions and checksums, and update-assets.sh to refresh them). They are
// stored gzip-compressed; they are sent as-is with Content-Encoding: gzip to
// clients that accept it and decompressed for the rest. Each asset has a
// content-hash ETag and Cache-Control: no-cache, so browsers revalidate
// (304) instead of downloading again and never keep a stale copy after an
// upgrade. assets/playground.js is ours: it reads the endpoint from the page
// and starts GraphiQL; the page itself has no inline script.
//
// # What the page does
//
// Queries and mutations are POSTed as JSON to the endpoint given to
// [Handler] (e.g. "/query"; a relative or absolute URL). Subscriptions use a
// WebSocket to the same endpoint with the graphql-transport-ws protocol
// (graphql-ws client, bundled in GraphiQL); its URL is derived from the
// endpoint resolved against window.location, with http: turned into ws: and
// https: into wss:.
//
// The Headers editor is enabled. The JSON object typed there (for example
// {"Authorization": "Bearer ..."}) is sent as HTTP headers on every POST and,
// for subscriptions, as the payload of the graphql-transport-ws
// connection_init message, which a gqlgen websocket InitFunc sees as its
// InitPayload (InitPayload.Authorization() returns the token). Headers are
// not persisted in the browser's localStorage.
package playground
