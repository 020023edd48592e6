package alerting_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/virtflow/virtflow/controllers/alerting"
	"github.com/virtflow/virtflow/ent/alert"
	"github.com/virtflow/virtflow/ent/event"
	"github.com/virtflow/virtflow/ent/eventrule"
	"github.com/virtflow/virtflow/ent/hookdelivery"
	"github.com/virtflow/virtflow/ent/maintainergroup"
	"github.com/virtflow/virtflow/internal/testkit/poll"
)

// TestRouteToMaintainerGroup: an alert on a node of a rack a maintainer group is
// responsible for reaches the group's webhook, signed with its secret, and so does its
// resolution; a group without a webhook and one responsible for something else get
// nothing; each delivery is kept on the group.
func TestRouteToMaintainerGroup(t *testing.T) {
	db, s := site(t, 2)
	c := db.Client
	ctx := sys()
	hooks := newHookServer(t, "grp-secret", 0)
	team := c.MaintainerGroup.Create().SetName("rack-team").SetWebhookURL(hooks.URL).SetWebhookSecret("grp-secret").
		AddRackIDs(s.Racks[0].ID).SaveX(ctx)
	c.MaintainerGroup.Create().SetName("no-hook").AddRackIDs(s.Racks[0].ID).SaveX(ctx)
	other := c.Host.Create().SetName(s.Prefix + "-elsewhere").SaveX(ctx)
	c.MaintainerGroup.Create().SetName("elsewhere").SetWebhookURL(hooks.URL + "/x").AddHostIDs(other.ID).SaveX(ctx)
	rule(c, "alert", eventrule.KindAction).SetAction(eventrule.ActionCreateAlert).SaveX(ctx)
	stop := pipeline(t, c, db.Dialect, privateRedis(t))
	defer stop()

	n := s.Nodes[0]
	report(t, c, ctx, alerting.EventInput{NodeID: n.ID, CheckName: "disk", Status: event.StatusCritical})
	poll.Until(t, 20*time.Second, func() error {
		if got := len(hooks.received()); got != 1 {
			return fmt.Errorf("%d group hooks, want 1", got)
		}
		return nil
	})
	report(t, c, ctx, alerting.EventInput{NodeID: n.ID, CheckName: "disk", Status: event.StatusSuccess})
	poll.Until(t, 20*time.Second, func() error {
		if got := len(hooks.received()); got != 2 {
			return fmt.Errorf("%d group hooks, want 2", got)
		}
		return nil
	})
	got := hooks.received()
	if got[0].MaintainerGroup != "rack-team" || got[0].Recovery || got[0].Alert == nil || got[0].Alert.Name != "disk on "+n.Name {
		t.Errorf("first hook %+v", got[0])
	}
	if !got[1].Recovery || got[1].Alert.Status != string(alert.StatusClosed) {
		t.Errorf("second hook %+v, want the recovery", got[1])
	}
	if hooks.bad != 0 {
		t.Errorf("%d hooks with a bad signature", hooks.bad)
	}
	ds := c.HookDelivery.Query().Where(hookdelivery.HasMaintainerGroupWith(maintainergroup.ID(team.ID))).AllX(ctx)
	if len(ds) != 2 || ds[0].Status != hookdelivery.StatusDelivered {
		t.Errorf("deliveries of the group: %d, want 2 DELIVERED", len(ds))
	}
	if n := c.HookDelivery.Query().CountX(ctx); n != 2 {
		t.Errorf("%d deliveries in all, want 2", n)
	}
}

// TestWarrantyAlerts: a host whose warranty ends within the window gets one WARNING
// lifecycle alert, not again on the next look nor after an operator closed it; one already
// past is CRITICAL; one far off or retired gets none.
func TestWarrantyAlerts(t *testing.T) {
	db, s := site(t, 1)
	c := db.Client
	ctx := sys()
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	soon := c.Host.Create().SetName(s.Prefix + "-soon").SetWarrantyEnd(now.Add(30 * 24 * time.Hour)).SaveX(ctx)
	past := c.Host.Create().SetName(s.Prefix + "-past").SetWarrantyEnd(now.Add(-24 * time.Hour)).SaveX(ctx)
	c.Host.Create().SetName(s.Prefix + "-far").SetWarrantyEnd(now.Add(400 * 24 * time.Hour)).SaveX(ctx)
	c.Host.Create().SetName(s.Prefix + "-retired").SetLifecycle("RETIRED").SetWarrantyEnd(now).SaveX(ctx)
	n, err := alerting.WarrantyAlerts(ctx, c, now, 0)
	if err != nil || n != 2 {
		t.Fatalf("raised %d (%v), want 2", n, err)
	}
	a := c.Alert.Query().Where(alert.HasHostWith()).Where(alert.Name("warranty ends 2030-01-31 on " + soon.Name)).OnlyX(ctx)
	if a.Severity != alert.SeverityWarning {
		t.Errorf("soon: %s", a.Severity)
	}
	if b := c.Alert.Query().Where(alert.Name("warranty ends 2029-12-31 on " + past.Name)).OnlyX(ctx); b.Severity != alert.SeverityCritical {
		t.Errorf("past: %s", b.Severity)
	}
	if _, err := alerting.Close(ctx, c, a.ID); err != nil {
		t.Fatal(err)
	}
	if n, err := alerting.WarrantyAlerts(ctx, c, now.Add(time.Hour), 0); err != nil || n != 0 {
		t.Errorf("second look raised %d (%v), want 0", n, err)
	}
}
