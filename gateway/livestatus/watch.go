package livestatus

import (
	"context"
	"errors"
	"time"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/alert"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/regionservice"
	"github.com/virtflow/virtflow/ent/virtualmachine"
)

// ErrNoHub is returned when a subscription is asked for on a server without live status.
var ErrNoHub = errors.New("live status is not configured on this server")

// VMFilter selects VM events; nil fields match anything.
type VMFilter struct{ ID, TenantID, ClusterID *int }

// NodeFilter selects compute node events; nil fields match anything.
type NodeFilter struct{ ID, ClusterID *int }

// ServiceFilter selects region service events; nil fields match anything.
type ServiceFilter struct{ ID, TenantID *int }

func is(want *int, got int) bool { return want == nil || *want == got }

// mayRead turns the answer of a probe query into the subscription's error: a viewer who
// may not read the type at all (FORBIDDEN, UNAUTHENTICATED) is told at once instead of
// never receiving anything.
func mayRead(_ bool, err error) error { return err }

// VirtualMachines streams the VMs matching f whenever their status changes, as the viewer
// in ctx may read them, until ctx ends.
func VirtualMachines(ctx context.Context, c *ent.Client, f VMFilter) (<-chan *ent.VirtualMachine, error) {
	if err := mayRead(c.VirtualMachine.Query().Where(virtualmachine.ID(0)).Exist(ctx)); err != nil {
		return nil, err
	}
	return watch(ctx, string(VirtualMachine), func(e Event) bool {
		return e.Type == VirtualMachine && is(f.ID, e.ID) && is(f.TenantID, e.TenantID) && is(f.ClusterID, e.ClusterID)
	}, c.VirtualMachine.Get, func(v *ent.VirtualMachine) version { return version{v.ID, v.UpdatedAt} })
}

// Nodes streams the compute nodes matching f whenever their status, cordon or drain
// changes, as the viewer in ctx may read them, until ctx ends.
func Nodes(ctx context.Context, c *ent.Client, f NodeFilter) (<-chan *ent.ComputeNode, error) {
	if err := mayRead(c.ComputeNode.Query().Where(computenode.ID(0)).Exist(ctx)); err != nil {
		return nil, err
	}
	return watch(ctx, string(ComputeNode), func(e Event) bool {
		return e.Type == ComputeNode && is(f.ID, e.ID) && is(f.ClusterID, e.ClusterID)
	}, c.ComputeNode.Get, func(n *ent.ComputeNode) version { return version{n.ID, n.UpdatedAt} })
}

// RegionServices streams the region services matching f whenever their status changes,
// as the viewer in ctx may read them, until ctx ends.
func RegionServices(ctx context.Context, c *ent.Client, f ServiceFilter) (<-chan *ent.RegionService, error) {
	if err := mayRead(c.RegionService.Query().Where(regionservice.ID(0)).Exist(ctx)); err != nil {
		return nil, err
	}
	return watch(ctx, string(RegionService), func(e Event) bool {
		return e.Type == RegionService && is(f.ID, e.ID) && is(f.TenantID, e.TenantID)
	}, c.RegionService.Get, func(s *ent.RegionService) version { return version{s.ID, s.UpdatedAt} })
}

// Assignments streams the assignments of a node whenever one is created or changes, as the
// viewer in ctx may read them (a node agent: only its own node's), until ctx ends. A node
// the viewer cannot read is NOT_FOUND.
func Assignments(ctx context.Context, c *ent.Client, nodeID int) (<-chan *ent.Assignment, error) {
	ok, err := c.ComputeNode.Query().Where(computenode.ID(nodeID)).Exist(ctx)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, apierr.NotFound("compute node %d not found", nodeID)
	}
	return watch(ctx, string(Assignment), func(e Event) bool { return e.Type == Assignment && e.NodeID == nodeID }, c.Assignment.Get,
		func(a *ent.Assignment) version { return version{a.ID, a.UpdatedAt} })
}

// Alerts streams the alerts (alert id, or all) whenever one is raised, repeated,
// acknowledged, resolved or closed, as the viewer in ctx may read them — a tenant member
// only the FATAL alerts that affect its tenants, a maintainer what it may read — until ctx
// ends.
func Alerts(ctx context.Context, c *ent.Client, id *int) (<-chan *ent.Alert, error) {
	if err := mayRead(c.Alert.Query().Where(alert.ID(0)).Exist(ctx)); err != nil {
		return nil, err
	}
	return watch(ctx, string(Alert), func(e Event) bool { return e.Type == Alert && is(id, e.ID) }, c.Alert.Get,
		func(a *ent.Alert) version { return version{a.ID, a.UpdatedAt} })
}

// version identifies one state of a record: its id and when it was last written.
type version struct {
	id      int
	updated time.Time
}

// watch subscribes to the hub of ctx and sends, for every matching event, the record as
// the viewer of ctx reads it now (once per event and permission scope, shared by the
// subscriptions of every viewer with the same permissions on typ, the entity's type name:
// readScopeKey); records the viewer may not read (or that are gone) are skipped.
//
// A state is delivered once: events are re-read, so two changes committed close together
// (or two mutations of one record in one transaction) can both read the latest state, and
// a record whose updated_at is the one last sent is not sent again. The channel closes
// when ctx ends.
func watch[T any](ctx context.Context, typ string, match func(Event) bool, load func(context.Context, int) (T, error), ver func(T) version) (<-chan T, error) {
	hub := FromContext(ctx)
	if hub == nil {
		return nil, ErrNoHub
	}
	viewer := authz.FromContext(ctx)
	if viewer == nil {
		return nil, apierr.Unauthenticated("sign in: send Authorization: Bearer <token> in connection_init")
	}
	key := readScopeKey(viewer, typ)
	events := hub.Subscribe(ctx, match)
	out := make(chan T, 1)
	go func() {
		defer close(out)
		sent := map[int]time.Time{} // last state sent, per record
		for e := range events {
			r, err := hub.reads.do(e.seq, key, func() (any, error) { return load(context.WithoutCancel(ctx), e.ID) })
			if err != nil {
				continue
			}
			v := r.(T)
			vv := ver(v)
			if last, ok := sent[vv.id]; ok && last.Equal(vv.updated) {
				continue
			}
			sent[vv.id] = vv.updated
			select {
			case out <- v:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}
