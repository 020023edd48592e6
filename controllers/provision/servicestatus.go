package provision

import (
	"context"
	"fmt"
	"time"

	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/regionservice"
	"github.com/virtflow/virtflow/ent/virtualmachine"
	"github.com/virtflow/virtflow/store/truncate"
)

// settleService derives the status of the region service VM vm is a replica of from its
// replicas (SPEC.md §5): CREATING while any is being created, ACTIVE when all are, ERROR
// (naming a failed replica) when any failed, UPDATING while some are stopped or changing
// state. A DELETING service is left alone, as is a VM that is no replica. It runs in the
// transaction that changed the VM, and writes only when something changed; a status change
// is dated now.
func settleService(ctx context.Context, c *ent.Client, vm int, now time.Time) error {
	sys := system(ctx)
	svc, err := c.VirtualMachine.Query().Where(virtualmachine.ID(vm)).QueryRegionService().Only(sys)
	if ent.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("region service of VM %d: %w", vm, err)
	}
	return settle(ctx, c, svc, now)
}

// settle recomputes svc's status and reason from its replicas (see settleService). A
// service with fewer replicas than it wants (some deleted outside a scale) says so in its
// reason; it is not re-placed automatically (scaleRegionService does that).
func settle(ctx context.Context, c *ent.Client, svc *ent.RegionService, now time.Time) error {
	sys := system(ctx)
	if svc.Status == regionservice.StatusDeleting {
		return nil
	}
	replicas, err := c.VirtualMachine.Query().Where(virtualmachine.HasRegionServiceWith(regionservice.ID(svc.ID))).
		Order(ent.Asc(virtualmachine.FieldID)).All(sys)
	if err != nil {
		return fmt.Errorf("replicas of region service %d: %w", svc.ID, err)
	}
	n, active, creating := len(replicas), 0, 0
	var failed *ent.VirtualMachine
	for _, r := range replicas {
		switch r.Status {
		case virtualmachine.StatusActive:
			active++
		case virtualmachine.StatusInitializing, virtualmachine.StatusScheduled, virtualmachine.StatusCreating:
			creating++
		case virtualmachine.StatusError:
			if failed == nil {
				failed = r
			}
		}
	}
	var status regionservice.Status
	var reason string
	switch {
	case n == 0:
		return nil
	case failed != nil:
		status = regionservice.StatusError
		reason = fmt.Sprintf("replica %s failed: %s (%d of %d replicas active)", failed.Name, failed.StatusReason, active, n)
	case active == n:
		status, reason = regionservice.StatusActive, fmt.Sprintf("%d of %d replicas active", active, n)
	case creating > 0:
		status, reason = regionservice.StatusCreating, fmt.Sprintf("%d of %d replicas active; %d being created", active, n, creating)
	default:
		status, reason = regionservice.StatusUpdating, fmt.Sprintf("%d of %d replicas active; the others are changing state or stopped", active, n)
	}
	if missing := svc.Replicas - n; missing > 0 && n > 0 {
		reason += fmt.Sprintf("; %d of %d wanted replicas missing (deleted outside a scale; scale the service to re-place them)", missing, svc.Replicas)
		if status == regionservice.StatusActive {
			status = regionservice.StatusUpdating
		}
	}
	reason = truncate.String(reason, maxReason)
	if status == svc.Status && reason == svc.StatusReason {
		return nil
	}
	u := c.RegionService.UpdateOneID(svc.ID).SetStatusReason(reason)
	if status != svc.Status {
		u.SetStatus(status).SetStatusChangedAt(now)
	}
	return u.Exec(sys)
}
