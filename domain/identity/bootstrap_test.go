package identity

import (
	"context"
	"testing"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/apitoken"
	"github.com/virtflow/virtflow/ent/rolebinding"
	"github.com/virtflow/virtflow/ent/user"
)

func TestEnsureAdminToken(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	for _, bad := range []string{"", "short", "fifteen-chars!!", "sixteen chars ok"} {
		wantCode(t, f.svc.EnsureAdminToken(ctx, bad), apierr.CodeValidation)
	}

	const secret = "bootstrap-secret-0123456789"
	if err := f.svc.EnsureAdminToken(ctx, secret); err != nil {
		t.Fatal(err)
	}
	state := func() (users, bindings int, tokens []*ent.APIToken) {
		t.Helper()
		var err error
		users, err = testDB.Client.User.Query().Where(user.Username("admin")).Count(f.sys)
		if err != nil {
			t.Fatal(err)
		}
		bindings, err = testDB.Client.RoleBinding.Query().Where(rolebinding.HasUserWith(user.Username("admin"))).Count(f.sys)
		if err != nil {
			t.Fatal(err)
		}
		tokens, err = testDB.Client.APIToken.Query().Where(apitoken.HasOwnerWith(user.Username("admin"))).Order(apitoken.ByID()).All(f.sys)
		if err != nil {
			t.Fatal(err)
		}
		return users, bindings, tokens
	}
	users, bindings, tokens := state()
	var tok *ent.APIToken
	for _, t := range tokens {
		if t.TokenHash == HashToken(secret) {
			tok = t
		}
	}
	if users != 1 || bindings != 1 || tok == nil {
		t.Fatalf("%d admin users, %d bindings, token %v", users, bindings, tok)
	}
	if tok.Name != "bootstrap" || tok.Kind != apitoken.KindApi || tok.Scope != apitoken.ScopeReadWrite ||
		tok.RevokedAt != nil || tok.ExpiresAt != nil || tok.Prefix != "boo..." {
		t.Fatalf("bootstrap token %+v", tok)
	}
	v := mustAuth(t, f, secret)
	if v.Name != "admin" || !v.Can("User", authz.ActWrite) || !v.Can("RoleBinding", authz.ActWrite) {
		t.Fatalf("bootstrap viewer %+v cannot administer", v)
	}

	// Again: nothing changes.
	users, bindings, tokens = state()
	if err := f.svc.EnsureAdminToken(ctx, secret); err != nil {
		t.Fatal(err)
	}
	users2, bindings2, tokens2 := state()
	if users2 != users || bindings2 != bindings || len(tokens2) != len(tokens) {
		t.Fatalf("second call changed: %d/%d users, %d/%d bindings, %d/%d tokens", users, users2, bindings, bindings2, len(tokens), len(tokens2))
	}
	for i := range tokens {
		if !tokens[i].UpdatedAt.Equal(tokens2[i].UpdatedAt) {
			t.Fatalf("token %d was updated by the second call", tokens[i].ID)
		}
	}

	// A new secret replaces the old one.
	const next = "another-bootstrap-secret-987"
	if err := f.svc.EnsureAdminToken(ctx, next); err != nil {
		t.Fatal(err)
	}
	mustAuth(t, f, next)
	f.wantRefused(secret, "192.0.2.1")
	// ... and the old one stays revoked if it comes back.
	if err := f.svc.EnsureAdminToken(ctx, secret); err != nil {
		t.Fatal(err)
	}
	f.wantRefused(secret, "192.0.2.1")
}
