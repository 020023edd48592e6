package apierr_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/virtflow/virtflow/authz"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	"github.com/99designs/gqlgen/graphql"
	"github.com/lib/pq"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/virtflow/virtflow/apierr"
	"github.com/virtflow/virtflow/ent"
	_ "github.com/virtflow/virtflow/ent/runtime" // defaults and hooks
	"github.com/virtflow/virtflow/internal/gqltest"
	"github.com/virtflow/virtflow/internal/infra"
	"github.com/virtflow/virtflow/internal/testdb"
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

// failingDriver is a PostgreSQL ent driver whose every statement fails with err; it lets ent wrap
// an exact *pq.Error in an *ent.ConstraintError the way it does for a real server.
type failingDriver struct{ err error }

func (d failingDriver) Exec(context.Context, string, any, any) error  { return d.err }
func (d failingDriver) Query(context.Context, string, any, any) error { return d.err }
func (d failingDriver) Tx(context.Context) (dialect.Tx, error)        { return nil, d.err }
func (d failingDriver) Close() error                                  { return nil }
func (d failingDriver) Dialect() string                               { return dialect.Postgres }

// constraintErrorFrom returns the error ent gives when PostgreSQL answers an INSERT with pqErr.
func constraintErrorFrom(t *testing.T, pqErr *pq.Error) error {
	t.Helper()
	client := ent.NewClient(ent.Driver(failingDriver{err: pqErr}))
	_, err := client.Region.Create().SetName("r1").Save(authz.SystemContext(context.Background(), "test"))
	var ce *ent.ConstraintError
	if !errors.As(err, &ce) {
		t.Fatalf("ent returned %T %v, want an *ent.ConstraintError", err, err)
	}
	return err
}

func TestClassifyPostgresConstraints(t *testing.T) {
	tests := []struct {
		name       string
		pq         pq.Error
		wantCode   apierr.Code
		wantField  string
		wantFields []string
	}{
		{
			name: "unique on name and floor edge",
			pq: pq.Error{Code: "23505", Table: "racks", Constraint: "rack_name_floor_racks",
				Message: `duplicate key value violates unique constraint "rack_name_floor_racks"`,
				Detail:  `Key (name, floor_racks)=(r1, 5) already exists.`},
			wantCode: apierr.CodeConflict, wantField: "name", wantFields: []string{"name", "floorID"},
		},
		{
			name: "unique on a snake_case column",
			pq: pq.Error{Code: "23505", Table: "hosts", Message: `duplicate key value violates unique constraint "hosts_serial_number_key"`,
				Detail: `Key (serial_number)=(SN1) already exists.`},
			wantCode: apierr.CodeConflict, wantField: "serialNumber", wantFields: []string{"serialNumber"},
		},
		{
			name: "unique with quoted column",
			pq: pq.Error{Code: "23505", Table: "regions", Message: `duplicate key value violates unique constraint "regions_name_key"`,
				Detail: `Key ("name")=(tokyo1) already exists.`},
			wantCode: apierr.CodeConflict, wantField: "name", wantFields: []string{"name"},
		},
		{
			name: "foreign key names the edge input field",
			pq: pq.Error{Code: "23503", Table: "racks", Constraint: "racks_floors_racks",
				Message: `insert or update on table "racks" violates foreign key constraint "racks_floors_racks"`,
				Detail:  `Key (floor_racks)=(99) is not present in table "floors".`},
			wantCode: apierr.CodeValidation, wantField: "floorID",
		},
		{
			name: "foreign key on hosts",
			pq: pq.Error{Code: "23503", Table: "hosts", Message: `insert or update on table "hosts" violates foreign key constraint "hosts_racks_hosts"`,
				Detail: `Key (rack_hosts)=(7) is not present in table "racks".`},
			wantCode: apierr.CodeValidation, wantField: "rackID",
		},
		{
			name: "check constraint is a generic conflict",
			pq: pq.Error{Code: "23514", Table: "racks", Message: `new row for relation "racks" violates check constraint "height_positive"`,
				Detail: `Failing row contains (secret).`},
			wantCode: apierr.CodeConflict,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pqErr := tt.pq
			err := constraintErrorFrom(t, &pqErr)
			for _, e := range []error{err, fmt.Errorf("create rack: %w", err)} {
				got := apierr.Classify(e)
				if got == nil {
					t.Fatalf("Classify(%v) = nil, want %s", e, tt.wantCode)
				}
				if got.Code != tt.wantCode || got.Field != tt.wantField {
					t.Errorf("Classify = %s field %q, want %s field %q", got.Code, got.Field, tt.wantCode, tt.wantField)
				}
				if tt.wantFields != nil {
					if fs, _ := got.Extra["fields"].([]string); !reflect.DeepEqual(fs, tt.wantFields) {
						t.Errorf("fields = %v, want %v", got.Extra["fields"], tt.wantFields)
					}
					for _, f := range tt.wantFields {
						if !strings.Contains(got.Message, f) {
							t.Errorf("message %q does not name %s", got.Message, f)
						}
					}
				}
				assertNoDriverText(t, got.Message)
				if strings.Contains(got.Message, "secret") || strings.Contains(got.Message, "r1, 5") {
					t.Errorf("message %q repeats the row's values", got.Message)
				}
			}
		})
	}
}

func TestClassifyNonClientErrors(t *testing.T) {
	nsErr := func() error {
		// NotSingularError has unexported fields; get a real one from ent.
		env := gqltest.SQLite(t)
		ctx := authz.SystemContext(context.Background(), "test")
		env.Client.Region.Create().SetName("a").SaveX(ctx)
		env.Client.Region.Create().SetName("b").SaveX(ctx)
		_, err := env.Client.Region.Query().Only(ctx)
		return err
	}()
	for _, err := range []error{
		errors.New("pq: password authentication failed"),
		context.DeadlineExceeded,
		nsErr,
		fmt.Errorf("wrapped: %w", errors.New("boom")),
	} {
		if got := apierr.Classify(err); got != nil {
			t.Errorf("Classify(%v) = %+v, want nil (INTERNAL)", err, got)
		}
	}
}

func TestClassifyPassesAPIErrorsThrough(t *testing.T) {
	in := apierr.Validation("memoryMB", "must be at least %d", 64)
	for _, err := range []error{in, fmt.Errorf("ctx: %w", in), fmt.Errorf("a: %w", fmt.Errorf("b: %w", in))} {
		if got := apierr.Classify(err); got != in {
			t.Errorf("Classify(%v) = %+v, want the *Error itself", err, got)
		}
	}
	if got := in.Error(); got != "memoryMB: must be at least 64" {
		t.Errorf("Error() = %q", got)
	}
	if got := apierr.Conflict("x %d", 1); got.Code != apierr.CodeConflict || got.Error() != "x 1" {
		t.Errorf("Conflict = %+v", got)
	}
	if got := apierr.NotFound("rack %d not found", 9); got.Code != apierr.CodeNotFound || got.Error() != "rack 9 not found" {
		t.Errorf("NotFound = %+v", got)
	}
	if _, ok := apierr.As(errors.New("plain")); ok {
		t.Errorf("As(plain error) = true")
	}
}

func TestClassifyEntErrors(t *testing.T) {
	env := gqltest.SQLite(t)
	c := env.Client
	ctx := authz.SystemContext(context.Background(), "test")
	reg := c.Region.Create().SetName("tokyo1").SaveX(ctx)
	dc := c.Datacenter.Create().SetName("dc1").SetRegion(reg).SaveX(ctx)
	fl := c.Floor.Create().SetName("floor-1-1-1").SetDatacenter(dc).SaveX(ctx)
	c.Rack.Create().SetName("r1").SetFloor(fl).SaveX(ctx)

	flavor := func() *ent.FlavorCreate { return c.Flavor.Create().SetName("small").SetVcpus(1).SetMemoryMB(1024) }
	_, cpuErr := flavor().SetCPULimitPercent(500).Save(ctx)
	_, memErr := flavor().SetMemoryMB(1).Save(ctx)
	_, nameErr := c.Region.Create().SetName("").Save(ctx)
	_, slugErr := c.Region.Create().SetName("Not A Slug").Save(ctx)
	_, notFound := c.Region.Get(ctx, 424242)
	_, rackNotFound := c.Rack.UpdateOneID(424242).SetDescription("x").Save(ctx)
	depErr := c.Region.SafeDelete(ctx, reg.ID)
	_, dupRack := c.Rack.Create().SetName("r1").SetFloor(fl).Save(ctx)
	_, dupRegion := c.Region.Create().SetName("tokyo1").Save(ctx)
	_, fkErr := c.Rack.Create().SetName("r2").SetFloorID(999999).Save(ctx)

	tests := []struct {
		name       string
		err        error
		wantCode   apierr.Code
		wantField  string
		msgHas     string
		wantFields []string
	}{
		{"range validator, snake_case field", cpuErr, apierr.CodeValidation, "cpuLimitPercent", "range", nil},
		// The GraphQL input field is memoryMB (see CreateFlavorInput), not memoryMb.
		{"range validator, field with an acronym", memErr, apierr.CodeValidation, "memoryMB", "range", nil},
		{"empty name", nameErr, apierr.CodeValidation, "name", "", nil},
		{"name not a slug", slugErr, apierr.CodeValidation, "name", "", nil},
		{"get missing record", notFound, apierr.CodeNotFound, "", "region not found", nil},
		{"update missing record", rackNotFound, apierr.CodeNotFound, "", "not found", nil},
		{"dependents", depErr, apierr.CodeConflict, "", "datacenters", nil},
		{"SQLite unique on name and floor", dupRack, apierr.CodeConflict, "name", "", []string{"name", "floorID"}},
		{"SQLite unique name", dupRegion, apierr.CodeConflict, "name", "", []string{"name"}},
		{"SQLite foreign key", fkErr, apierr.CodeValidation, "", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.err == nil {
				t.Fatalf("the operation succeeded; want an error")
			}
			got := apierr.Classify(tt.err)
			if got == nil {
				t.Fatalf("Classify(%v) = nil, want %s", tt.err, tt.wantCode)
			}
			if got.Code != tt.wantCode || got.Field != tt.wantField {
				t.Errorf("Classify(%v) = %s field %q, want %s field %q", tt.err, got.Code, got.Field, tt.wantCode, tt.wantField)
			}
			if tt.msgHas != "" && !strings.Contains(got.Message, tt.msgHas) {
				t.Errorf("message %q does not contain %q", got.Message, tt.msgHas)
			}
			if strings.HasPrefix(got.Message, "ent: ") && tt.wantCode == apierr.CodeNotFound {
				t.Errorf("message %q keeps ent's prefix", got.Message)
			}
			if tt.wantFields != nil {
				if fs, _ := got.Extra["fields"].([]string); !reflect.DeepEqual(fs, tt.wantFields) {
					t.Errorf("fields = %q, want %q (from %v)", got.Extra["fields"], tt.wantFields, tt.err)
				}
			}
			if tt.wantCode != apierr.CodeValidation || tt.wantField == "" {
				assertNoDriverText(t, got.Message)
			}
		})
	}

	t.Run("dependents are listed", func(t *testing.T) {
		got := apierr.Classify(fmt.Errorf("delete: %w", depErr))
		want := []ent.Dependent{{Edge: "datacenters", Count: 1}}
		if got == nil || !reflect.DeepEqual(got.Extra["dependents"], want) {
			t.Fatalf("Classify(dependents) = %+v, want dependents %v", got, want)
		}
	})
}

func TestClassifyPostgresReal(t *testing.T) {
	ctx, cancel := context.WithTimeout(authz.SystemContext(context.Background(), "test"), 60*time.Second)
	defer cancel()
	dsn, drop, err := testdb.Create(ctx)
	if err != nil {
		testdb.Unavailable(t, err)
	}
	t.Cleanup(drop)
	db, err := infra.OpenDatabase(ctx, dsn, "")
	if err != nil {
		t.Fatalf("open database: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	c := db.Client
	reg := c.Region.Create().SetName("tokyo1").SaveX(ctx)
	dc := c.Datacenter.Create().SetName("dc1").SetRegion(reg).SaveX(ctx)
	fl := c.Floor.Create().SetName("floor-1-1-1").SetDatacenter(dc).SaveX(ctx)
	c.Rack.Create().SetName("r1").SetFloor(fl).SaveX(ctx)

	_, dup := c.Rack.Create().SetName("r1").SetFloor(fl).Save(ctx)
	got := apierr.Classify(dup)
	if got == nil || got.Code != apierr.CodeConflict || !reflect.DeepEqual(got.Extra["fields"], []string{"name", "floorID"}) {
		t.Errorf("duplicate rack on PostgreSQL: Classify(%v) = %+v, want CONFLICT fields [name floorID]", dup, got)
	} else {
		assertNoDriverText(t, got.Message)
	}

	_, dupRegion := c.Region.Create().SetName("tokyo1").Save(ctx)
	got = apierr.Classify(dupRegion)
	if got == nil || got.Code != apierr.CodeConflict || got.Field != "name" {
		t.Errorf("duplicate region on PostgreSQL: Classify(%v) = %+v, want CONFLICT field name", dupRegion, got)
	}

	_, fk := c.Rack.Create().SetName("r2").SetFloorID(999999).Save(ctx)
	got = apierr.Classify(fk)
	if got == nil || got.Code != apierr.CodeValidation || got.Field != "floorID" {
		t.Errorf("rack on a missing floor on PostgreSQL: Classify(%v) = %+v, want VALIDATION field floorID", fk, got)
	} else {
		assertNoDriverText(t, got.Message)
	}
}

// presenterLog collects what the presenter logs.
func presenterLog() (*slog.Logger, *bytes.Buffer) {
	var buf bytes.Buffer
	return slog.New(slog.NewTextHandler(&buf, nil)), &buf
}

func TestPresenter(t *testing.T) {
	log, logBuf := presenterLog()
	present := apierr.Presenter(log, func(context.Context) string { return "req-7f3a" })
	ctx := authz.SystemContext(context.Background(), "test")

	t.Run("unknown error is INTERNAL with the request id", func(t *testing.T) {
		secret := errors.New(`pq: relation "users" password=hunter2 does not exist`)
		for _, err := range []error{
			secret, // an error that reached the presenter unwrapped
			// what gqlgen hands the presenter for an error a resolver returned
			graphql.ErrorOnPath(ctx, apierr.FromResolver(secret)),
			graphql.ErrorOnPath(ctx, apierr.FromResolver(fmt.Errorf("load: %w", secret))),
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
		got := present(ctx, graphql.ErrorOnPath(ctx, apierr.FromResolver(fmt.Errorf("create network: %w", in))))
		if got.Extensions["code"] != "VALIDATION" || got.Extensions["field"] != "cidr" || got.Message != "cidr: not a prefix" {
			t.Errorf("presented %q %v", got.Message, got.Extensions)
		}
	})

	t.Run("resolver gqlerror with its own code keeps it", func(t *testing.T) {
		nf := gqlerror.Errorf("Could not resolve to a node with the global id of '9'")
		nf.Extensions = map[string]any{"code": "NOT_FOUND"}
		got := present(ctx, graphql.ErrorOnPath(ctx, apierr.FromResolver(nf)))
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
		got := present(ctx, graphql.ErrorOnPath(ctx, apierr.FromResolver(fmt.Errorf("create vm: %w", e))))
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
	err := apierr.Recover(log, func(context.Context) string { return "req-7" })(authz.SystemContext(context.Background(), "test"), "runtime error: index out of range [3] with length 3")
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
