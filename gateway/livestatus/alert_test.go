package livestatus_test

import (
	"context"
	"testing"
	"time"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/ent/alert"
	"github.com/virtflow/virtflow/gateway/livestatus"
)

// TestAlertChanged: an alert's raise, acknowledgement and close reach an operator's
// alertChanged stream, one state each; a tenant member unaffected by the (non-fatal) alert
// receives nothing of it.
func TestAlertChanged(t *testing.T) {
	s := newStack(t)
	ctx, cancel := context.WithCancel(livestatus.NewContext(sys(), s.hub))
	defer cancel()
	ops, err := livestatus.Alerts(ctx, s.c, nil)
	if err != nil {
		t.Fatal(err)
	}
	outsider := s.c.Tenant.Create().SetName(uniq("outsider")).SaveX(sys())
	member := authz.NewContext(context.Background(), &authz.Viewer{UserID: 1, Name: "member",
		Bindings: []authz.Binding{{Role: authz.RoleTenantMember, Domain: authz.TenantDomain(outsider.ID)}}})
	mctx, mcancel := context.WithCancel(livestatus.NewContext(member, s.hub))
	defer mcancel()
	theirs, err := livestatus.Alerts(mctx, s.c, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := s.c.Alert.Create().SetName(uniq("disk")).SetSeverity(alert.SeverityCritical).SetFingerprint(uniq("fp")).SaveX(sys())
	if got := receive(t, ops); got.ID != a.ID || got.Status != alert.StatusOpen {
		t.Fatalf("raised: %d %s", got.ID, got.Status)
	}
	s.c.Alert.UpdateOneID(a.ID).SetAcknowledgedAt(time.Now()).SetAcknowledgedBy("ops").ExecX(sys())
	if got := receive(t, ops); got.AcknowledgedBy != "ops" {
		t.Fatalf("acknowledged: %+v", got)
	}
	s.c.Alert.UpdateOneID(a.ID).SetStatus(alert.StatusClosed).ExecX(sys())
	if got := receive(t, ops); got.Status != alert.StatusClosed {
		t.Fatalf("closed: %s", got.Status)
	}
	select {
	case got := <-theirs:
		t.Fatalf("a tenant member received alert %d", got.ID)
	case <-time.After(300 * time.Millisecond):
	}
}
