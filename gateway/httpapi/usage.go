package httpapi

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/domain/metering"
	"github.com/virtflow/virtflow/ent"
)

// usageCSV serves GET /api/tenants/{id}/usage.csv?from=…&to=…&groupBy=RESOURCE,DAY: the
// usage query's report as CSV (metering.WriteCSV), for spreadsheets and accounting. from
// and to are RFC 3339 times; groupBy is optional. Behind the identity middleware, with the
// usage query's authorization (metering.Authorize): 401 without a valid token, 403 for
// another tenant's usage, 400 for bad parameters; errors have the GraphQL error shape.
func usageCSV(client *ent.Client, clock func() time.Time, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		fail := func(err error) {
			e, ok := apierr.As(err)
			if !ok {
				log.ErrorContext(ctx, "usage csv", "request_id", RequestID(ctx), "err", err)
				e = &apierr.Error{Code: apierr.CodeInternal, Message: "internal error (request " + RequestID(ctx) + ")"}
			}
			if e.Code == apierr.CodeUnauthenticated {
				w.Header().Set("WWW-Authenticate", `Bearer realm="virtflow"`)
			}
			writeAPIError(w, statusOf(e.Code), e)
		}
		if authz.FromContext(ctx) == nil {
			fail(apierr.Unauthenticated("sign in: send Authorization: Bearer <token>"))
			return
		}
		tenant, err := strconv.Atoi(r.PathValue("id"))
		if err != nil || tenant <= 0 {
			fail(apierr.Validation("id", "must be a tenant id, got %q", r.PathValue("id")))
			return
		}
		q := r.URL.Query()
		var from, to time.Time
		for _, p := range []struct {
			name string
			t    *time.Time
		}{{"from", &from}, {"to", &to}} {
			if *p.t, err = time.Parse(time.RFC3339, q.Get(p.name)); err != nil {
				fail(apierr.Validation(p.name, "must be an RFC 3339 time such as 2026-11-01T00:00:00Z"))
				return
			}
		}
		if !to.After(from) {
			fail(apierr.Validation("to", "must be after from"))
			return
		}
		var groupBy []metering.GroupBy
		if g := q.Get("groupBy"); g != "" {
			for _, s := range strings.Split(g, ",") {
				switch gb := metering.GroupBy(strings.ToUpper(strings.TrimSpace(s))); gb {
				case metering.GroupResource, metering.GroupFlavor, metering.GroupRegion, metering.GroupDay:
					groupBy = append(groupBy, gb)
				default:
					fail(apierr.Validation("groupBy", "%q is not one of RESOURCE, FLAVOR, REGION, DAY", s))
					return
				}
			}
		}
		if err := metering.Authorize(ctx, tenant); err != nil {
			fail(err)
			return
		}
		rep, err := metering.Usage(ctx, client, tenant, from, to, clock(), groupBy)
		if err != nil {
			fail(err)
			return
		}
		var b bytes.Buffer
		if err := metering.WriteCSV(&b, rep); err != nil {
			fail(err)
			return
		}
		h := w.Header()
		h.Set("Content-Type", "text/csv; charset=utf-8")
		h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="usage-tenant-%d-%s.csv"`, tenant, from.UTC().Format("2006-01-02")))
		h.Set("Cache-Control", "private, no-store")
		h.Set("X-Content-Type-Options", "nosniff")
		_, _ = w.Write(b.Bytes())
	})
}
