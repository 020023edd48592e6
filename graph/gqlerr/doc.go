// Package gqlerr is the one GraphQL error presenter and panic handler of the API: it maps every
// error a resolver returns to a stable `extensions.code` (through apierr's vocabulary and
// dberr.Classify), keeps gqlgen's own parse and validation errors as client errors, and answers
// anything else as INTERNAL with the request id, logging the cause. Database and driver messages
// never reach the client. It is kept out of apierr so that apierr stays free of gqlgen.
package gqlerr
