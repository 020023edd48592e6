package loadtest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/virtflow/virtflow/clients/loadtest"
	"github.com/virtflow/virtflow/ent/virtualmachine"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
	"github.com/virtflow/virtflow/internal/testkit/stacktest"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

// TestScenarios runs each scenario briefly against a whole platform (server, worker and a
// simulated fleet on PostgreSQL, internal/stacktest): every report is well-formed (machine
// recorded, a nonzero count of successful requests, no error, percentiles ordered, the table
// and the JSON written) and every VM the harness created, pgbench's rows included, is gone
// afterwards. No timing is asserted.
func TestScenarios(t *testing.T) {
	dsn := testdb.DSN(t)
	// Room for far more VMs than two clients create in two seconds: no NO_CAPACITY.
	st := stacktest.Start(t, dsn, stacktest.Spec{Racks: 2, HostsPerRack: 4, CPU: 256, MemoryMB: 256 << 10})
	base := loadtest.Config{URL: st.URL, Token: st.AdminToken, Clients: 2,
		Tenant: fmt.Sprint(st.Site.Tenant), Region: fmt.Sprint(st.Site.Region),
		// The stack's image has no bytes for the agents to download: VMs without one.
		Flavor: fmt.Sprint(st.Flavor.ID), Image: "none"}
	ctx := context.Background()

	t.Run("creates", func(t *testing.T) {
		cfg := base
		cfg.Duration = 2 * time.Second
		cfg.PgbenchDSN = dsn
		rep, err := loadtest.Creates(ctx, cfg)
		check(t, rep, err, "creates", 1)
		if rep.Created == 0 || rep.Deleted != rep.Created || rep.CleanupErrors != 0 {
			t.Errorf("cleanup: created %d, deleted %d, %d errors (%s)", rep.Created, rep.Deleted, rep.CleanupErrors, rep.CleanupError)
		}
		p := rep.Pgbench
		switch _, lookErr := exec.LookPath("pgbench"); {
		case p == nil:
			t.Error("no pgbench section although -pgbench-dsn was given")
		case lookErr != nil:
			if !strings.Contains(p.Skipped, "not installed") {
				t.Errorf("pgbench missing but the report says %+v", p)
			}
		case p.Skipped != "" || p.TPS <= 0 || p.Ratio <= 0:
			t.Errorf("pgbench floor: %+v", p)
		}
		noVMsLeft(t, st)
	})

	t.Run("creates count", func(t *testing.T) {
		cfg := base
		cfg.Count = 5
		rep, err := loadtest.Creates(ctx, cfg)
		check(t, rep, err, "creates", 1)
		if rep.Ops[0].OK != 5 || rep.Created != 5 || rep.Deleted != 5 {
			t.Errorf("-count 5: %d created (%d ok), %d deleted (%s)", rep.Created, rep.Ops[0].OK, rep.Deleted, rep.CleanupError)
		}
		if rep.Pgbench != nil {
			t.Errorf("pgbench ran without a DSN: %+v", rep.Pgbench)
		}
		noVMsLeft(t, st)
	})

	t.Run("reads", func(t *testing.T) {
		cfg := base
		cfg.Duration = 2 * time.Second
		rep, err := loadtest.Reads(ctx, cfg)
		check(t, rep, err, "reads", 4)
		for _, want := range []string{"racks(first: 100)", "floorView", "rackElevation", "all"} {
			if !hasOp(rep, want) {
				t.Errorf("no %s in %+v", want, rep.Ops)
			}
		}
	})

	t.Run("active", func(t *testing.T) {
		cfg := base
		cfg.VMs = 5
		cfg.ActiveTimeout = 2 * time.Minute
		rep, err := loadtest.Active(ctx, cfg)
		check(t, rep, err, "active", 1)
		if rep.VMs != 5 || rep.AllActiveS <= 0 || rep.AllActiveS < rep.CreatePhaseS || rep.Deleted != 5 {
			t.Errorf("active: %d VMs, create phase %.3f s, all ACTIVE %.3f s, %d deleted (%s)", rep.VMs, rep.CreatePhaseS, rep.AllActiveS, rep.Deleted, rep.CleanupError)
		}
		if len(rep.Phases) != 4 {
			t.Errorf("active: %d phases, want api, to node, on node and create → ACTIVE: %+v", len(rep.Phases), rep.Phases)
		}
		for _, p := range rep.Phases {
			if p.P50MS <= 0 || p.MaxMS < p.P95MS || p.P95MS < p.P50MS || p.LastAtS <= 0 {
				t.Errorf("active: phase %+v is not a distribution of positive durations", p)
			}
		}
		noVMsLeft(t, st)
	})

	t.Run("no server", func(t *testing.T) {
		cfg := base
		cfg.URL, cfg.Count = "http://127.0.0.1:1", 1
		if _, err := loadtest.Creates(ctx, cfg); err == nil {
			t.Error("creates against no server succeeded")
		}
	})
}

// check asserts that a report is well-formed, names its scenario and machine, has ops
// operations each with successful requests and no error, and renders as a table and JSON.
func check(t *testing.T, rep *loadtest.Report, err error, scenario string, ops int) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", scenario, err)
	}
	m := rep.Machine
	if rep.Scenario != scenario || m.CPUs <= 0 || m.GoVersion == "" || m.ServerURL == "" || m.LoadBefore == "" || m.LoadAfter == "" || len(m.Readyz) == 0 {
		t.Errorf("machine or scenario missing: %+v", rep)
	}
	if rep.ElapsedS <= 0 || rep.Clients != 2 || len(rep.Ops) != ops {
		t.Errorf("report: elapsed %v, clients %d, %d ops (want %d)", rep.ElapsedS, rep.Clients, len(rep.Ops), ops)
	}
	for _, o := range rep.Ops {
		if o.OK == 0 || o.PerSecond <= 0 || len(o.Errors) != 0 || o.P50MS <= 0 || o.P50MS > o.P95MS || o.P95MS > o.P99MS {
			t.Errorf("%s: %+v", o.Name, o)
		}
	}
	var table, js bytes.Buffer
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back loadtest.Report
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || back.Scenario != scenario || len(back.Ops) != ops {
		t.Errorf("JSON does not read back (%v): %s", err, js.String())
	}
	for _, want := range []string{"load before / after", "readyz", "p99 ms", rep.Ops[0].Name} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
	t.Logf("%s report:\n%s", scenario, table.String())
}

func hasOp(rep *loadtest.Report, name string) bool {
	for _, o := range rep.Ops {
		if o.Name == name {
			return true
		}
	}
	return false
}

// noVMsLeft fails when a VM of the harness (or of its pgbench replay) is still in the
// database.
func noVMsLeft(t *testing.T, st *stacktest.Stack) {
	t.Helper()
	n, err := st.Client.VirtualMachine.Query().Where(virtualmachine.NameHasPrefix("loadtest-")).Count(gqltest.System())
	if err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("%d VMs of the harness left after its cleanup", n)
	}
}
