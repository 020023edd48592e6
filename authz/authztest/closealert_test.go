package authztest

import (
	"encoding/json"
	"sync"
	"testing"

	"github.com/virtflow/virtflow/ent/alert"
)

// TestCloseAlert: closeAlert records the closer and the time on the server, changes nothing
// on a closed alert (also under concurrent closes), and is allowed to operators and the
// alert's maintainers only.
func TestCloseAlert(t *testing.T) {
	w := newWorld(t)
	c, ctx := w.c, w.ctx
	open := func(sev string) int {
		return c.Alert.Create().SetName(uniq("alert")).SetSeverity(alert.Severity(sev)).SetHostID(w.hostM).SetNodeID(w.node1).SaveX(ctx).ID
	}
	type closed struct {
		ID, Status, ClosedBy string
		ClosedAt             string // "" for null
	}
	const mutation = `mutation($id: ID!) { closeAlert(id: $id) { id status closedBy closedAt } }`
	closeAs := func(t *testing.T, name string, id int) closed {
		t.Helper()
		var out struct{ CloseAlert closed }
		mustData(t, w.do(t, w.viewer(name), mutation, map[string]any{"id": gid(id)}), &out)
		return out.CloseAlert
	}
	stillOpen := func(t *testing.T, id int) {
		t.Helper()
		if a := c.Alert.GetX(ctx, id); a.Status != alert.StatusOpen || a.ClosedAt != nil || a.ClosedBy != "" {
			t.Errorf("alert %d changed: %s %v %q", id, a.Status, a.ClosedAt, a.ClosedBy)
		}
	}

	t.Run("operator closes; closing again changes nothing", func(t *testing.T) {
		id := open("CRITICAL")
		first := closeAs(t, "operator", id)
		if first.Status != "CLOSED" || first.ClosedAt == "" || first.ClosedBy == "" {
			t.Fatalf("closeAlert = %+v, want CLOSED with closedAt and closedBy", first)
		}
		stored := c.Alert.GetX(ctx, id)
		if stored.Status != alert.StatusClosed || stored.ClosedBy != first.ClosedBy {
			t.Errorf("stored alert %s by %q, answered %+v", stored.Status, stored.ClosedBy, first)
		}
		if again := closeAs(t, "admin", id); again != first {
			t.Errorf("closing again as admin = %+v, want the first close %+v unchanged", again, first)
		}
	})
	t.Run("the alert's maintainer closes it, another maintainer cannot", func(t *testing.T) {
		id := open("WARNING")
		if r := w.do(t, w.viewer("maintainer-other"), mutation, map[string]any{"id": gid(id)}); !onlyCode(r, "FORBIDDEN") {
			t.Errorf("maintainer-other closing alert %d: want FORBIDDEN, got %s %s", id, r.Data, r.ErrorsString())
		}
		stillOpen(t, id)
		if got := closeAs(t, "maintainer-own", id); got.Status != "CLOSED" {
			t.Errorf("maintainer-own: %+v", got)
		}
	})
	t.Run("readers who may not change alerts get FORBIDDEN, others NOT_FOUND", func(t *testing.T) {
		id := open("FATAL") // on node1, where tenant A's VM runs: A's members read it
		for name, code := range map[string]string{"viewer": "FORBIDDEN", "tenant-member": "FORBIDDEN", "tenant-admin": "FORBIDDEN",
			"member-other-tenant": "NOT_FOUND", "agent-own-node": "FORBIDDEN", "no-token": "UNAUTHENTICATED"} {
			if r := w.do(t, w.viewer(name), mutation, map[string]any{"id": gid(id)}); !onlyCode(r, code) {
				t.Errorf("%s: want %s, got %s %s", name, code, r.Data, r.ErrorsString())
			}
		}
		stillOpen(t, id)
		if r := w.do(t, w.viewer("operator"), mutation, map[string]any{"id": gid(1 << 40)}); !onlyCode(r, "NOT_FOUND") {
			t.Errorf("unknown id: want NOT_FOUND, got %s", r.ErrorsString())
		}
	})
	t.Run("concurrent closes agree", func(t *testing.T) {
		id := open("CRITICAL")
		const n = 12
		got := make([]closed, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := w.do(t, w.viewer("operator"), mutation, map[string]any{"id": gid(id)})
				var out struct{ CloseAlert closed }
				if len(r.Errors) > 0 || json.Unmarshal(r.Data, &out) != nil {
					t.Errorf("close %d: %s %s", i, r.Data, r.ErrorsString())
				}
				got[i] = out.CloseAlert
			}()
		}
		wg.Wait()
		for i := range got {
			if got[i] != got[0] || got[i].ClosedAt == "" {
				t.Errorf("close %d answered %+v, close 0 %+v: want one close", i, got[i], got[0])
			}
		}
	})
}
