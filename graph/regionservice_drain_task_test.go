package graph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/virtflow/virtflow/controllers/provision"
	"github.com/virtflow/virtflow/domain/placement"
	"github.com/virtflow/virtflow/ent/assignment"
	"github.com/virtflow/virtflow/ent/outboxtask"
	"github.com/virtflow/virtflow/ent/regionservice"
	"github.com/virtflow/virtflow/ent/virtualmachine"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
	"github.com/virtflow/virtflow/internal/testkit/poll"
)

// TestServiceReconcileTask: a replica's FAILED report enqueues regionservice:reconcile
// (a burst collapses into one task); the task, run twice, records the failed replica on
// the service, and a replica deleted outside a scale is named in the reason.
func TestServiceReconcileTask(t *testing.T) {
	env, _ := newEnv(t)
	s := newPVSite(t, env)
	ctx := gqltest.System()
	var out struct{ CreateRegionService struct{ ID string } }
	env.MustDo(t, `mutation($in: CreateRegionServiceInput!) { createRegionService(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"name": uniq("pv-svc"), "tenantID": gqltest.ID(s.Tenant), "regionID": gqltest.ID(s.Region),
			"flavorID": gqltest.ID(s.flavor), "replicas": 2}}, &out)
	svc := mustAtoi(out.CreateRegionService.ID)
	vms := env.Client.VirtualMachine.Query().Where(virtualmachine.HasRegionServiceWith(regionservice.ID(svc))).
		Order(virtualmachine.ByID()).IDsX(ctx)
	h := &provision.Handlers{Client: env.Client}
	for _, id := range vms {
		p, _ := json.Marshal(provision.Payload{VM: id})
		if err := h.ProcessTask(context.Background(), asynq.NewTask(provision.TypeVMCreate, p)); err != nil {
			t.Fatal(err)
		}
	}
	report := func(vm int, status string) {
		a := env.Client.Assignment.Query().Where(assignment.HasVirtualMachineWith(virtualmachine.ID(vm))).OnlyX(ctx)
		env.MustDo(t, `mutation($in: AssignmentStatusInput!) { reportAssignmentStatus(input: $in) { id } }`,
			map[string]any{"in": map[string]any{"id": gqltest.ID(a.ID), "generation": 1, "status": status,
				"observedState": "running", "reason": "disk image missing"}}, nil)
	}
	reconcile := func() {
		t.Helper()
		p, _ := json.Marshal(provision.ServicePayload{Service: svc})
		for range 2 { // idempotent
			if err := h.ProcessTask(context.Background(), asynq.NewTask(provision.TypeServiceReconcile, p)); err != nil {
				t.Fatal(err)
			}
		}
	}
	report(vms[0], "APPLIED")
	report(vms[1], "FAILED")
	tasks := env.Client.OutboxTask.Query().Where(outboxtask.Kind(provision.TypeServiceReconcile), outboxtask.Queue(s.queue)).AllX(ctx)
	if len(tasks) == 0 || len(tasks) > 2 { // two reports: one task, two if they straddled a burst window
		t.Fatalf("%d regionservice:reconcile tasks after two reports, want 1 (or 2 across a window)", len(tasks))
	}
	// Undo what the reports' in-transaction recompute wrote: the task must redo it.
	env.Client.RegionService.UpdateOneID(svc).SetStatus(regionservice.StatusCreating).SetStatusReason("stale").ExecX(ctx)
	reconcile()
	got := env.Client.RegionService.GetX(ctx, svc)
	if got.Status != regionservice.StatusError || !strings.Contains(got.StatusReason, "disk image missing") ||
		!strings.Contains(got.StatusReason, "1 of 2 replicas active") {
		t.Fatalf("after the task: %s %q; want ERROR naming the failed replica", got.Status, got.StatusReason)
	}
	// The failed replica is deleted outside a scale: the service says one is missing.
	env.Client.Assignment.Delete().Where(assignment.HasVirtualMachineWith(virtualmachine.ID(vms[1]))).ExecX(ctx)
	if err := placement.New(placement.Config{}).DeleteVM(ctx, env.Client, vms[1]); err != nil {
		t.Fatal(err)
	}
	// placement counts the delete as a scale down; the service still wants two.
	env.Client.RegionService.UpdateOneID(svc).SetReplicas(2).ExecX(ctx)
	reconcile()
	got = env.Client.RegionService.GetX(ctx, svc)
	if got.Status != regionservice.StatusUpdating || !strings.Contains(got.StatusReason, "1 of 2 wanted replicas missing") {
		t.Fatalf("with a replica deleted outside a scale: %s %q", got.Status, got.StatusReason)
	}
	// A service that is gone: nothing to do, no error.
	p, _ := json.Marshal(provision.ServicePayload{Service: svc + 1_000_000})
	if err := h.ProcessTask(context.Background(), asynq.NewTask(provision.TypeServiceReconcile, p)); err != nil {
		t.Fatal(err)
	}
}

// TestServiceReconcileTaskThroughWorker: with the relay and a worker running, a replica
// whose status is changed without the in-transaction recompute is settled by the task a
// later report enqueues.
func TestServiceReconcileTaskThroughWorker(t *testing.T) {
	env, _ := newEnv(t)
	s := newPVSite(t, env)
	ctx := gqltest.System()
	var out struct{ CreateRegionService struct{ ID string } }
	env.MustDo(t, `mutation($in: CreateRegionServiceInput!) { createRegionService(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"name": uniq("pv-svc"), "tenantID": gqltest.ID(s.Tenant), "regionID": gqltest.ID(s.Region),
			"flavorID": gqltest.ID(s.flavor), "replicas": 1}}, &out)
	svc := mustAtoi(out.CreateRegionService.ID)
	(&pvPipeline{}).start(t, env, pvRedis(t), []string{s.queue})
	vm := env.Client.VirtualMachine.Query().Where(virtualmachine.HasRegionServiceWith(regionservice.ID(svc))).OnlyIDX(ctx)
	var a int
	poll.Until(t, 10*time.Second, func() error {
		ids := env.Client.Assignment.Query().Where(assignment.HasVirtualMachineWith(virtualmachine.ID(vm))).IDsX(ctx)
		if len(ids) != 1 {
			return fmt.Errorf("VM %d has %d assignments, want the one vm:create writes", vm, len(ids))
		}
		a = ids[0]
		return nil
	})
	env.MustDo(t, `mutation($in: AssignmentStatusInput!) { reportAssignmentStatus(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"id": gqltest.ID(a), "generation": 1, "status": "FAILED", "reason": "no bridge br0"}}, nil)
	// Undo the in-transaction recompute so that only the task can set it right.
	env.Client.RegionService.UpdateOneID(svc).SetStatus(regionservice.StatusCreating).SetStatusReason("stale").ExecX(ctx)
	poll.Until(t, 15*time.Second, func() error {
		got := env.Client.RegionService.GetX(ctx, svc)
		if got.Status == regionservice.StatusError && strings.Contains(got.StatusReason, "no bridge br0") {
			return nil
		}
		return fmt.Errorf("service still %s %q; want ERROR set by regionservice:reconcile", got.Status, got.StatusReason)
	})
}
