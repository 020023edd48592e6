package topology

import (
	"context"
	"fmt"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/hook"
	"github.com/virtflow/virtflow/ent/link"
	"github.com/virtflow/virtflow/ent/port"
)

// LinkPortsHook rejects a cable from a port to itself, and a cable to a port that already ends
// another cable (as its A or its B end).
func LinkPortsHook() ent.Hook {
	return hook.On(func(next ent.Mutator) ent.Mutator {
		return hook.LinkFunc(func(ctx context.Context, m *ent.LinkMutation) (ent.Value, error) {
			a, hasA := m.APortID()
			b, hasB := m.BPortID()
			if !hasA && !hasB {
				return next.Mutate(ctx, m)
			}
			if m.Op().Is(ent.OpUpdate) {
				return nil, apierr.Validation("aPortID", "cable ends can only be changed one link at a time")
			}
			selfID, _ := m.ID()
			if m.Op().Is(ent.OpUpdateOne) && (!hasA || !hasB) {
				old, err := m.Client().Link.Query().Where(link.ID(selfID)).WithAPort().WithBPort().Only(authz.Unrestricted(ctx))
				if err != nil {
					return nil, err
				}
				if !hasA {
					a = old.Edges.APort.ID
				}
				if !hasB {
					b = old.Edges.BPort.ID
				}
			}
			if a == b {
				return nil, apierr.Validation("bPortID", "a cable cannot connect port %d to itself", a)
			}
			if err := portFree(authz.Unrestricted(ctx), m.Client(), "aPortID", a, selfID); err != nil {
				return nil, err
			}
			if err := portFree(authz.Unrestricted(ctx), m.Client(), "bPortID", b, selfID); err != nil {
				return nil, err
			}
			return next.Mutate(ctx, m)
		})
	}, ent.OpCreate|ent.OpUpdate|ent.OpUpdateOne)
}

// portFree fails when the port ends a cable other than self.
func portFree(ctx context.Context, c *ent.Client, field string, portID, self int) error {
	used, err := c.Link.Query().Where(
		link.IDNEQ(self),
		link.Or(link.HasAPortWith(port.ID(portID)), link.HasBPortWith(port.ID(portID))),
	).First(ctx)
	switch {
	case ent.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("check port %d: %w", portID, err)
	}
	return apierr.Validation(field, "port %d is already the end of cable %d", portID, used.ID)
}
