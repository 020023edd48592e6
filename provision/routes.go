package provision

import (
	"context"
	"fmt"
	"net/netip"
	"slices"

	"github.com/virtflow/virtflow/apierr"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/schema/fieldtype"
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
