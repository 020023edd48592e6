package gqlerr

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strconv"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/store/dberr"
)

// RequestIDFunc returns the id of the request in ctx, for logs and for the client to quote.
type RequestIDFunc func(context.Context) string

// Presenter returns the GraphQL error presenter: known errors keep their message and get a
// code (and field); anything else is logged and answered as INTERNAL with the request id.
func Presenter(log *slog.Logger, requestID RequestIDFunc) graphql.ErrorPresenterFunc {
	return func(ctx context.Context, err error) *gqlerror.Error {
		gqlErr := graphql.DefaultErrorPresenter(ctx, err)
		if e := dberr.Classify(err); e != nil {
			gqlErr.Message = e.Message
			if e.Field != "" {
				gqlErr.Message = e.Field + ": " + e.Message
			}
			setCode(gqlErr, e.Code)
			if e.Field != "" {
				gqlErr.Extensions["field"] = e.Field
			}
			for k, v := range e.Extra {
				gqlErr.Extensions[k] = v
			}
			return gqlErr
		}
		// Errors gqlgen, gqlparser and entgql produce themselves — parsing, validation, input
		// coercion (an ID that is not a number, a malformed cursor), unknown nodes — describe
		// the client's request and are safe to show; they keep their code or get VALIDATION.
		var own *gqlerror.Error
		if errors.As(err, &own) && !fromResolver(err) {
			if e := coercion(err, gqlErr.Path); e != nil {
				gqlErr.Message = e.Field + ": " + e.Message
				setCode(gqlErr, e.Code)
				gqlErr.Extensions["field"] = e.Field
				return gqlErr
			}
		}
		if errors.As(err, &own) && (!fromResolver(err) || hasCode(err)) {
			if gqlErr.Extensions == nil || gqlErr.Extensions["code"] == nil {
				setCode(gqlErr, apierr.CodeValidation)
			}
			return gqlErr
		}
		id := requestID(ctx)
		log.ErrorContext(ctx, "internal error in GraphQL request", "err", err, "path", gqlErr.Path.String(), "request_id", id)
		gqlErr.Message = "internal error; quote request id " + id + " to your operator"
		setCode(gqlErr, apierr.CodeInternal)
		gqlErr.Extensions["requestId"] = id
		return gqlErr
	}
}

func setCode(e *gqlerror.Error, c apierr.Code) {
	if e.Extensions == nil {
		e.Extensions = map[string]any{}
	}
	e.Extensions["code"] = string(c)
}

// Recover turns a panic in a resolver into an INTERNAL error instead of a crashed request.
func Recover(log *slog.Logger, requestID RequestIDFunc) graphql.RecoverFunc {
	return func(ctx context.Context, p any) error {
		id := requestID(ctx)
		log.ErrorContext(ctx, "panic in GraphQL resolver", "panic", p, "request_id", id, "stack", string(debug.Stack()))
		return &apierr.Error{Code: apierr.CodeInternal, Message: "internal error; quote request id " + id + " to your operator",
			Extra: map[string]any{"requestId": id}}
	}
}

// resolverError marks an error a resolver returned (as opposed to one gqlgen produced while
// parsing, validating or coercing the request).
type resolverError struct{ error }

func (e resolverError) Unwrap() error { return e.error }

// FromResolver marks err as returned by a resolver; the GraphQL handler does this for every
// resolver so that an unexpected error is presented as INTERNAL, never as client input.
func FromResolver(err error) error { return resolverError{err} }

func fromResolver(err error) bool {
	var r resolverError
	return errors.As(err, &r)
}

// hasCode reports whether a gqlerror in err's chain already carries an extensions.code (as
// entgql's node-not-found does).
func hasCode(err error) bool {
	for err != nil {
		if g, ok := err.(*gqlerror.Error); ok && g.Extensions["code"] != nil {
			return true
		}
		err = errors.Unwrap(err)
	}
	return false
}

// coercion rewrites an input-coercion error whose message is a Go library's (an ID that is
// not a number: `strconv.Atoi: parsing "abc": invalid syntax`) as VALIDATION naming the
// argument or input field, the last name in the error's path.
func coercion(err error, path ast.Path) *apierr.Error {
	var num *strconv.NumError
	if !errors.As(err, &num) {
		return nil
	}
	field := "id"
	for i := len(path) - 1; i >= 0; i-- {
		if name, ok := path[i].(ast.PathName); ok {
			field = string(name)
			break
		}
	}
	if errors.Is(num.Err, strconv.ErrRange) {
		return &apierr.Error{Code: apierr.CodeValidation, Field: field, Message: fmt.Sprintf("%q is out of range", num.Num)}
	}
	return &apierr.Error{Code: apierr.CodeValidation, Field: field, Message: fmt.Sprintf("%q is not a valid id (ids are numbers)", num.Num)}
}
