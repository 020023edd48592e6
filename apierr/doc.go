// Package apierr defines VirtFlow's API error codes and the one GraphQL error presenter that
// maps every error a resolver returns to a stable `extensions.code` (NOT_FOUND, VALIDATION with
// the offending field, CONFLICT, FORBIDDEN, UNAUTHENTICATED, QUOTA_EXCEEDED, NO_CAPACITY,
// INTERNAL). Database and driver messages never reach the client: internal errors are logged
// with the request id and answered with a generic message.
package apierr
