package apierr

import (
	"context"
	"errors"
	"log/slog"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// RequestIDFunc returns the id of the request in ctx, for logs and for the client to quote.
type RequestIDFunc func(context.Context) string

// Presenter returns the GraphQL error presenter: known errors keep their message and get a
// code (and field); anything else is logged and answered as INTERNAL with the request id.
func Presenter(log *slog.Logger, requestID RequestIDFunc) graphql.ErrorPresenterFunc {
	return func(ctx context.Context, err error) *gqlerror.Error {
		gqlErr := graphql.DefaultErrorPresenter(ctx, err)
		// Errors gqlgen and gqlparser produce themselves (parse, validation, input
		// coercion) and errors already carrying a code are the client's and safe to show.
		var original *gqlerror.Error
		if errors.As(err, &original) && (original.Err == nil || gqlErr.Extensions["code"] != nil) {
			if gqlErr.Extensions == nil || gqlErr.Extensions["code"] == nil {
				setCode(gqlErr, CodeValidation)
			}
			return gqlErr
		}
		if e := Classify(err); e != nil {
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
		id := requestID(ctx)
		log.ErrorContext(ctx, "internal error in GraphQL request", "err", err, "path", gqlErr.Path.String(), "request_id", id)
		gqlErr.Message = "internal error; quote request id " + id + " to your operator"
		setCode(gqlErr, CodeInternal)
		gqlErr.Extensions["requestId"] = id
		return gqlErr
	}
}

func setCode(e *gqlerror.Error, c Code) {
	if e.Extensions == nil {
		e.Extensions = map[string]any{}
	}
	e.Extensions["code"] = string(c)
}

// Recover turns a panic in a resolver into an INTERNAL error instead of a crashed request.
func Recover(log *slog.Logger) graphql.RecoverFunc {
	return func(ctx context.Context, p any) error {
		log.ErrorContext(ctx, "panic in GraphQL resolver", "panic", p)
		return &Error{Code: CodeInternal, Message: "internal error"}
	}
}
