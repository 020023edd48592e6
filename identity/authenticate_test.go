package identity

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/virtflow/virtflow/apierr"
	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/ent/apitoken"
	"github.com/virtflow/virtflow/ent/user"
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

// TestAuthenticateQueries checks that Authenticate costs the same few queries however many
// roles and groups the user has, and writes last_used_at with a single statement.
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
	mt, err := testDB.Client.Maintainer.Create().SetName("M").SetAccount(unique("m")).SetUser(big).Save(f.sys)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := testDB.Client.MaintainerGroup.Create().SetName(unique("g")).AddMembers(mt).Save(f.sys); err != nil {
			t.Fatal(err)
		}
	}
	bigToken, _ := f.token(big)

	run := func(plain string) []string {
		log.reset()
		mustAuth(t, f, plain)
		return log.statements()
	}
	first := run(bigToken)
	if n := len(first); n > 7 {
		t.Fatalf("Authenticate made %d queries:\n%s", n, strings.Join(first, "\n"))
	}
	updates := 0
	for _, q := range first {
		if strings.HasPrefix(q, "UPDATE") {
			updates++
			if !strings.Contains(q, "last_used_at") {
				t.Errorf("unexpected update %s", q)
			}
		} else if !strings.HasPrefix(q, "SELECT") {
			t.Errorf("unexpected statement %s", q)
		}
	}
	if updates != 1 {
		t.Fatalf("%d UPDATE statements, want 1:\n%s", updates, strings.Join(first, "\n"))
	}
	// Within the minute, no UPDATE is even sent.
	if again := run(bigToken); len(again) != len(first)-1 {
		t.Fatalf("second call: %d queries, first %d:\n%s", len(again), len(first), strings.Join(again, "\n"))
	}
	f.clock.Add(LastUsedGranularity + time.Second)
	if again := run(bigToken); len(again) != len(first) {
		t.Fatalf("a minute later: %d queries, first %d", len(again), len(first))
	}
	tn := f.tenant()
	f.bind(big, authz.RoleTenantAdmin, tn)
	scopedToken, _ := f.token(big, scopedTo(tn))
	if s := run(scopedToken); len(s) > 7 {
		t.Fatalf("a tenant-scoped token costs %d queries:\n%s", len(s), strings.Join(s, "\n"))
	}
	if s := run(smallToken); len(s) > len(first) {
		t.Fatalf("a user without roles costs %d queries, one with many %d", len(s), len(first))
	}
	t.Logf("Authenticate: %d statements:\n%s", len(first), strings.Join(first, "\n"))
}
