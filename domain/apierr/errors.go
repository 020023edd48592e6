package apierr

import (
	"errors"
	"fmt"
)

// Code is the machine-readable kind of an API error, sent as GraphQL extensions.code.
type Code string

// The codes clients can rely on.
const (
	CodeNotFound        Code = "NOT_FOUND"
	CodeValidation      Code = "VALIDATION"
	CodeConflict        Code = "CONFLICT"
	CodeForbidden       Code = "FORBIDDEN"
	CodeUnauthenticated Code = "UNAUTHENTICATED"
	CodeQuotaExceeded   Code = "QUOTA_EXCEEDED"
	CodeNoCapacity      Code = "NO_CAPACITY"
	CodeExhausted       Code = "RESOURCE_EXHAUSTED"
	CodeInternal        Code = "INTERNAL"
	// CodeQueryTooLarge refuses an operation over one of the parse-time limits (size, tokens,
	// fields, aliases, fragment spreads, nesting of input values) before any work is done.
	CodeQueryTooLarge Code = "QUERY_TOO_LARGE"
	// CodeBadRequest refuses an HTTP request that is no GraphQL request: an unsupported
	// content type, a body that is not JSON, variables that cannot be decoded.
	CodeBadRequest Code = "BAD_REQUEST"
	// CodeMethodNotAllowed refuses an HTTP method /query does not serve (PUT, DELETE), or a
	// mutation sent with GET.
	CodeMethodNotAllowed Code = "METHOD_NOT_ALLOWED"
)

// Error is an error with a code, an optional field and extra extensions for the client.
// Domain packages return it (or wrap it) to say exactly what went wrong.
type Error struct {
	Code    Code
	Field   string
	Message string
	Extra   map[string]any
}

// Error returns the message.
func (e *Error) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("%s: %s", e.Field, e.Message)
	}
	return e.Message
}

// Validation reports bad input in the named GraphQL field.
func Validation(field, format string, args ...any) *Error {
	return &Error{Code: CodeValidation, Field: field, Message: fmt.Sprintf(format, args...)}
}

// Conflict reports a clash with existing state (a duplicate key, dependents in the way).
func Conflict(format string, args ...any) *Error {
	return &Error{Code: CodeConflict, Message: fmt.Sprintf(format, args...)}
}

// NotFound reports a record that does not exist (or that the viewer may not see).
func NotFound(format string, args ...any) *Error {
	return &Error{Code: CodeNotFound, Message: fmt.Sprintf(format, args...)}
}

// As returns the *Error in err's chain, if any.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// Unauthenticated reports a request without valid credentials.
func Unauthenticated(format string, args ...any) *Error {
	return &Error{Code: CodeUnauthenticated, Message: fmt.Sprintf(format, args...)}
}

// Forbidden reports a request the viewer is not allowed to make.
func Forbidden(format string, args ...any) *Error {
	return &Error{Code: CodeForbidden, Message: fmt.Sprintf(format, args...)}
}

// Exhausted reports a pool with nothing left to hand out (a full network), naming the input
// field that chose the pool.
func Exhausted(field, format string, args ...any) *Error {
	return &Error{Code: CodeExhausted, Field: field, Message: fmt.Sprintf(format, args...)}
}
