package provision

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"time"

	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/assignment"
	"github.com/virtflow/virtflow/ent/schema/fieldtype"
	"github.com/virtflow/virtflow/ent/virtualmachine"
)

// applyRoutes records the routes the agent of a's node reported for VM vm (routed network
// mode, issue 27): which node realizes each address, in which namespace, and whether it is
// announced. Nothing is written when they did not change (the agent reports on every
// resync); nil routes (not reported) leave them as they are.
func (s *Service) applyRoutes(ctx context.Context, client *ent.Client, a *ent.Assignment, vm *ent.VirtualMachine, routes []fieldtype.VMRoute) error {
	if routes == nil {
		return nil
	}
	node := ""
	if a.Edges.Node != nil {
		node = a.Edges.Node.Name
	}
	out := make([]fieldtype.VMRoute, 0, len(routes))
	for i, r := range routes {
		if _, err := netip.ParseAddr(r.Address); err != nil {
			return apierr.Validation(fmt.Sprintf("routes[%d].address", i), "%q is not an IP address", r.Address)
		}
		if r.LinkAddress != "" {
			if _, err := netip.ParseAddr(r.LinkAddress); err != nil {
				return apierr.Validation(fmt.Sprintf("routes[%d].linkAddress", i), "%q is not an IP address", r.LinkAddress)
			}
		}
		if len(r.Namespace) > 255 {
			return apierr.Validation(fmt.Sprintf("routes[%d].namespace", i), "longer than 255 characters")
		}
		r.Node = node
		out = append(out, r)
	}
	same := slices.EqualFunc(out, vm.Routes, func(x, y fieldtype.VMRoute) bool {
		x.UpdatedAt = y.UpdatedAt
		return x == y
	})
	if same {
		return nil
	}
	now := s.now()
	for i := range out {
		out[i].UpdatedAt = now
	}
	if err := client.VirtualMachine.UpdateOne(vm).SetRoutes(out).Exec(system(ctx)); err != nil {
		return fmt.Errorf("update the routes of VM %d: %w", vm.ID, err)
	}
	return nil
}

// NotifyACLChange tells the node agent running VM vmID that the VM's security rules changed:
// the VM's assignments are touched, which publishes assignmentChanged to the agent, whose
// resync then applies the new rules in the VM's namespaces (within a second, instead of at
// its next periodic resync). A VM without assignments has nothing to tell.
func NotifyACLChange(ctx context.Context, client *ent.Client, vmID int, now time.Time) error {
	sys := system(ctx)
	ids, err := client.Assignment.Query().Where(assignment.HasVirtualMachineWith(virtualmachine.ID(vmID))).IDs(sys)
	if err != nil {
		return fmt.Errorf("assignments of VM %d: %w", vmID, err)
	}
	for _, id := range ids {
		if err := client.Assignment.UpdateOneID(id).SetUpdatedAt(now).Exec(sys); err != nil && !ent.IsNotFound(err) {
			return fmt.Errorf("notify the node of VM %d: %w", vmID, err)
		}
	}
	return nil
}
