package topology

import (
	"context"
	"fmt"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/hook"
	"github.com/virtflow/virtflow/ent/host"
	"github.com/virtflow/virtflow/ent/rack"
	"github.com/virtflow/virtflow/store/rowlock"
)

// Placement is where a device sits in a rack.
type Placement struct {
	Position  int  // lowest unit, 1 is the bottom
	Height    int  // units
	Rear      bool // mounted on the rear face
	FullDepth bool // blocks both faces
}

// Top is the highest unit the device occupies.
func (p Placement) Top() int { return p.Position + p.Height - 1 }

// Conflicts reports whether two devices of one rack claim the same unit on the same face.
func (p Placement) Conflicts(q Placement) bool {
	if p.Position > q.Top() || q.Position > p.Top() {
		return false
	}
	return p.FullDepth || q.FullDepth || p.Rear == q.Rear
}

func (p Placement) String() string {
	face := "front"
	if p.FullDepth {
		face = "full depth"
	} else if p.Rear {
		face = "rear"
	}
	if p.Height == 1 {
		return fmt.Sprintf("U%d, %s", p.Position, face)
	}
	return fmt.Sprintf("U%d-U%d, %s", p.Position, p.Top(), face)
}

// RackPlacementHook rejects a host whose rack units fall outside its rack or overlap another
// device on the same face. It locks the rack row for the rest of the transaction so two
// concurrent writers cannot both take the same units.
func RackPlacementHook() ent.Hook {
	return hook.On(func(next ent.Mutator) ent.Mutator {
		return hook.HostFunc(func(ctx context.Context, m *ent.HostMutation) (ent.Value, error) {
			if !touchesPlacement(m) {
				return next.Mutate(ctx, m)
			}
			if m.Op().Is(ent.OpUpdate) {
				return nil, apierr.Validation("position", "rack placement can only be changed one host at a time")
			}
			if err := checkPlacement(authz.Unrestricted(ctx), m); err != nil {
				return nil, err
			}
			return next.Mutate(ctx, m)
		})
	}, ent.OpCreate|ent.OpUpdate|ent.OpUpdateOne)
}

func touchesPlacement(m *ent.HostMutation) bool {
	_, p := m.Position()
	_, h := m.Height()
	_, f := m.Face()
	_, d := m.FullDepth()
	_, r := m.RackID()
	return p || h || f || d || r || m.PositionCleared() || m.RackCleared()
}

// checkPlacement resolves the host's placement after the mutation and compares it with the
// other devices of its rack.
func checkPlacement(ctx context.Context, m *ent.HostMutation) error {
	var (
		selfID int
		old    *ent.Host
		err    error
	)
	if m.Op().Is(ent.OpUpdateOne) {
		selfID, _ = m.ID()
		old, err = m.Client().Host.Query().Where(host.ID(selfID)).WithRack().Only(ctx)
		if err != nil {
			return err
		}
	}
	rackID, hasRack := m.RackID()
	if !hasRack && !m.RackCleared() && old != nil && old.Edges.Rack != nil {
		rackID, hasRack = old.Edges.Rack.ID, true
	}
	pos, hasPos := m.Position()
	if !hasPos && !m.PositionCleared() && old != nil && old.Position != 0 {
		pos, hasPos = old.Position, true
	}
	if !hasRack || !hasPos {
		return nil // not mounted: nothing to check
	}
	p := Placement{Position: pos, Height: 1, FullDepth: true}
	if old != nil {
		p.Height, p.Rear, p.FullDepth = old.Height, old.Face == host.FaceRear, old.FullDepth
	}
	if v, ok := m.Height(); ok {
		p.Height = v
	}
	if v, ok := m.Face(); ok {
		p.Rear = v == host.FaceRear
	}
	if v, ok := m.FullDepth(); ok {
		p.FullDepth = v
	}
	r, err := m.Client().Rack.Query().Where(rack.ID(rackID)).Modify(rowlock.ForUpdate).Only(ctx)
	if ent.IsNotFound(err) {
		return apierr.Validation("rackID", "rack %d does not exist", rackID)
	}
	if err != nil {
		return fmt.Errorf("lock rack %d: %w", rackID, err)
	}
	if p.Top() > r.Height {
		return apierr.Validation("position", "%s does not fit in rack %s of %dU", p, r.Name, r.Height)
	}
	others, err := m.Client().Host.Query().
		Where(host.HasRackWith(rack.ID(rackID)), host.PositionNotNil(), host.IDNEQ(selfID)).
		Select(host.FieldName, host.FieldPosition, host.FieldHeight, host.FieldFace, host.FieldFullDepth).
		All(ctx)
	if err != nil {
		return fmt.Errorf("list devices of rack %s: %w", r.Name, err)
	}
	for _, o := range others {
		q := Placement{Position: o.Position, Height: o.Height, Rear: o.Face == host.FaceRear, FullDepth: o.FullDepth}
		if p.Conflicts(q) {
			return apierr.Validation("position", "%s overlaps %s (%s) in rack %s", p, o.Name, q, r.Name)
		}
	}
	return nil
}

// RackHook guards placement from the rack's side: hosts are mounted by setting the host's rack
// and position (so RackPlacementHook sees them), never by attaching them to the rack, and a
// rack cannot shrink below the devices it holds.
func RackHook() ent.Hook {
	return hook.On(func(next ent.Mutator) ent.Mutator {
		return hook.RackFunc(func(ctx context.Context, m *ent.RackMutation) (ent.Value, error) {
			if len(m.HostsIDs()) > 0 {
				return nil, apierr.Validation("hostIDs", "mount a host by setting its rackID and position, so its units can be checked")
			}
			height, ok := m.Height()
			if !ok || m.Op().Is(ent.OpCreate) {
				return next.Mutate(ctx, m)
			}
			if m.Op().Is(ent.OpUpdate) {
				return nil, apierr.Validation("height", "rack height can only be changed one rack at a time")
			}
			id, _ := m.ID()
			hosts, err := m.Client().Host.Query().
				Where(host.HasRackWith(rack.ID(id)), host.PositionNotNil()).
				Select(host.FieldName, host.FieldPosition, host.FieldHeight).All(authz.Unrestricted(ctx))
			if err != nil {
				return nil, fmt.Errorf("list devices of rack %d: %w", id, err)
			}
			for _, h := range hosts {
				if top := h.Position + h.Height - 1; top > height {
					return nil, apierr.Validation("height", "%s occupies up to U%d; move it before shrinking the rack to %dU", h.Name, top, height)
				}
			}
			return next.Mutate(ctx, m)
		})
	}, ent.OpCreate|ent.OpUpdate|ent.OpUpdateOne)
}
