package graph_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
)

// TestBackupPathRedacted: Backup.location and Region.backupTarget name a directory on the
// operator's nodes; through the real HTTP handler on PostgreSQL, operators, admins and the
// agent of the node that copies the backup read it, while the backup's tenant member and
// tenant admin and a platform viewer read null (the rest of the row still answers), and
// neither field can be probed with a where filter.
func TestBackupPathRedacted(t *testing.T) {
	env, _ := newEnv(t)
	s := site(t, env)
	ctx := gqltest.System()
	dir := "/srv/" + uniq("backups")
	env.Client.Region.UpdateOneID(s.Region).SetBackupTarget(dir).ExecX(ctx)
	b := env.Client.Backup.Create().SetName(uniq("bk")).SetTenantID(s.Tenant).SetRegionID(s.Region).
		SetNodeID(s.Nodes[0].ID).SetLocation(dir).SetSizeGB(20).SaveX(ctx)

	const q = `query($b: ID!, $r: ID!) {
		b: node(id: $b) { ... on Backup { id name sizeGB location } }
		r: node(id: $r) { ... on Region { id backupTarget } } }`
	type answer struct {
		B *struct {
			ID       string
			Name     string
			Location *string
		}
		R *struct {
			ID           string
			BackupTarget *string
		}
	}
	for _, c := range []struct {
		name         string
		token        string
		sees         bool // reads the paths
		readsRegion  bool // may read the region at all
		readsBackups bool // may read the backup row at all
	}{
		{"admin", roleToken(t, env, authz.RoleAdmin, 0, 0), true, true, true},
		{"operator", roleToken(t, env, authz.RoleOperator, 0, 0), true, true, true},
		{"the copying node's agent", roleToken(t, env, authz.RoleAgent, 0, s.Nodes[0].ID), true, false, true},
		{"platform viewer", roleToken(t, env, authz.RoleViewer, 0, 0), false, true, true},
		{"tenant member", roleToken(t, env, authz.RoleTenantMember, s.Tenant, 0), false, true, true},
		{"tenant admin", roleToken(t, env, authz.RoleTenantAdmin, s.Tenant, 0), false, true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := env.As(c.token).Do(t, q, map[string]any{"b": gqltest.ID(b.ID), "r": gqltest.ID(s.Region)})
			var out answer
			if err := json.Unmarshal(r.Data, &out); err != nil {
				t.Fatalf("decode: %v (%s)", err, r.ErrorsString())
			}
			if c.readsBackups {
				if out.B == nil || out.B.Name != b.Name {
					t.Fatalf("the backup row did not answer: %+v (%s)", out.B, r.ErrorsString())
				}
				switch {
				case c.sees && (out.B.Location == nil || *out.B.Location != dir):
					t.Errorf("location = %v, want %q", out.B.Location, dir)
				case !c.sees && out.B.Location != nil:
					t.Errorf("location leaked: %q", *out.B.Location)
				}
			}
			if c.readsRegion {
				if out.R == nil {
					t.Fatalf("the region did not answer (%s)", r.ErrorsString())
				}
				switch {
				case c.sees && (out.R.BackupTarget == nil || *out.R.BackupTarget != dir):
					t.Errorf("backupTarget = %v, want %q", out.R.BackupTarget, dir)
				case !c.sees && out.R.BackupTarget != nil:
					t.Errorf("backupTarget leaked: %q", *out.R.BackupTarget)
				}
			}
		})
	}

	// A filter on the path would answer "yes or no" for any guess: neither input has one.
	member := env.As(roleToken(t, env, authz.RoleTenantMember, s.Tenant, 0))
	for _, probe := range []string{
		`{ backups(first: 1, where: { locationHasPrefix: "/srv" }) { totalCount } }`,
		`{ regions(first: 1, where: { backupTargetHasPrefix: "/srv" }) { totalCount } }`,
	} {
		r := member.Do(t, probe, nil)
		if len(r.Errors) == 0 || !strings.Contains(r.ErrorsString(), "HasPrefix") {
			t.Errorf("%s was accepted: %s", probe, r.ErrorsString())
		}
	}
}
