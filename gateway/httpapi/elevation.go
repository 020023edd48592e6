package httpapi

import (
	"bytes"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/domain/diagram"
	"github.com/virtflow/virtflow/ent"
)

// elevationSVG serves GET /api/racks/{id}/elevation.svg: the rack elevation of the rackElevation
// query drawn as SVG, for embedding in wikis and tickets. It sits behind the identity
// middleware and reads through the viewer's privacy rules like the query: 401 without a valid
// token, 400 for an id that is not a number, 404 for a rack that does not exist or that the
// viewer may not see. Errors have the GraphQL error shape with extensions.code.
func elevationSVG(client *ent.Client, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		if authz.FromContext(ctx) == nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="virtflow"`)
			writeAPIError(w, http.StatusUnauthorized, apierr.Unauthenticated("sign in: send Authorization: Bearer <token>"))
			return
		}
		id, err := strconv.Atoi(r.PathValue("id"))
		if err != nil || id <= 0 {
			writeAPIError(w, http.StatusBadRequest, apierr.Validation("id", "must be a rack id, got %q", r.PathValue("id")))
			return
		}
		el, err := diagram.Rack(ctx, client, id)
		if err != nil {
			e, ok := apierr.As(err)
			if !ok {
				log.ErrorContext(ctx, "rack elevation svg", "rack", id, "request_id", RequestID(ctx), "err", err)
				e = &apierr.Error{Code: apierr.CodeInternal, Message: "internal error (request " + RequestID(ctx) + ")"}
			}
			writeAPIError(w, statusOf(e.Code), e)
			return
		}
		var b bytes.Buffer
		if err := diagram.WriteSVG(&b, el); err != nil {
			log.ErrorContext(ctx, "render rack elevation svg", "rack", id, "err", err)
			writeAPIError(w, http.StatusInternalServerError, &apierr.Error{Code: apierr.CodeInternal, Message: "internal error"})
			return
		}
		h := w.Header()
		h.Set("Content-Type", "image/svg+xml")
		h.Set("Cache-Control", "private, no-store")
		h.Set("X-Content-Type-Options", "nosniff")
		// The drawing is static: no script, no external resource, even if opened directly.
		h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
		_, _ = w.Write(b.Bytes())
	})
}

// statusOf is the HTTP status of an API error code.
func statusOf(c apierr.Code) int {
	switch c {
	case apierr.CodeNotFound:
		return http.StatusNotFound
	case apierr.CodeValidation:
		return http.StatusBadRequest
	case apierr.CodeUnauthenticated:
		return http.StatusUnauthorized
	case apierr.CodeForbidden:
		return http.StatusForbidden
	case apierr.CodeConflict:
		return http.StatusConflict
	}
	return http.StatusInternalServerError
}

// writeAPIError answers with a GraphQL-shaped error body.
func writeAPIError(w http.ResponseWriter, status int, e *apierr.Error) {
	w.Header().Set("Cache-Control", "no-store")
	ext := map[string]any{"code": string(e.Code)}
	if e.Field != "" {
		ext["field"] = e.Field
	}
	writeJSON(w, status, map[string]any{"errors": []any{map[string]any{"message": e.Error(), "extensions": ext}}})
}
