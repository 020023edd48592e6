package graph_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/metering"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
)

// TestUsageAPI: usage, invoices, addPrice and the CSV export through the API: a tenant admin
// reads its own tenant's usage (and its CSV, cells escaped against formulas), is refused
// another tenant's and the price list's writes; an operator-level admin adds prices.
func TestUsageAPI(t *testing.T) {
	env := gqltest.SQLite(t)
	c, ctx := env.Client, gqltest.System()
	mine := c.Tenant.Create().SetName(uniq("billed")).SaveX(ctx)
	theirs := c.Tenant.Create().SetName(uniq("other")).SaveX(ctx)
	t0 := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	for i, tn := range []int{mine.ID, theirs.ID} {
		if err := metering.Open(ctx, c, t0, metering.Interval{Kind: metering.KindVolume, ResourceID: 900 + i,
			Name: "=HYPERLINK(1)", TenantID: tn, IOClass: "SSD", Quantity: 10}); err != nil {
			t.Fatal(err)
		}
		if err := metering.Close(ctx, c, t0.Add(24*time.Hour), metering.KindVolume, 900+i); err != nil {
			t.Fatal(err)
		}
	}
	env.MustDo(t, `mutation { addPrice(input: {kind: VOLUME_GB, key: "SSD", amount: "0.0001", effectiveFrom: "2026-01-01T00:00:00Z"}) { id amount } }`, nil, nil)
	env.Do(t, `mutation { addPrice(input: {kind: VOLUME_GB, key: "SSD", amount: "0.0000001", effectiveFrom: "2026-01-02T00:00:00Z"}) { id } }`, nil).
		ExpectError(t, "VALIDATION", "amount")

	admin := env.As(roleToken(t, env, authz.RoleTenantAdmin, mine.ID, 0))
	const usage = `query($t: ID!) { usage(tenantID: $t, from: "2026-03-01T00:00:00Z", to: "2026-04-01T00:00:00Z", groupBy: [RESOURCE, DAY]) {
		lines { key resourceID kind seconds quantity amount currency } total { amount currency } } }`
	var out struct {
		Usage struct {
			Lines []struct {
				Key, Kind, Quantity, Amount string
				Seconds                     int
			}
			Total struct{ Amount, Currency string }
		}
	}
	admin.MustDo(t, usage, map[string]any{"t": gqltest.ID(mine.ID)}, &out)
	if out.Usage.Total.Amount != "0.024000" || out.Usage.Total.Currency != "EUR" || len(out.Usage.Lines) != 1 ||
		out.Usage.Lines[0].Seconds != 86400 || out.Usage.Lines[0].Quantity != "240.000000" || out.Usage.Lines[0].Key != "=HYPERLINK(1) / 2026-03-02" {
		t.Fatalf("own usage: %+v", out.Usage)
	}
	admin.Do(t, usage, map[string]any{"t": gqltest.ID(theirs.ID)}).ExpectError(t, "FORBIDDEN", "")
	admin.Do(t, `query($t: ID!) { invoices(tenantID: $t) { totalCount } }`, map[string]any{"t": gqltest.ID(theirs.ID)}).ExpectError(t, "FORBIDDEN", "")
	var invs struct {
		Invoices struct {
			TotalCount int
			Edges      []struct {
				Node struct{ Period, Status string }
			}
		}
	}
	admin.MustDo(t, `query($t: ID!) { invoices(tenantID: $t, first: 5) { totalCount edges { node { period status } } } }`,
		map[string]any{"t": gqltest.ID(mine.ID)}, &invs)
	if invs.Invoices.TotalCount != 1 || invs.Invoices.Edges[0].Node.Period != "2026-03" {
		t.Fatalf("invoices: %+v", invs)
	}
	admin.Do(t, `mutation { addPrice(input: {kind: IP_ADDRESS, amount: "9", effectiveFrom: "2026-01-01T00:00:00Z"}) { id } }`, nil).
		ExpectError(t, "FORBIDDEN", "")

	get := func(tenant int, token string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, fmt.Sprintf("/api/tenants/%d/usage.csv?from=2026-03-01T00:00:00Z&to=2026-04-01T00:00:00Z&groupBy=RESOURCE", tenant), nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		rec := httptest.NewRecorder()
		env.Handler.ServeHTTP(rec, req)
		return rec
	}
	tok := roleToken(t, env, authz.RoleTenantAdmin, mine.ID, 0)
	rec := get(mine.ID, tok)
	if body := rec.Body.String(); rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/csv") ||
		!strings.Contains(body, "VOLUME,'=HYPERLINK(1),900,86400,240.000000,0.024000,EUR") || !strings.Contains(body, "TOTAL,,,,,0.024000,EUR") {
		t.Fatalf("CSV: HTTP %d %s\n%s", rec.Code, rec.Header().Get("Content-Type"), body)
	}
	if rec := get(theirs.ID, tok); rec.Code != http.StatusForbidden {
		t.Errorf("another tenant's CSV: HTTP %d %s", rec.Code, rec.Body.String())
	}
	if rec := get(mine.ID, ""); rec.Code != http.StatusUnauthorized {
		t.Errorf("CSV without a token: HTTP %d", rec.Code)
	}
}
