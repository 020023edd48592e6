package authztest

import (
	"strings"
	"testing"
)

// TestMaintenanceOpenedBy (issue 23, item 11): a maintenance record's openedBy is the viewer
// who created it and automatic is false; the server sets both, so a create or an update
// that names them ("forged-person", automatic: true) fails GraphQL validation and writes
// nothing.
func TestMaintenanceOpenedBy(t *testing.T) {
	w := newWorld(t)
	const create = `mutation($in: CreateMaintenanceInput!) { createMaintenance(input: $in) { id openedBy automatic } }`
	var out struct {
		CreateMaintenance struct {
			ID, OpenedBy string
			Automatic    bool
		}
	}
	op := w.viewer("operator")
	mustData(t, w.do(t, op, create, map[string]any{"in": map[string]any{
		"title": uniq("swap PSU"), "startsAt": "2030-01-02T03:04:05Z", "nodeIDs": []string{gid(w.node1)}}}), &out)
	want := w.c.User.GetX(w.ctx, op.userID).Username
	if out.CreateMaintenance.OpenedBy != want || out.CreateMaintenance.Automatic {
		t.Errorf("openedBy = %q, automatic = %v; want the operator %q, false", out.CreateMaintenance.OpenedBy, out.CreateMaintenance.Automatic, want)
	}
	id := out.CreateMaintenance.ID

	for _, forged := range []map[string]any{{"openedBy": "forged-person"}, {"automatic": true}} {
		title := uniq("forged")
		in := map[string]any{"title": title, "startsAt": "2030-01-02T03:04:05Z"}
		for k, v := range forged {
			in[k] = v
		}
		r := w.do(t, op, create, map[string]any{"in": in})
		if len(r.Errors) == 0 || !strings.Contains(r.ErrorsString(), "GRAPHQL_VALIDATION_FAILED") {
			t.Errorf("createMaintenance with %v: %s %s, want a validation failure", forged, r.Data, r.ErrorsString())
		}
		r = w.do(t, op, `mutation($id: ID!, $in: UpdateMaintenanceInput!) { updateMaintenance(id: $id, input: $in) { id openedBy automatic } }`,
			map[string]any{"id": id, "in": forged})
		if len(r.Errors) == 0 || !strings.Contains(r.ErrorsString(), "GRAPHQL_VALIDATION_FAILED") {
			t.Errorf("updateMaintenance with %v: %s %s, want a validation failure", forged, r.Data, r.ErrorsString())
		}
	}
	m := w.c.Maintenance.Query().AllX(w.ctx)
	for _, x := range m {
		if x.OpenedBy == "forged-person" || (x.Automatic && x.OpenedBy == want) {
			t.Errorf("maintenance %d was stored with openedBy %q, automatic %v", x.ID, x.OpenedBy, x.Automatic)
		}
	}
}
