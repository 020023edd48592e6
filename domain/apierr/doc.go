// Package apierr is VirtFlow's vocabulary of API errors: the stable codes a client sees as
// GraphQL `extensions.code` (NOT_FOUND, VALIDATION with the offending field, CONFLICT,
// FORBIDDEN, UNAUTHENTICATED, QUOTA_EXCEEDED, NO_CAPACITY, INTERNAL, ...), the *Error type
// that carries one, and its constructors. Domain packages, the node agent and the clients
// return or read these errors.
//
// The package imports only the standard library (layering_test.go at the repository root
// holds that), so that code far from the server — the node agent's config drive — can speak
// the vocabulary without linking ent, the SQL driver or gqlgen. The two halves that need
// those live next to their users: internal/dberr maps ent and PostgreSQL errors to *Error
// (Classify), and graph/gqlerr is the GraphQL error presenter and panic handler.
package apierr
