package alerting

import (
	"context"
	"fmt"
	"sort"

	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/alert"
	"github.com/virtflow/virtflow/ent/host"
)

// Suppression from the real topology. An open alert on a failure domain — a power zone, a
// PDU, a switch or router, a whole rack — is a cause: the open alerts of the hosts that
// depend on it (and of their compute nodes) point at it through suppressedBy, and their
// CALL_HOOK rules and group hooks stay quiet while it is open. Which hosts depend on what
// is read from the graph operators already keep:
//
//   - a power zone feeds the hosts in it: those that name it, and those of its racks that
//     name no zone of their own;
//   - a PDU (host kind PDU) feeds its own power zone when it names one, else its rack;
//   - a switch or router (kind SWITCH or ROUTER, or any fabric role) carries the hosts that
//     can no longer reach a gateway router (role GATEWAY_ROUTER) over the cables when it is
//     gone — a server cabled to two rack-leaf routers survives the loss of one; without any
//     gateway router in the graph, the hosts cabled to that switch alone; switches that
//     alert at once count together, so a server whose every upstream switch alerts is
//     suppressed too (by the oldest of those alerts);
//   - a rack holds the hosts mounted in it.
//
// Reconcile recomputes the whole relation at once whenever a cause opens or closes, so a
// dependent's alert is suppressed within the evaluation that raised the cause and released
// in the one that resolves it (or when an operator closes it); alerts raised meanwhile
// look the relation up as they are raised.

// graphHost is what suppression reads of a host.
type graphHost struct {
	id, rack, zone, ownZone int
	kind                    host.Kind
	network, gateway        bool
}

// topo is the cable and power graph of the installation.
type topo struct {
	hosts map[int]*graphHost
	adj   map[int][]int
}

func loadTopo(ctx context.Context, c *ent.Client) (*topo, error) {
	hs, err := c.Host.Query().Select(host.FieldID, host.FieldKind, host.FieldRole).
		WithRack(func(q *ent.RackQuery) { q.Select("id").WithPowerZone(func(q *ent.PowerZoneQuery) { q.Select("id") }) }).
		WithPowerZone(func(q *ent.PowerZoneQuery) { q.Select("id") }).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("load hosts: %w", err)
	}
	t := &topo{hosts: make(map[int]*graphHost, len(hs)), adj: map[int][]int{}}
	for _, h := range hs {
		g := &graphHost{id: h.ID, kind: h.Kind}
		g.network = h.Role != nil || h.Kind == host.KindSwitch || h.Kind == host.KindRouter
		g.gateway = h.Role != nil && *h.Role == host.RoleGatewayRouter
		if r := h.Edges.Rack; r != nil {
			g.rack = r.ID
			if r.Edges.PowerZone != nil {
				g.zone = r.Edges.PowerZone.ID
			}
		}
		if z := h.Edges.PowerZone; z != nil {
			g.ownZone, g.zone = z.ID, z.ID
		}
		t.hosts[h.ID] = g
	}
	links, err := c.Link.Query().
		WithAPort(func(q *ent.PortQuery) { q.Select("id").WithHost(func(q *ent.HostQuery) { q.Select("id") }) }).
		WithBPort(func(q *ent.PortQuery) { q.Select("id").WithHost(func(q *ent.HostQuery) { q.Select("id") }) }).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("load links: %w", err)
	}
	for _, l := range links {
		a, b := l.Edges.APort, l.Edges.BPort
		if a == nil || b == nil || a.Edges.Host == nil || b.Edges.Host == nil {
			continue
		}
		x, y := a.Edges.Host.ID, b.Edges.Host.ID
		t.adj[x] = append(t.adj[x], y)
		t.adj[y] = append(t.adj[y], x)
	}
	return t, nil
}

// reach is the set of hosts reachable over the cables from the gateway routers without
// passing through the hosts of gone.
func (t *topo) reach(gone map[int]bool) map[int]bool {
	seen := map[int]bool{}
	var queue []int
	for id, h := range t.hosts {
		if h.gateway && !gone[id] {
			seen[id] = true
			queue = append(queue, id)
		}
	}
	for len(queue) > 0 {
		x := queue[0]
		queue = queue[1:]
		for _, y := range t.adj[x] {
			if !gone[y] && !seen[y] {
				seen[y] = true
				queue = append(queue, y)
			}
		}
	}
	return seen
}

// cause is what an open alert is about, when it is a failure domain.
type cause struct {
	alert          int
	zone, rack, pd int // power zone, rack, or host (PDU or network gear)
}

// dependents returns the hosts that depend on the cause.
func (t *topo) dependents(c cause) []int {
	var out []int
	inZone := func(z int) {
		for id, h := range t.hosts {
			if h.zone == z && id != c.pd {
				out = append(out, id)
			}
		}
	}
	inRack := func(r int) {
		for id, h := range t.hosts {
			if h.rack == r && id != c.pd {
				out = append(out, id)
			}
		}
	}
	switch {
	case c.zone != 0:
		inZone(c.zone)
	case c.rack != 0:
		inRack(c.rack)
	case c.pd != 0:
		h := t.hosts[c.pd]
		switch {
		case h == nil:
		case h.kind == host.KindPdu && h.ownZone != 0:
			inZone(h.ownZone)
		case h.kind == host.KindPdu && h.rack != 0:
			inRack(h.rack)
		case h.network:
			out = t.networkDependents(c.pd)
		}
	}
	sort.Ints(out)
	return out
}

// networkDependents are the hosts cut off from every gateway router when switch sw is gone.
func (t *topo) networkDependents(sw int) []int {
	return t.cutOff(map[int]bool{sw: true})
}

// cutOff are the hosts (not in gone) cut off from every gateway router when all the
// switches of gone are: a server whose every upstream switch is gone. Without a gateway
// in the graph, the hosts whose every cable ends at a switch of gone.
func (t *topo) cutOff(gone map[int]bool) []int {
	var out []int
	before := t.reach(nil)
	if len(before) == 0 {
		for id, peers := range t.adj {
			if gone[id] || len(peers) == 0 {
				continue
			}
			only := true
			for _, p := range peers {
				only = only && gone[p]
			}
			if only {
				out = append(out, id)
			}
		}
		return out
	}
	after := t.reach(gone)
	for id := range before {
		if !gone[id] && !after[id] {
			out = append(out, id)
		}
	}
	return out
}

// causePredicate selects the alerts that can be causes.
func causePredicate() func(*ent.AlertQuery) {
	return func(q *ent.AlertQuery) {
		q.Where(alert.StatusEQ(alert.StatusOpen), alert.Or(alert.HasRack(), alert.HasPowerZone(),
			alert.HasHostWith(host.Or(host.KindIn(host.KindPdu, host.KindSwitch, host.KindRouter), host.RoleNotNil()))))
	}
}

// openCauses returns the open cause alerts, oldest first.
func openCauses(ctx context.Context, c *ent.Client) ([]cause, error) {
	q := c.Alert.Query()
	causePredicate()(q)
	as, err := q.Order(ent.Asc(alert.FieldID)).
		WithRack(func(q *ent.RackQuery) { q.Select("id") }).
		WithPowerZone(func(q *ent.PowerZoneQuery) { q.Select("id") }).
		WithHost(func(q *ent.HostQuery) { q.Select("id") }).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("load cause alerts: %w", err)
	}
	out := make([]cause, 0, len(as))
	for _, a := range as {
		cs := cause{alert: a.ID}
		switch {
		case a.Edges.PowerZone != nil:
			cs.zone = a.Edges.PowerZone.ID
		case a.Edges.Rack != nil:
			cs.rack = a.Edges.Rack.ID
		case a.Edges.Host != nil:
			cs.pd = a.Edges.Host.ID
		}
		out = append(out, cs)
	}
	return out, nil
}

// Suppressors maps a host to the open alert that suppresses the alerts about it (the
// oldest open cause it depends on). A cause alert is never suppressed by one it
// suppresses itself.
type Suppressors map[int]int

// LoadSuppressors computes the suppressors from the open cause alerts and the graph (a
// handful of statements; none beyond the first when no cause is open).
func LoadSuppressors(ctx context.Context, c *ent.Client) (Suppressors, error) {
	causes, err := openCauses(ctx, c)
	if err != nil || len(causes) == 0 {
		return Suppressors{}, err
	}
	t, err := loadTopo(ctx, c)
	if err != nil {
		return nil, err
	}
	by := Suppressors{}
	hostCause := map[int]int{} // host (PDU, switch) -> the cause alert about it
	for _, cs := range causes {
		if cs.pd != 0 {
			hostCause[cs.pd] = cs.alert
		}
	}
	for _, cs := range causes {
		for _, h := range t.dependents(cs) {
			if _, ok := by[h]; ok {
				continue // an older cause has it
			}
			if hc := hostCause[h]; hc != 0 && cs.pd != 0 && by[cs.pd] == hc {
				continue // h's own alert suppresses this cause: no cycle
			}
			by[h] = cs.alert
		}
	}
	// Switches that are down together: a host none of them cuts off alone (a server cabled
	// to two leaves) may be cut off by all of them at once. It is suppressed by the oldest
	// cause among the gone switches it is cabled to (else the oldest gone switch).
	gone := map[int]bool{}
	var oldest int
	for _, cs := range causes {
		if h := t.hosts[cs.pd]; h != nil && h.network {
			gone[cs.pd] = true
			if oldest == 0 {
				oldest = cs.alert
			}
		}
	}
	if len(gone) > 1 {
		for _, h := range t.cutOff(gone) {
			if _, ok := by[h]; ok {
				continue
			}
			by[h] = oldest
			best := 0
			for _, p := range t.adj[h] {
				if a := hostCause[p]; gone[p] && a != 0 && (best == 0 || a < best) {
					best = a
				}
			}
			if best != 0 {
				by[h] = best
			}
		}
	}
	return by, nil
}

// Reconcile makes suppressedBy of every open alert agree with the open causes: alerts of
// dependent hosts point at their cause, the others (their cause closed) are released. It
// returns how many alerts changed.
func Reconcile(ctx context.Context, c *ent.Client) (int, error) {
	ctx = system(ctx)
	by, err := LoadSuppressors(ctx, c)
	if err != nil {
		return 0, err
	}
	open, err := c.Alert.Query().Where(alert.StatusEQ(alert.StatusOpen), alert.Or(alert.HasHost(), alert.HasNode(), alert.HasSuppressedBy())).
		Select(alert.FieldID).
		WithHost(func(q *ent.HostQuery) { q.Select("id") }).
		WithNode(func(q *ent.ComputeNodeQuery) { q.Select("id").WithHost(func(q *ent.HostQuery) { q.Select("id") }) }).
		WithSuppressedBy(func(q *ent.AlertQuery) { q.Select("id") }).All(ctx)
	if err != nil {
		return 0, fmt.Errorf("load open alerts: %w", err)
	}
	set := map[int][]int{}
	var clear []int
	for _, a := range open {
		want := 0
		if h := alertHost(a); h != 0 {
			want = by[h]
		}
		if want == a.ID {
			want = 0
		}
		have := 0
		if a.Edges.SuppressedBy != nil {
			have = a.Edges.SuppressedBy.ID
		}
		switch {
		case want == have:
		case want == 0:
			clear = append(clear, a.ID)
		default:
			set[want] = append(set[want], a.ID)
		}
	}
	n := len(clear)
	if len(clear) > 0 {
		if err := c.Alert.Update().Where(alert.IDIn(clear...)).ClearSuppressedBy().Exec(ctx); err != nil {
			return 0, fmt.Errorf("release alerts: %w", err)
		}
	}
	for causeID, ids := range set {
		if err := c.Alert.Update().Where(alert.IDIn(ids...)).SetSuppressedByID(causeID).Exec(ctx); err != nil {
			return 0, fmt.Errorf("suppress alerts: %w", err)
		}
		n += len(ids)
	}
	return n, nil
}

// alertHost is the host an alert is about: its host, or its node's host.
func alertHost(a *ent.Alert) int {
	if a.Edges.Host != nil {
		return a.Edges.Host.ID
	}
	if n := a.Edges.Node; n != nil && n.Edges.Host != nil {
		return n.Edges.Host.ID
	}
	return 0
}

// isCause reports whether the open alert id is about a failure domain (or suppresses
// alerts), so that raising or closing it must reconcile suppression.
func isCause(ctx context.Context, c *ent.Client, id int) (bool, error) {
	q := c.Alert.Query().Where(alert.ID(id))
	return q.Where(alert.Or(alert.HasRack(), alert.HasPowerZone(), alert.HasSuppresses(),
		alert.HasHostWith(host.Or(host.KindIn(host.KindPdu, host.KindSwitch, host.KindRouter), host.RoleNotNil())))).
		Exist(system(ctx))
}

// AfterChange reconciles suppression when the alert id, just raised or closed in c's
// transaction, is a cause or suppressed others.
func AfterChange(ctx context.Context, c *ent.Client, id int) error {
	ok, err := isCause(ctx, c, id)
	if err != nil || !ok {
		return err
	}
	_, err = Reconcile(ctx, c)
	return err
}
