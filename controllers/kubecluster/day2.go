package kubecluster

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/kubernetescluster"
	"github.com/virtflow/virtflow/ent/schema/fieldtype"
	"github.com/virtflow/virtflow/ent/virtualmachine"
)

// converge is the step of a built cluster (phase READY): it makes one change towards what
// the cluster asks for, in this order, and queues the next step:
//
//  1. a node being removed whose VM is gone is forgotten;
//  2. a worker whose VM is in ERROR is replaced (a new worker, the old VM deleted);
//  3. per role, control planes first, an upgrade moves one node at a time: while a node
//     of the new version is not READY it waits; otherwise with no more nodes than wanted
//     it adds one of the new version, and with one more it removes the oldest old one;
//  4. workers (and control planes) are added up to their count as one group, or removed
//     from the end (highest index first).
//
// With nothing to do it writes only the aggregated status.
func (s *Service) converge(ctx context.Context, c *ent.Client, r *row) (result, error) {
	have, err := existing(ctx, c, r)
	if err != nil {
		return result{}, err
	}
	now := s.now()
	nodes := make([]fieldtype.KubernetesNode, 0, len(r.Nodes))
	removing := 0
	for _, n := range r.Nodes {
		if n.State == StateRemoving {
			if _, ok := have[n.Name]; !ok {
				continue // 1: its VM is gone
			}
			removing++
		}
		nodes = append(nodes, n)
	}
	// 2: replace failed workers, one at a time; a control plane whose VM failed is FAILED
	// (its etcd member cannot be replaced from here) and named in the status.
	joining := false
	for _, n := range nodes {
		if n.Role == RoleWorker && (n.State == StatePending || n.State == StateBootstrapping) {
			joining = true
		}
	}
	for i := range nodes {
		n := &nodes[i]
		vm := have[n.Name]
		if n.State == StateRemoving || vm == nil || vm.Status != virtualmachine.StatusError {
			continue
		}
		if n.Role != RoleWorker {
			if n.State != StateFailed {
				n.State, n.Step, n.Reason, n.UpdatedAt = StateFailed, "vm", "its VM is in ERROR: "+vm.StatusReason, now
			}
			continue
		}
		if joining {
			continue
		}
		n.State, n.Reason, n.UpdatedAt = StateRemoving, "replaced: its VM is in ERROR: "+vm.StatusReason, now
		if err := s.prov.DeleteVM(ctx, c, vm.ID, false); err != nil {
			return result{}, fmt.Errorf("delete failed worker %s: %w", n.Name, err)
		}
		return s.add(ctx, c, r, nodes, RoleWorker, 1, r.Version, nil)
	}
	for _, role := range []string{RoleControlPlane, RoleWorker} {
		want := r.ControlPlaneCount
		if role == RoleWorker {
			want = r.WorkerCount
		}
		var active, old []int // indexes into nodes
		waiting := false
		for i, n := range nodes {
			if n.Role != role || n.State == StateRemoving {
				continue
			}
			active = append(active, i)
			if n.Version != r.Version {
				old = append(old, i)
			} else if n.State != StateReady {
				waiting = true
			}
		}
		if len(old) > 0 { // 3: rolling upgrade
			if waiting {
				return result{nodes: nodes}, nil // a report moves it on
			}
			if len(active) <= want {
				var keepOff []int
				if vm := have[nodes[old[0]].Name]; vm != nil {
					keepOff = []int{vm.ID}
				}
				return s.add(ctx, c, r, nodes, role, 1, r.Version, keepOff)
			}
			return s.drop(ctx, c, r, nodes, have, old[:1])
		}
		switch { // 4: scale
		case len(active) < want:
			return s.add(ctx, c, r, nodes, role, want-len(active), r.Version, nil)
		case len(active) > want:
			slices.SortFunc(active, func(a, b int) int { return nodes[b].Index - nodes[a].Index })
			return s.drop(ctx, c, r, nodes, have, active[:len(active)-want])
		}
	}
	if removing > 0 {
		return result{nodes: nodes, poll: s.poll}, nil
	}
	// Nothing to change: look again later for VMs that failed (nothing else tells the
	// cluster), soon while nodes are still joining.
	for _, n := range nodes {
		if n.State == StatePending || n.State == StateBootstrapping {
			return result{nodes: nodes, poll: s.poll}, nil
		}
	}
	return result{nodes: nodes, poll: IdlePolls * s.poll}, nil
}

// IdlePolls is how many poll intervals a settled cluster waits before it looks at its VMs
// again (30 s with the default 2 s).
const IdlePolls = 15

// add records count new nodes of role at version with fresh indexes, and creates,
// renders and queues their VMs.
func (s *Service) add(ctx context.Context, c *ent.Client, r *row, nodes []fieldtype.KubernetesNode, role string, count int, version string, keepOff []int) (result, error) {
	next := r.NextWorkerIndex
	if role == RoleControlPlane {
		next = r.NextControlPlaneIndex
	}
	now := s.now()
	for k := range count {
		nodes = append(nodes, fieldtype.KubernetesNode{Name: nodeName(r.Name, role, next+k), Role: role, Index: next + k,
			Version: version, State: StatePending, UpdatedAt: now})
	}
	if err := s.createVMs(ctx, c, r, nodes, keepOff, true); err != nil {
		return result{}, err
	}
	slices.SortStableFunc(nodes, byIndex)
	return result{nodes: nodes, again: true, update: func(u *ent.KubernetesClusterUpdateOne) {
		if role == RoleControlPlane {
			u.SetNextControlPlaneIndex(next + count)
		} else {
			u.SetNextWorkerIndex(next + count)
		}
	}}, nil
}

// drop removes the nodes at idx: REMOVING, their VMs deleted through the provisioning
// pipeline; the step looks again until the VMs are gone.
func (s *Service) drop(ctx context.Context, c *ent.Client, r *row, nodes []fieldtype.KubernetesNode, have map[string]*ent.VirtualMachine, idx []int) (result, error) {
	now := s.now()
	for _, i := range idx {
		n := &nodes[i]
		n.State, n.UpdatedAt = StateRemoving, now
		if vm := have[n.Name]; vm != nil && vm.Status != virtualmachine.StatusDeleting {
			if err := s.prov.DeleteVM(ctx, c, vm.ID, false); err != nil {
				return result{}, fmt.Errorf("delete node %s: %w", n.Name, err)
			}
		}
	}
	return result{nodes: nodes, poll: s.poll}, nil
}

// remove deletes a DELETING cluster in order: its VMs (through the provisioning pipeline,
// looking again until they are gone), then its VIP and load balancer, then its PKI with
// the record itself.
func (s *Service) remove(ctx context.Context, c *ent.Client, r *row) (result, error) {
	have, err := existing(ctx, c, r)
	if err != nil {
		return result{}, err
	}
	if len(have) > 0 {
		nodes := slices.Clone(r.Nodes)
		for i := range nodes {
			nodes[i].State = StateRemoving
		}
		for _, vm := range have {
			if vm.Status == virtualmachine.StatusDeleting {
				continue
			}
			if err := s.prov.DeleteVM(ctx, c, vm.ID, false); err != nil {
				return result{}, fmt.Errorf("delete VM %s: %w", vm.Name, err)
			}
		}
		return result{nodes: nodes, poll: s.poll}, nil
	}
	if r.APILoadBalancerID != nil {
		if err := s.placer.DeleteVIPLoadBalancer(ctx, c, *r.APILoadBalancerID, s.now()); err != nil {
			return result{}, err
		}
		return result{nodes: []fieldtype.KubernetesNode{}, again: true, update: func(u *ent.KubernetesClusterUpdateOne) {
			u.ClearAPILoadBalancerID().ClearAPIVip().ClearAPIEndpoint()
		}}, nil
	}
	// The PKI goes with the row.
	if err := c.KubernetesCluster.DeleteOneID(r.ID).Exec(ctx); err != nil {
		return result{}, fmt.Errorf("delete cluster %s: %w", r.Name, err)
	}
	return result{gone: true}, nil
}

// aggregate is the cluster's status and reason from its phase and its nodes: ACTIVE once
// every control plane reported READY (workers still joining are listed), CREATING before
// the cluster first became ACTIVE, UPDATING while a day-two change runs, ERROR when the
// first control plane failed, DELETING while it goes. The reason says how many nodes of each
// role are ready and names every failed node with its step and reason.
func aggregate(r *row, nodes []fieldtype.KubernetesNode) (kubernetescluster.Status, string) {
	if r.Phase == kubernetescluster.PhaseDeleting {
		left := 0
		for _, n := range nodes {
			if n.VMID != 0 {
				left++
			}
		}
		if left > 0 {
			return kubernetescluster.StatusDeleting, fmt.Sprintf("deleting: waiting for %d VMs to be removed", left)
		}
		return kubernetescluster.StatusDeleting, "deleting: releasing the VIP and the PKI"
	}
	var cpReady, cpAll, wReady, wAll, removing int
	var failed []string
	firstFailed := false
	for _, n := range nodes {
		if n.State == StateRemoving {
			removing++
			continue
		}
		switch n.Role {
		case RoleControlPlane:
			cpAll++
			if n.State == StateReady {
				cpReady++
			}
		case RoleWorker:
			wAll++
			if n.State == StateReady {
				wReady++
			}
		}
		if n.State == StateFailed {
			failed = append(failed, fmt.Sprintf("%s failed at %s: %s", n.Name, n.Step, n.Reason))
			if n.Role == RoleControlPlane && n.Index == 0 {
				firstFailed = true
			}
		}
	}
	progress := fmt.Sprintf("%d/%d control planes and %d/%d workers ready", cpReady, r.ControlPlaneCount, wReady, r.WorkerCount)
	if removing > 0 {
		progress += fmt.Sprintf(", %d nodes being removed", removing)
	}
	if len(failed) > 0 {
		progress += "; " + strings.Join(failed, "; ")
	}
	switch r.Phase {
	case kubernetescluster.PhasePending:
		return kubernetescluster.StatusCreating, "placing the cluster's VMs"
	case kubernetescluster.PhasePlacing:
		return kubernetescluster.StatusCreating, "allocating the API VIP"
	case kubernetescluster.PhasePki:
		return kubernetescluster.StatusCreating, "issuing the cluster's certificates"
	case kubernetescluster.PhaseBootstrapping:
		return kubernetescluster.StatusCreating, "rendering the nodes' bootstrap"
	}
	if firstFailed {
		return kubernetescluster.StatusError, progress
	}
	everReady := r.Status == kubernetescluster.StatusActive || r.Status == kubernetescluster.StatusUpdating
	cpUp := cpAll > 0 && cpReady == cpAll
	// A day-two change is under way while nodes are replaced, added or removed.
	dayTwo := cpAll != r.ControlPlaneCount || wAll != r.WorkerCount || removing > 0
	for _, n := range nodes {
		if n.Version != r.Version && n.Role != RoleBastion && n.State != StateRemoving {
			dayTwo = true
		}
	}
	switch {
	case dayTwo && everReady:
		return kubernetescluster.StatusUpdating, progress
	case cpUp:
		// ACTIVE once the control plane is: workers still joining are in the reason.
		return kubernetescluster.StatusActive, progress
	case everReady:
		return kubernetescluster.StatusUpdating, progress
	}
	return kubernetescluster.StatusCreating, progress
}

// nodeT is a cluster's node record.
type nodeT = fieldtype.KubernetesNode
