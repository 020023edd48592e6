package alerting_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/virtflow/virtflow/controllers/alerting"
	"github.com/virtflow/virtflow/domain/placement/placementtest"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/alert"
	"github.com/virtflow/virtflow/ent/event"
	"github.com/virtflow/virtflow/ent/eventrule"
	"github.com/virtflow/virtflow/ent/hookdelivery"
	"github.com/virtflow/virtflow/ent/host"
	"github.com/virtflow/virtflow/ent/rack"
	"github.com/virtflow/virtflow/internal/platform/infra"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
	"github.com/virtflow/virtflow/store/dbtx"
)

// pduSite is 50 nodes in five racks of ten; racks 0-3 (40 hosts) are fed by power zone
// pz0 and its PDU, rack 4 by another zone.
func pduSite(t *testing.T) (*ent.Client, *placementtest.Site, *ent.Host) {
	t.Helper()
	db, err := openDB(t)
	if err != nil {
		t.Fatal(err)
	}
	ctx := sys()
	s, err := placementtest.Build(placementtest.Ctx(), db, placementtest.Spec{Racks: 5, HostsPerRack: 10, CPU: 8,
		MemoryMB: 8192, DiskGB: 100, Cores: 4})
	if err != nil {
		t.Fatal(err)
	}
	pz0 := db.Rack.Query().Where(rack.ID(s.Racks[0].ID)).QueryPowerZone().OnlyIDX(ctx)
	other := db.PowerZone.Create().SetName(s.Prefix + "-pz-b").SetDatacenterID(s.Datacenter).SaveX(ctx)
	db.Rack.UpdateOneID(s.Racks[4].ID).SetPowerZoneID(other.ID).ExecX(ctx)
	pdu := db.Host.Create().SetName(s.Prefix + "-pdu-a").SetKind(host.KindPdu).SetPowerZoneID(pz0).SaveX(ctx)
	return db, s, pdu
}

// TestPDUSuppressesDependentHosts: a PDU alert suppresses, within the evaluation that
// raised it, the alerts of the 40 hosts it feeds (not those of the rack on another zone);
// alerts raised while it is open start suppressed and their hooks stay quiet; resolving
// it releases them all.
func TestPDUSuppressesDependentHosts(t *testing.T) {
	c, s, pdu := pduSite(t)
	ctx := sys()
	rule(c, "alert", eventrule.KindAction).SetAction(eventrule.ActionCreateAlert).SaveX(ctx)
	srv := newHookServer(t, "", 0)
	rule(c, "page", eventrule.KindAction).SetAction(eventrule.ActionCallHook).SetCheckNamePattern("disk").
		SetHookURL(srv.URL).SaveX(ctx)
	e := &alerting.Engine{Client: c, Log: quiet()}
	run := func(ids []int) {
		t.Helper()
		if err := e.ProcessEvents(ctx, ids); err != nil {
			t.Fatal(err)
		}
	}
	var in []alerting.EventInput
	for _, n := range s.Nodes {
		in = append(in, alerting.EventInput{NodeID: n.ID, CheckName: "ping", Status: event.StatusCritical})
	}
	run(report(t, c, ctx, in...))
	if n := c.Alert.Query().Where(alert.StatusEQ(alert.StatusOpen)).CountX(ctx); n != 50 {
		t.Fatalf("%d open alerts, want 50", n)
	}

	// The PDU fails: one evaluation raises its alert and suppresses the 40 behind it.
	var pduEvent int
	_, err := dbtx.Run(ctx, c, func(c *ent.Client) error {
		ev, err := alerting.Record(ctx, c, c.Event.Create().SetCheckName("pdu-input").SetStatus(event.StatusCritical).
			SetHostID(pdu.ID).SetSource("snmp"))
		if ev != nil {
			pduEvent = ev.ID
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	run([]int{pduEvent})
	cause := c.Alert.Query().Where(alert.HasHostWith(host.ID(pdu.ID))).OnlyX(ctx)
	suppressed := c.Alert.Query().Where(alert.HasSuppressedByWith(alert.ID(cause.ID))).
		WithNode(func(q *ent.ComputeNodeQuery) { q.WithHost(func(q *ent.HostQuery) { q.WithRack() }) }).AllX(ctx)
	if len(suppressed) != 40 {
		t.Fatalf("%d alerts suppressed by the PDU's, want 40", len(suppressed))
	}
	for _, a := range suppressed {
		if r := a.Edges.Node.Edges.Host.Edges.Rack; r.ID == s.Racks[4].ID {
			t.Errorf("alert %s on rack %s (another power zone) suppressed", a.Name, r.Name)
		}
	}
	if n := c.Alert.Query().Where(alert.HasSuppressedBy()).CountX(ctx); n != 40 {
		t.Errorf("%d suppressed alerts in all, want 40", n)
	}

	// While it is open, a new alert behind it starts suppressed and its hook is held back;
	// one on the other zone pages.
	behind, apart := s.Nodes[0], s.Nodes[45]
	ids := report(t, c, ctx, alerting.EventInput{NodeID: behind.ID, CheckName: "disk", Status: event.StatusCritical},
		alerting.EventInput{NodeID: apart.ID, CheckName: "disk", Status: event.StatusCritical})
	run(ids)
	disk := c.Alert.Query().Where(alert.Name("disk on " + behind.Name)).WithSuppressedBy().OnlyX(ctx)
	if disk.Edges.SuppressedBy == nil || disk.Edges.SuppressedBy.ID != cause.ID {
		t.Errorf("new alert behind the PDU: suppressedBy %v, want alert %d", disk.Edges.SuppressedBy, cause.ID)
	}
	if ev := c.Event.GetX(ctx, ids[0]); !strings.Contains(ev.Outcome, "hook suppressed by alert") {
		t.Errorf("event behind the PDU: outcome %q, want its hook suppressed", ev.Outcome)
	}
	if n := c.HookDelivery.Query().Where(hookdelivery.HasRule()).CountX(ctx); n != 1 {
		t.Errorf("%d hook deliveries, want 1 (the host on the other zone)", n)
	}

	// The PDU recovers: its alert resolves and every alert it held is released.
	var ok int
	_, err = dbtx.Run(ctx, c, func(c *ent.Client) error {
		ev, err := alerting.Record(ctx, c, c.Event.Create().SetCheckName("pdu-input").SetStatus(event.StatusSuccess).
			SetHostID(pdu.ID).SetSource("snmp"))
		if ev != nil {
			ok = ev.ID
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	run([]int{ok})
	if a := c.Alert.GetX(ctx, cause.ID); a.Status != alert.StatusClosed {
		t.Fatalf("PDU alert %s after recovery", a.Status)
	}
	if n := c.Alert.Query().Where(alert.StatusEQ(alert.StatusOpen), alert.HasSuppressedBy()).CountX(ctx); n != 0 {
		t.Errorf("%d open alerts still suppressed after the PDU recovered", n)
	}
}

// TestSwitchSuppressesOnlySingleHomed: a switch alert suppresses the hosts that lose every
// path to a gateway router without it, not those cabled to a second switch; closing it by
// hand releases them.
func TestSwitchSuppressesOnlySingleHomed(t *testing.T) {
	c, err := openDB(t)
	if err != nil {
		t.Fatal(err)
	}
	ctx := sys()
	role := func(name string, r host.Role) *ent.Host {
		return c.Host.Create().SetName(name).SetKind(host.KindSwitch).SetRole(r).SaveX(ctx)
	}
	gw := role("gw", host.RoleGatewayRouter)
	leaf1, leaf2 := role("leaf1", host.RoleRackLeaf), role("leaf2", host.RoleRackLeaf)
	port := 0
	cable := func(a, b *ent.Host) {
		port++
		pa := c.Port.Create().SetName("p" + itoa(port)).SetHostID(a.ID).SaveX(ctx)
		pb := c.Port.Create().SetName("p" + itoa(port)).SetHostID(b.ID).SaveX(ctx)
		c.Link.Create().SetAPortID(pa.ID).SetBPortID(pb.ID).ExecX(ctx)
	}
	cable(leaf1, gw)
	cable(leaf2, gw)
	var single, dual []*ent.Host
	for i := range 3 {
		h := c.Host.Create().SetName("single" + itoa(i)).SaveX(ctx)
		cable(h, leaf1)
		single = append(single, h)
		d := c.Host.Create().SetName("dual" + itoa(i)).SaveX(ctx)
		cable(d, leaf1)
		cable(d, leaf2)
		dual = append(dual, d)
	}
	raise := func(h *ent.Host, check string) *ent.Alert {
		t.Helper()
		var a *ent.Alert
		_, err := dbtx.Run(ctx, c, func(c *ent.Client) error {
			var err error
			a, _, err = alerting.Raise(ctx, c, alerting.AlertSpec{Name: check + " on " + h.Name, Severity: alert.SeverityCritical,
				Fingerprint: check + "|host:" + itoa(h.ID), HostID: h.ID})
			if err == nil {
				err = alerting.AfterChange(ctx, c, a.ID)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	for _, h := range append(append([]*ent.Host{}, single...), dual...) {
		raise(h, "ping")
	}
	cause := raise(leaf1, "link")
	got := c.Alert.Query().Where(alert.HasSuppressedByWith(alert.ID(cause.ID))).QueryHost().Order(ent.Asc(host.FieldName)).
		Select(host.FieldName).StringsX(ctx)
	if len(got) != 3 || got[0] != "single0" || got[2] != "single2" {
		t.Fatalf("suppressed by leaf1's alert: %v, want single0..2 only", got)
	}
	// Both upstream switches of the dual-homed servers alert: they are cut off too, and
	// suppressed by the older of the two alerts; closing one releases them again.
	cause2 := raise(leaf2, "link")
	for _, d := range dual {
		a := c.Alert.Query().Where(alert.HasHostWith(host.ID(d.ID)), alert.StatusEQ(alert.StatusOpen)).
			WithSuppressedBy().OnlyX(ctx)
		if a.Edges.SuppressedBy == nil || a.Edges.SuppressedBy.ID != cause.ID {
			t.Errorf("%s with both leaves alerting: suppressed by %v, want leaf1's alert %d", d.Name, a.Edges.SuppressedBy, cause.ID)
		}
	}
	if _, err := alerting.Close(ctx, c, cause.ID); err != nil {
		t.Fatal(err)
	}
	got = c.Alert.Query().Where(alert.HasSuppressedByWith(alert.ID(cause2.ID))).QueryHost().Order(ent.Asc(host.FieldName)).
		Select(host.FieldName).StringsX(ctx)
	if len(got) != 0 {
		t.Errorf("with leaf1 back, suppressed by leaf2's alert: %v, want none", got)
	}
	if _, err := alerting.Close(ctx, c, cause2.ID); err != nil {
		t.Fatal(err)
	}
	if n := c.Alert.Query().Where(alert.StatusEQ(alert.StatusOpen), alert.HasSuppressedBy()).CountX(ctx); n != 0 {
		t.Errorf("%d alerts still suppressed after the switch alerts were closed", n)
	}
}

func openDB(t *testing.T) (*ent.Client, error) {
	db, err := infra.OpenDatabase(context.Background(), testdb.New(t), "")
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { _ = db.Close() })
	return db.Client, nil
}

func itoa(i int) string { return strconv.Itoa(i) }
