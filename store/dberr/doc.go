// Package dberr maps errors of the persistence layer — ent's validation, not-found and
// dependents errors, and unique or foreign-key violations from PostgreSQL (lib/pq) or
// SQLite — to the API's vocabulary (*apierr.Error), naming the GraphQL fields involved and
// never passing on the driver's message. Classify is used by the GraphQL presenter
// (graph/gqlerr), the REST endpoints (internal/httpapi) and domain packages that report a
// database refusal to their caller. It is kept out of apierr so that apierr stays free of
// ent and the SQL driver.
package dberr
