package dberr_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	"github.com/lib/pq"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/ent"
	_ "github.com/virtflow/virtflow/ent/runtime" // defaults and hooks
	"github.com/virtflow/virtflow/internal/platform/infra"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
	"github.com/virtflow/virtflow/store/dberr"
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
				got := dberr.Classify(e)
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
		if got := dberr.Classify(err); got != nil {
			t.Errorf("Classify(%v) = %+v, want nil (INTERNAL)", err, got)
		}
	}
}

func TestClassifyPassesAPIErrorsThrough(t *testing.T) {
	in := apierr.Validation("memoryMB", "must be at least %d", 64)
	for _, err := range []error{in, fmt.Errorf("ctx: %w", in), fmt.Errorf("a: %w", fmt.Errorf("b: %w", in))} {
		if got := dberr.Classify(err); got != in {
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
			got := dberr.Classify(tt.err)
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
		got := dberr.Classify(fmt.Errorf("delete: %w", depErr))
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
	got := dberr.Classify(dup)
	if got == nil || got.Code != apierr.CodeConflict || !reflect.DeepEqual(got.Extra["fields"], []string{"name", "floorID"}) {
		t.Errorf("duplicate rack on PostgreSQL: Classify(%v) = %+v, want CONFLICT fields [name floorID]", dup, got)
	} else {
		assertNoDriverText(t, got.Message)
	}

	_, dupRegion := c.Region.Create().SetName("tokyo1").Save(ctx)
	got = dberr.Classify(dupRegion)
	if got == nil || got.Code != apierr.CodeConflict || got.Field != "name" {
		t.Errorf("duplicate region on PostgreSQL: Classify(%v) = %+v, want CONFLICT field name", dupRegion, got)
	}

	_, fk := c.Rack.Create().SetName("r2").SetFloorID(999999).Save(ctx)
	got = dberr.Classify(fk)
	if got == nil || got.Code != apierr.CodeValidation || got.Field != "floorID" {
		t.Errorf("rack on a missing floor on PostgreSQL: Classify(%v) = %+v, want VALIDATION field floorID", fk, got)
	} else {
		assertNoDriverText(t, got.Message)
	}
}

// TestClassifyPostgresDeadlock makes PostgreSQL detect a real deadlock (two transactions
// updating two regions in opposite orders): the loser's error, wrapped as callers wrap it,
// is CONFLICT with a message that says to try again and no driver text.
func TestClassifyPostgresDeadlock(t *testing.T) {
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
	a := c.Region.Create().SetName("a").SaveX(ctx)
	b := c.Region.Create().SetName("b").SaveX(ctx)

	tx1, err := c.Tx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx1.Rollback() }()
	tx2, err := c.Tx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx2.Rollback() }()
	tx1.Region.UpdateOneID(a.ID).SetDescription("1").ExecX(ctx)
	tx2.Region.UpdateOneID(b.ID).SetDescription("2").ExecX(ctx)
	second := make(chan error, 1)
	go func() { second <- tx1.Region.UpdateOneID(b.ID).SetDescription("1").Exec(ctx) }()
	first := tx2.Region.UpdateOneID(a.ID).SetDescription("2").Exec(ctx)
	var lost error
	if first != nil {
		lost = first
		_ = tx2.Rollback() // lets tx1 go on
		<-second
	} else {
		lost = <-second
	}
	if lost == nil {
		t.Fatal("PostgreSQL detected no deadlock")
	}
	got := dberr.Classify(fmt.Errorf("move VM x: %w", lost))
	if got == nil || got.Code != apierr.CodeConflict || !strings.Contains(got.Message, "try again") {
		t.Fatalf("Classify(deadlock %v) = %+v, want CONFLICT saying to try again", lost, got)
	}
	assertNoDriverText(t, got.Message)
}
