package authztest

import "testing"

// TestMaintenanceOpenedBy: a maintenance record created without openedBy records the viewer
// who created it; one that names someone keeps that name.
func TestMaintenanceOpenedBy(t *testing.T) {
	w := newWorld(t)
	const create = `mutation($in: CreateMaintenanceInput!) { createMaintenance(input: $in) { id openedBy } }`
	var out struct{ CreateMaintenance struct{ ID, OpenedBy string } }
	op := w.viewer("operator")
	mustData(t, w.do(t, op, create, map[string]any{"in": map[string]any{
		"title": uniq("swap PSU"), "startsAt": "2030-01-02T03:04:05Z", "nodeIDs": []string{gid(w.node1)}}}), &out)
	want := w.c.User.GetX(w.ctx, op.userID).Username
	if out.CreateMaintenance.OpenedBy != want {
		t.Errorf("openedBy = %q, want the operator %q", out.CreateMaintenance.OpenedBy, want)
	}
	mustData(t, w.do(t, op, create, map[string]any{"in": map[string]any{
		"title": uniq("firmware"), "startsAt": "2030-01-02T03:04:05Z", "openedBy": "change board"}}), &out)
	if out.CreateMaintenance.OpenedBy != "change board" {
		t.Errorf("openedBy = %q, want the name given", out.CreateMaintenance.OpenedBy)
	}
}
