package identity

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/apitoken"
	"github.com/virtflow/virtflow/ent/maintainer"
	"github.com/virtflow/virtflow/ent/maintainergroup"
	"github.com/virtflow/virtflow/ent/user"
	"github.com/virtflow/virtflow/internal/platform/infra"
)

func (f *fixture) wantRefused(token, ip string) {
	f.t.Helper()
	v, err := f.svc.Authenticate(context.Background(), token, ip)
	if v != nil {
		f.t.Fatalf("Authenticate returned viewer %+v", v)
	}
	e := wantCode(f.t, err, apierr.CodeUnauthenticated)
	if e.Message != "invalid or expired token" {
		f.t.Fatalf("message %q reveals more than it should", e.Message)
	}
}

func TestAuthenticate(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	tn := f.tenant()
	u := f.user("")
	f.bind(u, authz.RoleOperator, nil)
	f.bind(u, authz.RoleTenantAdmin, tn)

	t.Run("ok", func(t *testing.T) {
		plain, tok := f.token(u)
		v, err := f.svc.Authenticate(ctx, plain, "192.0.2.1")
		if err != nil {
			t.Fatal(err)
		}
		if v.UserID != u.ID || v.Name != u.Username || v.TokenID != tok.ID || v.ReadOnly || v.SourceIP != "192.0.2.1" || v.IsSystem() {
			t.Fatalf("viewer %+v", v)
		}
		want := []authz.Binding{{Role: authz.RoleOperator, Domain: "platform"}, {Role: authz.RoleTenantAdmin, Domain: authz.TenantDomain(tn.ID)}}
		if !sameBindings(v.Bindings, want) {
			t.Fatalf("bindings %v, want %v", v.Bindings, want)
		}
		if !v.Can("Rack", authz.ActWrite) || !slices.Contains(v.Domains("tenant", "RoleBinding", authz.ActWrite), tn.ID) {
			t.Fatalf("viewer cannot do what its roles allow")
		}
		if v.MaintainerID != 0 {
			t.Fatalf("MaintainerID = %d for a user who is no maintainer", v.MaintainerID)
		}
	})

	t.Run("unknown", func(t *testing.T) {
		plain, _, _ := NewToken(apitoken.KindApi)
		f.wantRefused(plain, "192.0.2.1")
		f.wantRefused("", "192.0.2.1")
		f.wantRefused(strings.Repeat("x", 5000), "192.0.2.1")
	})

	t.Run("revoked at once", func(t *testing.T) {
		plain, tok := f.token(u)
		uctx := authz.NewContext(ctx, mustAuth(t, f, plain))
		if _, err := f.svc.RevokeAPIToken(uctx, tok.ID); err != nil {
			t.Fatal(err)
		}
		f.wantRefused(plain, "192.0.2.1")
	})

	t.Run("expired", func(t *testing.T) {
		plain, _ := f.token(u, expiresAt(f.clock.Now().Add(time.Hour)))
		mustAuth(t, f, plain)
		f.clock.Add(time.Hour)
		defer f.clock.Add(-time.Hour)
		f.wantRefused(plain, "192.0.2.1")
	})

	t.Run("cidr", func(t *testing.T) {
		plain, _ := f.token(u, cidrs("10.0.0.0/8", "2001:db8::/32"))
		for _, ip := range []string{"10.1.2.3", "2001:db8::1", "::ffff:10.9.9.9"} {
			if _, err := f.svc.Authenticate(ctx, plain, ip); err != nil {
				t.Errorf("from %s: %v", ip, err)
			}
		}
		for _, ip := range []string{"192.0.2.1", "11.0.0.1", "2001:db9::1", "", "garbage"} {
			f.wantRefused(plain, ip)
		}
	})

	t.Run("disabled owner", func(t *testing.T) {
		o := f.user("")
		plain, _ := f.token(o)
		mustAuth(t, f, plain)
		if err := testDB.Client.User.UpdateOne(o).SetStatus(user.StatusDisabled).Exec(f.sys); err != nil {
			t.Fatal(err)
		}
		f.wantRefused(plain, "192.0.2.1")
	})

	t.Run("read-only", func(t *testing.T) {
		plain, _ := f.token(u, readOnly)
		v := mustAuth(t, f, plain)
		if !v.ReadOnly || v.Can("Rack", authz.ActWrite) || !v.Can("Rack", authz.ActRead) {
			t.Fatalf("read-only token: viewer %+v", v)
		}
	})

	t.Run("tenant-scoped", func(t *testing.T) {
		other := f.tenant()
		f.bind(u, authz.RoleTenantMember, other)
		plain, _ := f.token(u, scopedTo(tn))
		v := mustAuth(t, f, plain)
		want := []authz.Binding{{Role: authz.RoleTenantAdmin, Domain: authz.TenantDomain(tn.ID)}}
		if !sameBindings(v.Bindings, want) {
			t.Fatalf("bindings %v, want only %v", v.Bindings, want)
		}
		if v.Can("Rack", authz.ActRead) {
			t.Fatal("a tenant-scoped token kept platform roles")
		}
	})

	t.Run("maintainer", func(t *testing.T) {
		m := f.user("")
		f.bind(m, authz.RoleMaintainer, nil)
		mt, err := testDB.Client.Maintainer.Create().SetName("M").SetAccount(unique("m")).SetUser(m).Save(f.sys)
		if err != nil {
			t.Fatal(err)
		}
		g1, err := testDB.Client.MaintainerGroup.Create().SetName(unique("g")).AddMembers(mt).Save(f.sys)
		if err != nil {
			t.Fatal(err)
		}
		g2, err := testDB.Client.MaintainerGroup.Create().SetName(unique("g")).AddMembers(mt).Save(f.sys)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := testDB.Client.MaintainerGroup.Create().SetName(unique("g")).Save(f.sys); err != nil {
			t.Fatal(err)
		}
		plain, _ := f.token(m)
		v := mustAuth(t, f, plain)
		slices.Sort(v.MaintainerGroupIDs)
		if v.MaintainerID != mt.ID || !slices.Equal(v.MaintainerGroupIDs, []int{g1.ID, g2.ID}) {
			t.Fatalf("maintainer %d groups %v, want %d %v", v.MaintainerID, v.MaintainerGroupIDs, mt.ID, []int{g1.ID, g2.ID})
		}
	})

	t.Run("roles apply at once", func(t *testing.T) {
		o := f.user("")
		plain, _ := f.token(o)
		if v := mustAuth(t, f, plain); len(v.Bindings) != 0 {
			t.Fatalf("bindings %v", v.Bindings)
		}
		b := f.bind(o, authz.RoleViewer, nil)
		if v := mustAuth(t, f, plain); !v.Can("Rack", authz.ActRead) {
			t.Fatal("a new binding did not apply to the next request")
		}
		if err := testDB.Client.RoleBinding.DeleteOne(b).Exec(f.sys); err != nil {
			t.Fatal(err)
		}
		if v := mustAuth(t, f, plain); v.Can("Rack", authz.ActRead) {
			t.Fatal("a deleted binding still applied")
		}
	})
}

func mustAuth(t testing.TB, f *fixture, plain string) *authz.Viewer {
	t.Helper()
	v, err := f.svc.Authenticate(context.Background(), plain, "192.0.2.1")
	if err != nil {
		t.Fatalf("Authenticate: %v", err)
	}
	return v
}

func sameBindings(got, want []authz.Binding) bool {
	key := func(b authz.Binding) string { return b.String() }
	g, w := make([]string, len(got)), make([]string, len(want))
	for i, b := range got {
		g[i] = key(b)
	}
	for i, b := range want {
		w[i] = key(b)
	}
	slices.Sort(g)
	slices.Sort(w)
	return slices.Equal(g, w)
}

func TestLastUsedAt(t *testing.T) {
	f := newFixture(t)
	u := f.user("")
	plain, tok := f.token(u)
	if tok.LastUsedAt != nil {
		t.Fatal("a new token has last_used_at")
	}
	t0 := f.clock.Now()
	mustAuth(t, f, plain)
	if got := f.reload(tok.ID).LastUsedAt; got == nil || !got.Equal(t0) {
		t.Fatalf("last_used_at = %v, want %v", got, t0)
	}
	f.clock.Add(59 * time.Second)
	mustAuth(t, f, plain)
	if got := f.reload(tok.ID).LastUsedAt; !got.Equal(t0) {
		t.Fatalf("last_used_at = %v after 59s, want it kept at %v", got, t0)
	}
	f.clock.Add(2 * time.Second)
	t1 := f.clock.Now()
	mustAuth(t, f, plain)
	if got := f.reload(tok.ID).LastUsedAt; !got.Equal(t1) {
		t.Fatalf("last_used_at = %v after 61s, want %v", got, t1)
	}
}

// TestAuthenticateQueries checks that Authenticate costs one SELECT however many roles and
// groups the user has (one when it refuses the token), and writes last_used_at with a single
// conditional UPDATE, at most once a minute.
func TestAuthenticateQueries(t *testing.T) {
	f := newFixture(t)
	counted, log := countingClient()
	f.svc.Client = counted

	small := f.user("")
	smallToken, _ := f.token(small)

	big := f.user("")
	f.bind(big, authz.RoleOperator, nil)
	f.bind(big, authz.RoleMaintainer, nil)
	for range 5 {
		f.bind(big, authz.RoleTenantMember, f.tenant())
	}
	f.maintainer(big, maintainer.StatusActive, 3, 0)
	bigToken, _ := f.token(big)

	run := func(plain string) []string {
		log.reset()
		mustAuth(t, f, plain)
		return log.statements()
	}
	first := run(bigToken)
	wantStatements(t, "first call", first, 1, 1)
	// Within the minute, no UPDATE is even sent.
	wantStatements(t, "second call", run(bigToken), 1, 0)
	f.clock.Add(LastUsedGranularity + time.Second)
	wantStatements(t, "a minute later", run(bigToken), 1, 1)

	tn := f.tenant()
	f.bind(big, authz.RoleTenantAdmin, tn)
	scopedToken, _ := f.token(big, scopedTo(tn))
	wantStatements(t, "tenant-scoped token", run(scopedToken), 1, 1)
	wantStatements(t, "user without roles", run(smallToken), 1, 1)

	// A refused token costs the one SELECT and nothing more.
	refused := func(what, plain string) {
		t.Helper()
		log.reset()
		f.wantRefused(plain, "192.0.2.1")
		wantStatements(t, what, log.statements(), 1, 0)
	}
	unknown, _, _ := NewToken(apitoken.KindApi)
	refused("unknown token", unknown)
	revoked, tok := f.token(big)
	if err := f.db.APIToken.UpdateOne(tok).SetRevokedAt(f.clock.Now()).Exec(f.sys); err != nil {
		t.Fatal(err)
	}
	refused("revoked token", revoked)
	disabledOwner, _ := f.token(f.user("", disabled))
	refused("disabled owner", disabledOwner)
	t.Logf("Authenticate: %d statements:\n%s", len(first), strings.Join(first, "\n"))
}

// TestAuthenticateQueriesConstant checks that the statements Authenticate runs are the same
// in number for a user who holds nothing and for one with many role bindings and a maintainer
// in many groups, with an unscoped token and with a tenant-scoped one.
func TestAuthenticateQueriesConstant(t *testing.T) {
	f := newFixture(t)
	counted, log := countingClient()
	f.svc.Client = counted

	tn := f.tenant()
	none := f.user("")
	many := f.user("")
	f.bind(many, authz.RoleOperator, nil)
	f.bind(many, authz.RoleMaintainer, nil)
	f.bind(many, authz.RoleViewer, nil)
	f.bind(many, authz.RoleTenantAdmin, tn)
	for range 30 {
		f.bind(many, authz.RoleTenantMember, f.tenant())
	}
	mt, groups := f.maintainer(many, maintainer.StatusActive, 20, 5)

	// calls returns the statement counts of a first call (which records last_used_at) and a
	// second one (which does not), and the viewer.
	calls := func(plain string) (int, int, *authz.Viewer) {
		log.reset()
		mustAuth(t, f, plain)
		n1 := log.len()
		log.reset()
		v := mustAuth(t, f, plain)
		return n1, log.len(), v
	}
	for _, scoped := range []bool{false, true} {
		var opts []tokenOpt
		if scoped {
			opts = append(opts, scopedTo(tn))
		}
		noneToken, _ := f.token(none, opts...)
		manyToken, _ := f.token(many, opts...)
		n1, n2, v0 := calls(noneToken)
		m1, m2, v := calls(manyToken)
		if n1 != m1 || n2 != m2 || n1 != 2 || n2 != 1 {
			t.Fatalf("scoped=%v: %d then %d statements for a user holding nothing, %d then %d for one holding %d bindings and %d groups; want 2 then 1",
				scoped, n1, n2, m1, m2, len(v.Bindings), len(v.MaintainerGroupIDs))
		}
		if len(v0.Bindings) != 0 || v0.MaintainerID != 0 || len(v0.MaintainerGroupIDs) != 0 {
			t.Fatalf("scoped=%v: the user holding nothing got %+v", scoped, v0)
		}
		switch {
		case scoped && (len(v.Bindings) != 1 || v.Bindings[0].Domain != authz.TenantDomain(tn.ID) || v.MaintainerID != 0 || v.MaintainerGroupIDs != nil):
			t.Fatalf("tenant-scoped token: bindings %v, maintainer %d, groups %v", v.Bindings, v.MaintainerID, v.MaintainerGroupIDs)
		case !scoped && (len(v.Bindings) != 34 || v.MaintainerID != mt.ID || !slices.Equal(sorted(v.MaintainerGroupIDs), groups)):
			t.Fatalf("unscoped token: %d bindings (want 34), maintainer %d (want %d), groups %v (want %v)",
				len(v.Bindings), v.MaintainerID, mt.ID, v.MaintainerGroupIDs, groups)
		}
	}
}

// TestAuthenticateMaintainer checks the maintainer rules: only an ACTIVE maintainer, only
// its ACTIVE groups, and neither for a tenant-scoped token.
func TestAuthenticateMaintainer(t *testing.T) {
	f := newFixture(t)
	authenticateMaintainer(t, f)
}

// authenticateMaintainer runs the maintainer cases on f's database.
func authenticateMaintainer(t *testing.T, f *fixture) {
	t.Helper()
	tn := f.tenant()
	u := f.user("")
	f.bind(u, authz.RoleMaintainer, nil)
	f.bind(u, authz.RoleTenantMember, tn)
	mt, groups := f.maintainer(u, maintainer.StatusActive, 2, 2)
	plain, _ := f.token(u)
	v := mustAuth(t, f, plain)
	if v.MaintainerID != mt.ID || !slices.Equal(sorted(v.MaintainerGroupIDs), groups) {
		t.Fatalf("maintainer %d groups %v, want %d %v", v.MaintainerID, v.MaintainerGroupIDs, mt.ID, groups)
	}
	want := []authz.Binding{{Role: authz.RoleMaintainer, Domain: authz.Platform}, {Role: authz.RoleTenantMember, Domain: authz.TenantDomain(tn.ID)}}
	if !sameBindings(v.Bindings, want) {
		t.Fatalf("bindings %v, want %v", v.Bindings, want)
	}

	scoped, _ := f.token(u, scopedTo(tn))
	v = mustAuth(t, f, scoped)
	if v.MaintainerID != 0 || v.MaintainerGroupIDs != nil {
		t.Fatalf("tenant-scoped token: maintainer %d groups %v", v.MaintainerID, v.MaintainerGroupIDs)
	}
	if !sameBindings(v.Bindings, want[1:]) {
		t.Fatalf("tenant-scoped token: bindings %v, want %v", v.Bindings, want[1:])
	}

	if err := f.db.Maintainer.UpdateOne(mt).SetStatus(maintainer.StatusInactive).Exec(f.sys); err != nil {
		t.Fatal(err)
	}
	v = mustAuth(t, f, plain)
	if v.MaintainerID != 0 || v.MaintainerGroupIDs != nil {
		t.Fatalf("inactive maintainer: maintainer %d groups %v", v.MaintainerID, v.MaintainerGroupIDs)
	}
	if !sameBindings(v.Bindings, want) {
		t.Fatalf("inactive maintainer: bindings %v, want %v", v.Bindings, want)
	}

	// A maintainer without groups.
	o := f.user("")
	mo, _ := f.maintainer(o, maintainer.StatusActive, 0, 1)
	plain, _ = f.token(o)
	if v := mustAuth(t, f, plain); v.MaintainerID != mo.ID || v.MaintainerGroupIDs != nil || v.Bindings != nil {
		t.Fatalf("maintainer without groups: %+v", v)
	}
}

// TestAuthenticateSQLite runs Authenticate on SQLite: its SELECT (json_group_array in place of json_agg) is plain enough for
// both databases.
func TestAuthenticateSQLite(t *testing.T) {
	f := newFixture(t)
	lite, err := infra.OpenDatabase(context.Background(), "", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lite.Close() })
	if lite.Dialect == testDB.Dialect {
		t.Fatalf("opened %s, want SQLite", lite.Dialect)
	}
	f.db, f.svc.Client = lite.Client, lite.Client

	authenticateMaintainer(t, f)

	u := f.user("")
	f.bind(u, authz.RoleViewer, nil)
	plain, tok := f.token(u, cidrs("192.0.2.0/24"), expiresAt(f.clock.Now().Add(time.Hour)))
	v := mustAuth(t, f, plain)
	if v.UserID != u.ID || v.Name != u.Username || v.TokenID != tok.ID || v.ReadOnly || !v.Can("Rack", authz.ActRead) {
		t.Fatalf("viewer %+v", v)
	}
	if got := f.reload(tok.ID).LastUsedAt; got == nil || !got.Equal(f.clock.Now()) {
		t.Fatalf("last_used_at = %v, want %v", got, f.clock.Now())
	}
	f.wantRefused(plain, "198.51.100.1")
	ro, _ := f.token(u, readOnly)
	if v := mustAuth(t, f, ro); !v.ReadOnly {
		t.Fatalf("read-only token: viewer %+v", v)
	}
	f.clock.Add(2 * time.Hour)
	f.wantRefused(plain, "192.0.2.1")
	gone, _ := f.token(f.user("", disabled))
	f.wantRefused(gone, "192.0.2.1")
	unknown, _, _ := NewToken(apitoken.KindApi)
	f.wantRefused(unknown, "192.0.2.1")
}

// maintainer links u to a new maintainer of the given status, member of active new groups
// and of inactive ones; it returns the maintainer and the active groups' IDs, sorted.
func (f *fixture) maintainer(u *ent.User, status maintainer.Status, active, inactive int) (*ent.Maintainer, []int) {
	f.t.Helper()
	mt, err := f.db.Maintainer.Create().SetName("M").SetAccount(unique("m")).SetUser(u).SetStatus(status).Save(f.sys)
	if err != nil {
		f.t.Fatal(err)
	}
	var ids []int
	for i := range active + inactive {
		c := f.db.MaintainerGroup.Create().SetName(unique("g")).AddMembers(mt)
		if i >= active {
			c.SetStatus(maintainergroup.StatusInactive)
		}
		g, err := c.Save(f.sys)
		if err != nil {
			f.t.Fatal(err)
		}
		if i < active {
			ids = append(ids, g.ID)
		}
	}
	return mt, sorted(ids)
}

func sorted(ids []int) []int {
	ids = slices.Clone(ids)
	slices.Sort(ids)
	return ids
}

// wantStatements fails unless stmts are selects SELECTs and updates UPDATEs of last_used_at.
func wantStatements(t *testing.T, what string, stmts []string, selects, updates int) {
	t.Helper()
	s, u := 0, 0
	for _, q := range stmts {
		switch {
		case strings.HasPrefix(q, "SELECT"):
			s++
		case strings.HasPrefix(q, "UPDATE") && strings.Contains(q, "last_used_at"):
			u++
		default:
			t.Errorf("%s: unexpected statement %s", what, q)
		}
	}
	if s != selects || u != updates {
		t.Fatalf("%s: %d SELECTs and %d UPDATEs, want %d and %d:\n%s", what, s, u, selects, updates, strings.Join(stmts, "\n"))
	}
}
