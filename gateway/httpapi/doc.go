// Package httpapi assembles VirtFlow's HTTP surface: GraphQL at /query (POST, GET, websocket),
// GraphiQL at /playground, the dashboard at /, /healthz, /readyz and /metrics, behind request-id,
// logging, metrics and request-size middleware.
package httpapi
