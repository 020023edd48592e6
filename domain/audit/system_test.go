package audit_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/virtflow/virtflow/controllers/drain"
	"github.com/virtflow/virtflow/controllers/nodemonitor"
	"github.com/virtflow/virtflow/controllers/provision"
	"github.com/virtflow/virtflow/controllers/traffic"
	"github.com/virtflow/virtflow/domain/audit"
	"github.com/virtflow/virtflow/domain/guest"
	"github.com/virtflow/virtflow/domain/placement"
	"github.com/virtflow/virtflow/domain/placement/placementtest"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/auditlog"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/loadbalancer"
	"github.com/virtflow/virtflow/ent/virtualmachine"
	"github.com/virtflow/virtflow/internal/platform/infra"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

// TestMain gives the package its own PostgreSQL database.
func TestMain(m *testing.M) { testdb.Main(m) }

// actorScenario makes one system actor change something. setup prepares a database of its
// own; act runs the actor once (its error, if any, is not the point: what is committed is);
// changed reports what the actor's change looks like from outside, and actions are the
// audit actions its run must leave.
type actorScenario struct {
	// table is the table the actor changes.
	table   string
	setup   func(t *testing.T, c *ent.Client) (act func() error, changed func() bool)
	actions []string
}

// TestSystemActorsAudited walks every system actor (audit.SystemActors) and proves each
// leaves audit rows, as system:<component>, in the transaction of its change:
//
//  1. a commit refused because of the change (a deferred trigger on the changed table
//     raises at commit) leaves neither the change nor an audit row;
//  2. a commit refused because of the audit row (the same trigger on audit_logs) leaves
//     neither: the change cannot happen unaudited;
//  3. an ordinary run leaves the change and its audit rows, with before and after images.
//
// A system actor added to the list without a scenario here fails the test.
func TestSystemActorsAudited(t *testing.T) {
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	scenarios := map[audit.SystemActor]actorScenario{
		audit.NodeMonitor: {
			table: "compute_nodes",
			setup: func(t *testing.T, c *ent.Client) (func() error, func() bool) {
				s := site(t, c, 3)
				quietFor := map[int]time.Duration{s.Nodes[0].ID: time.Minute, s.Nodes[1].ID: 10 * time.Minute, s.Nodes[2].ID: time.Minute}
				for id, d := range quietFor {
					c.ComputeNode.UpdateOneID(id).SetLastHeartbeatAt(now.Add(-d)).ExecX(placementtest.Ctx())
				}
				c.ComputeNode.UpdateOneID(s.Nodes[2].ID).SetAutoCordon(true).SetAutoCordonIntervalSeconds(30).ExecX(placementtest.Ctx())
				c.ComputeNode.UpdateOneID(s.Nodes[1].ID).SetAutoDrain(true).SetAutoDrainIntervalSeconds(120).ExecX(placementtest.Ctx())
				m := nodemonitor.New(c, nodemonitor.Config{Now: func() time.Time { return now }, Placer: placement.New(placement.Config{})}, quiet())
				return func() error { _, err := m.Tick(context.Background()); return err },
					func() bool {
						return c.ComputeNode.Query().Where(computenode.StatusEQ(computenode.StatusReady)).CountX(placementtest.Ctx()) == 0
					}
			},
			actions: []string{"autoCordonNode", "autoDrainNode", "markNodeDown", "markNodeNotReady", "markNodeNotReady"},
		},
		audit.Drain: {
			table: "compute_nodes",
			setup: func(t *testing.T, c *ent.Client) (func() error, func() bool) {
				s := site(t, c, 2)
				empty, stuck := s.Nodes[0].ID, s.Nodes[1].ID
				createVM(t, c, s, stuck)
				c.ComputeNode.UpdateOneID(empty).SetSchedulable(false).SetDrainState(computenode.DrainStateDraining).
					SetDrainDeadline(now.Add(time.Hour)).ExecX(placementtest.Ctx())
				c.ComputeNode.UpdateOneID(stuck).SetSchedulable(false).SetDrainState(computenode.DrainStateDraining).
					SetDrainDeadline(now.Add(-time.Minute)).ExecX(placementtest.Ctx())
				return func() error { _, err := drain.Progress(context.Background(), c, now); return err },
					func() bool {
						return c.ComputeNode.Query().Where(computenode.DrainStateEQ(computenode.DrainStateDraining)).CountX(placementtest.Ctx()) == 0
					}
			},
			actions: []string{"failNodeDrain", "finishNodeDrain"},
		},
		audit.Reconcile: {
			table: "virtual_machines",
			setup: func(t *testing.T, c *ent.Client) (func() error, func() bool) {
				s := site(t, c, 1)
				vm := createVM(t, c, s, s.Nodes[0].ID)
				c.VirtualMachine.UpdateOneID(vm).SetStatus(virtualmachine.StatusCreating).
					SetStatusChangedAt(time.Now().Add(-time.Hour)).ExecX(placementtest.Ctx())
				r := &provision.Reconciler{Client: c, Config: provision.ReconcileConfig{Deadline: time.Minute}}
				return func() error { _, _, err := r.Once(context.Background()); return err },
					vmIs(c, vm, virtualmachine.StatusError)
			},
			actions: []string{"failVirtualMachine"},
		},
		audit.Worker: {
			table: "virtual_machines",
			setup: func(t *testing.T, c *ent.Client) (func() error, func() bool) {
				s := site(t, c, 1)
				vm := createVM(t, c, s, s.Nodes[0].ID)
				payload, err := json.Marshal(provision.Payload{VM: vm})
				if err != nil {
					t.Fatal(err)
				}
				h := &provision.Handlers{Client: c}
				task := asynq.NewTask(provision.TypeVMCreate, payload)
				return func() error { h.Failed(context.Background(), task, errors.New("image not found")); return nil },
					vmIs(c, vm, virtualmachine.StatusError)
			},
			actions: []string{"failVirtualMachine"},
		},
		audit.Traffic: {
			table: "load_balancers",
			setup: func(t *testing.T, c *ent.Client) (func() error, func() bool) {
				s := site(t, c, 2)
				ctx := placementtest.Ctx()
				svc := c.RegionService.Create().SetName(s.Prefix + "-web").SetTenantID(s.Tenant).SetRegionID(s.Region).SaveX(ctx)
				lb := c.LoadBalancer.Create().SetName(s.Prefix + "-web").SetTenantID(s.Tenant).SetRegionServiceID(svc.ID).SaveX(ctx)
				loop := &traffic.Loop{Client: c}
				return func() error { return loop.Once(context.Background()) },
					func() bool {
						return c.LoadBalancer.GetX(ctx, lb.ID).Status == loadbalancer.StatusNotRealized &&
							c.LoadBalancer.QueryNodes(c.LoadBalancer.GetX(ctx, lb.ID)).CountX(ctx) > 0
					}
			},
			actions: []string{"realizeLoadBalancer"},
		},
		audit.BackupSchedule: {
			table: "virtual_machines",
			setup: func(t *testing.T, c *ent.Client) (func() error, func() bool) {
				s := site(t, c, 1)
				ctx := placementtest.Ctx()
				vm := createVM(t, c, s, s.Nodes[0].ID)
				img := c.Image.Create().SetName(s.Prefix + "-img").SetSource("https://images.invalid/x.qcow2").SaveX(ctx)
				c.VirtualMachine.UpdateOneID(vm).SetImageID(img.ID).SetStatus(virtualmachine.StatusActive).
					SetBackupIntervalHours(24).ExecX(ctx)
				c.Region.UpdateOneID(s.Region).SetBackupTarget(t.TempDir()).ExecX(ctx)
				b := &provision.BackupScheduler{Client: c, Service: provision.New(provision.Config{Clock: func() time.Time { return now }})}
				return func() error { _, err := b.Once(context.Background()); return err },
					func() bool { return c.Backup.Query().CountX(ctx) == 1 }
			},
			actions: []string{"scheduleBackup"},
		},
		audit.Guest: {
			table: "virtual_machines",
			setup: func(t *testing.T, c *ent.Client) (func() error, func() bool) {
				s := site(t, c, 1)
				vm := createVM(t, c, s, s.Nodes[0].ID)
				c.VirtualMachine.UpdateOneID(vm).SetGuestState(virtualmachine.GuestStateBooting).
					SetGuestStateChangedAt(now.Add(-time.Hour)).ExecX(placementtest.Ctx())
				g := guest.New(c, guest.Config{Deadline: time.Minute, Now: func() time.Time { return now }})
				return func() error { _, err := g.Overdue(context.Background()); return err },
					func() bool {
						return c.VirtualMachine.GetX(placementtest.Ctx(), vm).GuestState == virtualmachine.GuestStateUnreachable
					}
			},
			actions: []string{"markGuestUnreachable"},
		},
	}

	for _, actor := range audit.SystemActors() {
		t.Run(string(actor), func(t *testing.T) {
			sc, ok := scenarios[actor]
			if !ok {
				t.Fatalf("system actor %s has no scenario: add one proving it audits its changes", actor)
			}
			db, err := infra.OpenDatabase(context.Background(), testdb.New(t), "")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = db.Close() })
			c := db.Client
			refuseCommit(t, db, sc.table, "audit_logs")
			act, changed := sc.setup(t, c)
			if changed() {
				t.Fatal("the scenario's change is there before the actor ran")
			}
			for _, table := range []string{sc.table, "audit_logs"} {
				refuse(t, db, table, true)
				_ = act() // the commit fails: the actor reports or logs it
				refuse(t, db, table, false)
				if changed() {
					t.Errorf("commit refused on %s: the change was kept", table)
				}
				if got := actions(t, c, actor); len(got) > 0 {
					t.Errorf("commit refused on %s: audit rows %v were kept", table, got)
				}
			}
			if err := act(); err != nil {
				t.Fatal(err)
			}
			if !changed() {
				t.Fatal("the actor changed nothing")
			}
			if got := actions(t, c, actor); !slices.Equal(got, sc.actions) {
				t.Errorf("audit actions of %s = %v, want %v", actor.Name(), got, sc.actions)
			}
			for _, l := range c.AuditLog.Query().Where(auditlog.Actor(actor.Name())).AllX(placementtest.Ctx()) {
				if l.ObjectType == "" || l.ObjectID == 0 || len(l.Before) == 0 || len(l.After) == 0 {
					t.Errorf("audit row %s of %s lacks its object or images: %+v", l.Action, actor.Name(), l)
				}
			}
		})
	}
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func site(t *testing.T, c *ent.Client, nodes int) *placementtest.Site {
	t.Helper()
	s, err := placementtest.Build(placementtest.Ctx(), c, placementtest.Spec{Racks: 1, HostsPerRack: nodes,
		CPU: 8, MemoryMB: 8192, DiskGB: 100, Cores: 4})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for _, n := range s.Nodes {
		c.ComputeNode.UpdateOneID(n.ID).SetStatus(computenode.StatusReady).SetLastHeartbeatAt(now).ExecX(placementtest.Ctx())
	}
	return s
}

// createVM places a VM on node (the only schedulable one meanwhile) and returns its id.
func createVM(t *testing.T, c *ent.Client, s *placementtest.Site, node int) int {
	t.Helper()
	ctx := placementtest.Ctx()
	f, err := s.Flavor(ctx, 1, 512, 10, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range s.Nodes {
		c.ComputeNode.UpdateOneID(n.ID).SetSchedulable(n.ID == node).ExecX(ctx)
	}
	tx, err := c.Tx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	vm, err := placement.New(placement.Config{}).CreateVM(ctx, tx.Client(),
		ent.CreateVirtualMachineInput{Name: "vm-" + s.Prefix, TenantID: s.Tenant, RegionID: s.Region, FlavorID: f.ID})
	if err != nil {
		_ = tx.Rollback()
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	for _, n := range s.Nodes {
		c.ComputeNode.UpdateOneID(n.ID).SetSchedulable(true).ExecX(ctx)
	}
	return vm.ID
}

func vmIs(c *ent.Client, id int, st virtualmachine.Status) func() bool {
	return func() bool { return c.VirtualMachine.GetX(placementtest.Ctx(), id).Status == st }
}

// actions lists the audit actions of actor, sorted.
func actions(t *testing.T, c *ent.Client, actor audit.SystemActor) []string {
	t.Helper()
	got := c.AuditLog.Query().Where(auditlog.Actor(actor.Name())).Select(auditlog.FieldAction).StringsX(placementtest.Ctx())
	slices.Sort(got)
	return got
}

// refuseCommit installs, on each table, a deferred constraint trigger that makes a commit
// writing the table fail while refuse(table, true) is in force: the transaction's changes
// then all roll back together, whatever statement came first.
func refuseCommit(t *testing.T, db *infra.Database, tables ...string) {
	t.Helper()
	stmts := []string{
		`CREATE TABLE test_refuse_commit (tbl text PRIMARY KEY)`,
		`CREATE FUNCTION test_refuse_commit() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF EXISTS (SELECT 1 FROM test_refuse_commit WHERE tbl = TG_TABLE_NAME) THEN
				RAISE EXCEPTION 'test: commit refused on %', TG_TABLE_NAME;
			END IF;
			RETURN NULL;
		END $$`,
	}
	for _, tbl := range tables {
		stmts = append(stmts, `CREATE CONSTRAINT TRIGGER test_refuse_commit AFTER INSERT OR UPDATE ON `+tbl+
			` DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION test_refuse_commit()`)
	}
	for _, s := range stmts {
		if _, err := db.DB.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

func refuse(t *testing.T, db *infra.Database, table string, on bool) {
	t.Helper()
	q := `DELETE FROM test_refuse_commit WHERE tbl = $1`
	if on {
		q = `INSERT INTO test_refuse_commit VALUES ($1)`
	}
	if _, err := db.DB.Exec(q, table); err != nil {
		t.Fatal(err)
	}
}
