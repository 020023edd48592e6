package gqlerr_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/ent"
	_ "github.com/virtflow/virtflow/ent/runtime" // defaults and hooks
	"github.com/virtflow/virtflow/graph/gqlerr"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
)

// driverMessages are fragments of database and driver messages that must never reach a client.
var driverMessages = []string{"pq:", "duplicate key", "violates unique", "violates foreign", "violates check", "UNIQUE constraint", "FOREIGN KEY", "sqlite", "SQLSTATE"}

func assertNoDriverText(t *testing.T, msg string) {
	t.Helper()
	for _, s := range driverMessages {
		if strings.Contains(msg, s) {
			t.Errorf("client message %q leaks driver text %q", msg, s)
		}
	}
}

// presenterLog collects what the presenter logs.
func presenterLog() (*slog.Logger, *bytes.Buffer) {
	var buf bytes.Buffer
	return slog.New(slog.NewTextHandler(&buf, nil)), &buf
}

func TestPresenter(t *testing.T) {
	log, logBuf := presenterLog()
	present := gqlerr.Presenter(log, func(context.Context) string { return "req-7f3a" })
	ctx := authz.SystemContext(context.Background(), "test")

	t.Run("unknown error is INTERNAL with the request id", func(t *testing.T) {
		secret := errors.New(`pq: relation "users" password=hunter2 does not exist`)
		for _, err := range []error{
			secret, // an error that reached the presenter unwrapped
			// what gqlgen hands the presenter for an error a resolver returned
			graphql.ErrorOnPath(ctx, gqlerr.FromResolver(secret)),
			graphql.ErrorOnPath(ctx, gqlerr.FromResolver(fmt.Errorf("load: %w", secret))),
		} {
			logBuf.Reset()
			got := present(ctx, err)
			if got.Extensions["code"] != "INTERNAL" {
				t.Errorf("code = %v, want INTERNAL", got.Extensions["code"])
			}
			if !strings.Contains(got.Message, "req-7f3a") || got.Extensions["requestId"] != "req-7f3a" {
				t.Errorf("message %q / requestId %v should carry the request id", got.Message, got.Extensions["requestId"])
			}
			if strings.Contains(got.Message, "hunter2") || strings.Contains(got.Message, "pq:") {
				t.Errorf("message %q leaks the original error", got.Message)
			}
			if s := logBuf.String(); !strings.Contains(s, "hunter2") || !strings.Contains(s, "req-7f3a") {
				t.Errorf("log %q should keep the original error and the request id for the operator", s)
			}
		}
	})

	t.Run("resolver error that is an API error is classified", func(t *testing.T) {
		in := apierr.Validation("cidr", "not a prefix")
		got := present(ctx, graphql.ErrorOnPath(ctx, gqlerr.FromResolver(fmt.Errorf("create network: %w", in))))
		if got.Extensions["code"] != "VALIDATION" || got.Extensions["field"] != "cidr" || got.Message != "cidr: not a prefix" {
			t.Errorf("presented %q %v", got.Message, got.Extensions)
		}
	})

	t.Run("resolver gqlerror with its own code keeps it", func(t *testing.T) {
		nf := gqlerror.Errorf("Could not resolve to a node with the global id of '9'")
		nf.Extensions = map[string]any{"code": "NOT_FOUND"}
		got := present(ctx, graphql.ErrorOnPath(ctx, gqlerr.FromResolver(nf)))
		if got.Extensions["code"] != "NOT_FOUND" || !strings.Contains(got.Message, "global id") {
			t.Errorf("presented %q %v", got.Message, got.Extensions)
		}
	})

	t.Run("gqlgen's own coercion error is VALIDATION", func(t *testing.T) {
		// gqlgen wraps an input coercion failure (not a resolver error) in a gqlerror.
		got := present(ctx, graphql.ErrorOnPath(ctx, errors.New(`strconv.Atoi: parsing "abc": invalid syntax`)))
		if got.Extensions["code"] != "VALIDATION" {
			t.Errorf("presented %q %v, want VALIDATION", got.Message, got.Extensions)
		}
	})

	t.Run("API error keeps message, code, field and extras", func(t *testing.T) {
		e := &apierr.Error{Code: apierr.CodeQuotaExceeded, Field: "vcpus", Message: "quota of 8 exceeded", Extra: map[string]any{"limit": 8}}
		got := present(ctx, graphql.ErrorOnPath(ctx, gqlerr.FromResolver(fmt.Errorf("create vm: %w", e))))
		if got.Message != "vcpus: quota of 8 exceeded" || got.Extensions["code"] != "QUOTA_EXCEEDED" ||
			got.Extensions["field"] != "vcpus" || got.Extensions["limit"] != 8 {
			t.Errorf("presented %q %v", got.Message, got.Extensions)
		}
	})

	t.Run("not found has no field", func(t *testing.T) {
		got := present(ctx, apierr.NotFound("rack 9 not found"))
		if got.Message != "rack 9 not found" || got.Extensions["code"] != "NOT_FOUND" {
			t.Errorf("presented %q %v", got.Message, got.Extensions)
		}
		if _, ok := got.Extensions["field"]; ok {
			t.Errorf("field extension present without a field: %v", got.Extensions)
		}
	})

	t.Run("gqlparser errors are VALIDATION", func(t *testing.T) {
		got := present(ctx, gqlerror.Errorf("Cannot query field \"nope\" on type \"Query\"."))
		if got.Extensions["code"] != "VALIDATION" || !strings.Contains(got.Message, "nope") {
			t.Errorf("presented %q %v", got.Message, got.Extensions)
		}
	})

	t.Run("errors with a code keep it", func(t *testing.T) {
		in := gqlerror.Errorf("operation has complexity 9, which exceeds the limit of 1")
		in.Extensions = map[string]any{"code": "COMPLEXITY_LIMIT_EXCEEDED"}
		if got := present(ctx, in); got.Extensions["code"] != "COMPLEXITY_LIMIT_EXCEEDED" {
			t.Errorf("code = %v", got.Extensions["code"])
		}
	})
}

func TestRecover(t *testing.T) {
	log, buf := presenterLog()
	err := gqlerr.Recover(log, func(context.Context) string { return "req-7" })(authz.SystemContext(context.Background(), "test"), "runtime error: index out of range [3] with length 3")
	e, ok := apierr.As(err)
	if !ok || e.Code != apierr.CodeInternal {
		t.Fatalf("Recover returned %v, want an INTERNAL *apierr.Error", err)
	}
	if strings.Contains(e.Message, "index out of range") {
		t.Errorf("message %q leaks the panic", e.Message)
	}
	if !strings.Contains(buf.String(), "index out of range") {
		t.Errorf("the panic was not logged: %q", buf.String())
	}
}

// post sends a GraphQL request with an X-Request-ID through the full HTTP surface.
func post(t *testing.T, h http.Handler, requestID, query string, vars map[string]any) gqltest.Response {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req := httptest.NewRequest(http.MethodPost, "/query", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Request-ID", requestID)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var r gqltest.Response
	if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil {
		t.Fatalf("decode response (HTTP %d): %v: %s", rec.Code, err, rec.Body.String())
	}
	r.Status = rec.Code
	return r
}

const createRegion = `mutation($name: String!) { createRegion(input: {name: $name}) { id name } }`

func TestPresenterThroughGraphQL(t *testing.T) {
	env := gqltest.SQLite(t)
	ctx := authz.SystemContext(context.Background(), "test")

	t.Run("validation names the GraphQL field", func(t *testing.T) {
		r := env.Do(t, `mutation { createFlavor(input: {name: "small", vcpus: 1, memoryMB: 1024, cpuLimitPercent: 500}) { id } }`, nil)
		r.ExpectError(t, "VALIDATION", "cpuLimitPercent")
	})
	t.Run("validation names an acronym field as GraphQL spells it", func(t *testing.T) {
		r := env.Do(t, `mutation { createFlavor(input: {name: "small", vcpus: 1, memoryMB: 1}) { id } }`, nil)
		r.ExpectError(t, "VALIDATION", "memoryMB")
	})

	var reg struct{ CreateRegion struct{ ID, Name string } }
	env.MustDo(t, createRegion, map[string]any{"name": "tokyo1"}, &reg)
	var dc struct{ CreateDatacenter struct{ ID string } }
	env.MustDo(t, `mutation($r: ID!) { createDatacenter(input: {name: "dc1", regionID: $r}) { id } }`, map[string]any{"r": reg.CreateRegion.ID}, &dc)
	var fl struct{ CreateFloor struct{ ID string } }
	env.MustDo(t, `mutation($d: ID!) { createFloor(input: {name: "floor-1-1-1", datacenterID: $d}) { id } }`, map[string]any{"d": dc.CreateDatacenter.ID}, &fl)
	createRack := `mutation($f: ID!) { createRack(input: {name: "r1", floorID: $f}) { id } }`
	env.MustDo(t, createRack, map[string]any{"f": fl.CreateFloor.ID}, &struct{}{})

	t.Run("duplicate is CONFLICT naming the fields", func(t *testing.T) {
		r := env.Do(t, createRack, map[string]any{"f": fl.CreateFloor.ID})
		e := r.ExpectError(t, "CONFLICT", "name")
		if fs, _ := e.Extensions["fields"].([]any); len(fs) != 2 || fs[0] != "name" || fs[1] != "floorID" {
			t.Errorf("extensions.fields = %v, want [name floorID]", e.Extensions["fields"])
		}
		assertNoDriverText(t, e.Message)
	})
	t.Run("duplicate region name", func(t *testing.T) {
		e := env.Do(t, createRegion, map[string]any{"name": "tokyo1"}).ExpectError(t, "CONFLICT", "name")
		assertNoDriverText(t, e.Message)
	})
	t.Run("delete with dependents is CONFLICT listing them", func(t *testing.T) {
		r := env.Do(t, `mutation($id: ID!) { deleteRegion(id: $id) }`, map[string]any{"id": reg.CreateRegion.ID})
		e := r.ExpectError(t, "CONFLICT", "")
		deps, _ := e.Extensions["dependents"].([]any)
		if len(deps) != 1 {
			t.Fatalf("extensions.dependents = %v, want one entry", e.Extensions["dependents"])
		}
		if d, _ := deps[0].(map[string]any); d["edge"] != "datacenters" || d["count"] != float64(1) {
			t.Errorf("dependent = %v, want {edge: datacenters, count: 1}", deps[0])
		}
	})
	t.Run("missing record is NOT_FOUND", func(t *testing.T) {
		env.Do(t, `mutation { updateRegion(id: "424242", input: {description: "x"}) { id } }`, nil).ExpectError(t, "NOT_FOUND", "")
		env.Do(t, `mutation { deleteRegion(id: "424242") }`, nil).ExpectError(t, "NOT_FOUND", "")
	})
	t.Run("parse error is VALIDATION-like and not INTERNAL", func(t *testing.T) {
		r := env.Do(t, `{ regions { `, nil)
		if len(r.Errors) == 0 || r.Errors[0].Code() == "INTERNAL" || r.Errors[0].Code() == "" {
			t.Errorf("parse error presented as %s", r.ErrorsString())
		}
	})

	// An error nobody classified, from deep inside a mutation.
	env.Client.Region.Use(func(next ent.Mutator) ent.Mutator {
		return ent.MutateFunc(func(ctx context.Context, m ent.Mutation) (ent.Value, error) {
			if v, _ := m.(*ent.RegionMutation).Name(); v == "explode" {
				return nil, errors.New("dial tcp 10.0.0.7:5432: password=hunter2 refused")
			}
			if v, _ := m.(*ent.RegionMutation).Name(); v == "panic" {
				panic("secret panic text hunter2")
			}
			return next.Mutate(ctx, m)
		})
	})

	t.Run("unknown error is INTERNAL quoting the request id", func(t *testing.T) {
		r := post(t, env.Handler, "trace-abc-123", createRegion, map[string]any{"name": "explode"})
		e := r.ExpectError(t, "INTERNAL", "")
		if !strings.Contains(e.Message, "trace-abc-123") || e.Extensions["requestId"] != "trace-abc-123" {
			t.Errorf("error %q %v does not quote the request id", e.Message, e.Extensions)
		}
		if strings.Contains(e.Message, "hunter2") || strings.Contains(e.Message, "10.0.0.7") {
			t.Errorf("message %q leaks the original error", e.Message)
		}
	})

	t.Run("panic in a resolver is INTERNAL, not a crashed request", func(t *testing.T) {
		r := post(t, env.Handler, "trace-panic-1", createRegion, map[string]any{"name": "panic"})
		if r.Status != http.StatusOK {
			t.Errorf("HTTP %d, want 200 with an error in the body", r.Status)
		}
		e := r.ExpectError(t, "INTERNAL", "")
		if strings.Contains(e.Message, "hunter2") || strings.Contains(e.Message, "panic text") {
			t.Errorf("message %q leaks the panic", e.Message)
		}
		// The mutation's transaction was rolled back and the server still serves.
		var regions struct {
			Regions struct {
				TotalCount int
				Edges      []struct{ Node struct{ Name string } }
			}
		}
		env.MustDo(t, `{ regions { totalCount edges { node { name } } } }`, nil, &regions)
		if regions.Regions.TotalCount != 1 || regions.Regions.Edges[0].Node.Name != "tokyo1" {
			t.Errorf("regions after the panic = %+v, want only tokyo1", regions.Regions)
		}
		n, err := env.Client.Region.Query().Count(ctx)
		if err != nil || n != 1 {
			t.Errorf("region count = %d, %v; want 1", n, err)
		}
	})
}
