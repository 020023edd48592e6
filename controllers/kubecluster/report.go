package kubecluster

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/virtflow/virtflow/domain/guest"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/kubernetescluster"
	"github.com/virtflow/virtflow/ent/servicemesh"
	"github.com/virtflow/virtflow/ent/virtualmachine"
	"github.com/virtflow/virtflow/store/truncate"
)

// Report is what a node's bootstrap script said (guest.Report's bootstrap fields).
type Report struct {
	Step, Result, Reason, Mesh string
}

// OnBootstrap returns the hook package guest calls with a guest's bootstrap report
// (guest.Config.OnBootstrap), dating changes with now.
func OnBootstrap(now func() time.Time) func(ctx context.Context, c *ent.Client, vm int, r guest.Report) error {
	return func(ctx context.Context, c *ent.Client, vm int, r guest.Report) error {
		return RecordReport(ctx, c, now(), vm, Report{Step: r.Step, Result: r.Result, Reason: r.Reason, Mesh: r.Mesh})
	}
}

// RecordReport records, as the system, what the bootstrap script of VM vm reported: its
// node becomes READY (result ok) or FAILED at the step it names with its reason; the first
// control plane's report moves the service mesh's status; the cluster's status is
// aggregated again and its workflow queued (an upgrade waits for these reports). A VM that
// belongs to no cluster, or to a node the cluster no longer has, is ignored.
func RecordReport(ctx context.Context, client *ent.Client, at time.Time, vm int, rep Report) error {
	ctx = system(ctx)
	tx, err := client.Tx(ctx)
	if err != nil {
		return err
	}
	ctx = ent.NewTxContext(ctx, tx)
	if err := recordReport(ctx, tx.Client(), at, vm, rep); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

func recordReport(ctx context.Context, c *ent.Client, at time.Time, vm int, rep Report) error {
	id, err := c.KubernetesCluster.Query().Where(kubernetescluster.HasVirtualMachinesWith(virtualmachine.ID(vm))).OnlyID(ctx)
	if ent.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cluster of VM %d: %w", vm, err)
	}
	r, err := load(ctx, c, id)
	if err != nil || r == nil {
		return err
	}
	nodes := slices.Clone(r.Nodes)
	i := slices.IndexFunc(nodes, func(n nodeT) bool { return n.VMID == vm })
	if i < 0 || nodes[i].State == StateRemoving {
		return nil
	}
	n := &nodes[i]
	n.Step, n.UpdatedAt = truncate.String(rep.Step, 64), at
	if rep.Result == "ok" {
		n.State, n.Reason = StateReady, ""
	} else {
		n.State, n.Reason = StateFailed, truncate.String(rep.Reason, 512)
	}
	u := c.KubernetesCluster.UpdateOneID(id).SetNodes(nodes)
	if n.Role == RoleControlPlane && n.Index == 0 && r.Mesh != 0 {
		// The mesh is installed by the first control plane's bootstrap: its report says how
		// that went, for the cluster and for the mesh (ACTIVE once any cluster runs it).
		switch {
		case rep.Mesh == "ok":
			u.SetServiceMeshStatus(kubernetescluster.ServiceMeshStatusActive)
			if err := c.ServiceMesh.UpdateOneID(r.Mesh).SetStatus(servicemesh.StatusActive).Exec(ctx); err != nil {
				return err
			}
		case rep.Mesh == "failed" || rep.Result != "ok":
			u.SetServiceMeshStatus(kubernetescluster.ServiceMeshStatusError)
			if _, err := c.ServiceMesh.Update().Where(servicemesh.ID(r.Mesh), servicemesh.StatusNEQ(servicemesh.StatusActive)).
				SetStatus(servicemesh.StatusError).Save(ctx); err != nil {
				return err
			}
		}
	}
	status, reason := aggregate(r, nodes)
	updated, err := u.SetStatus(status).SetStatusReason(truncate.String(reason, MaxReason)).Save(ctx)
	if err != nil {
		return err
	}
	return enqueue(ctx, c, updated, 0)
}

// SimulatedReport is what the bootstrap script in userData would report on success, for a
// simulated guest (package fleet) that runs no script: step ready, result ok, and mesh ok
// when the script installs a mesh. ok is false for user-data that is no node's bootstrap.
func SimulatedReport(userData string) (r Report, ok bool) {
	if !strings.Contains(userData, ScriptPath) {
		return Report{}, false
	}
	r = Report{Step: StepReady, Result: "ok"}
	if strings.Contains(userData, "MESH=ok") { // the first control plane installs the mesh
		r.Mesh = "ok"
	}
	return r, true
}
