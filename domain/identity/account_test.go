package identity

import (
	"context"
	"testing"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/apierr"
)

func TestSetPassword(t *testing.T) {
	f := newFixture(t).withRedis()
	ctx := context.Background()
	u, other, admin := f.user(goodPassword), f.user(""), f.user("")
	f.bind(admin, authz.RoleAdmin, nil)

	// Two sessions; the user changes its password through the first.
	s1, t1, err := f.svc.Login(ctx, u.Username, goodPassword, "192.0.2.1")
	if err != nil {
		t.Fatal(err)
	}
	s2, _, err := f.svc.Login(ctx, u.Username, goodPassword, "192.0.2.2")
	if err != nil {
		t.Fatal(err)
	}
	api, _ := f.token(u)
	uctx := authz.NewContext(ctx, mustAuth(t, f, s1))
	wantCode(t, f.svc.SetPassword(uctx, u.ID, "too short"), apierr.CodeValidation, "password")
	const newPassword = "a brand new passphrase"
	if err := f.svc.SetPassword(uctx, u.ID, newPassword); err != nil {
		t.Fatal(err)
	}
	mustAuth(t, f, s1)             // the caller's session stays
	f.wantRefused(s2, "192.0.2.1") // other sessions end
	mustAuth(t, f, api)            // API tokens stay
	if f.reload(t1.ID).RevokedAt != nil {
		t.Fatal("the caller's session was revoked")
	}
	_, _, err = f.svc.Login(ctx, u.Username, goodPassword, "192.0.2.1")
	wantCode(t, err, apierr.CodeUnauthenticated)
	if _, _, err := f.svc.Login(ctx, u.Username, newPassword, "192.0.2.1"); err != nil {
		t.Fatal(err)
	}

	// Not for others, unless admin.
	wantCode(t, f.svc.SetPassword(uctx, other.ID, newPassword), apierr.CodeForbidden)
	wantCode(t, f.svc.SetPassword(f.as(u, readOnly), u.ID, newPassword), apierr.CodeForbidden)
	wantCode(t, f.svc.SetPassword(ctx, u.ID, newPassword), apierr.CodeUnauthenticated)
	if err := f.svc.SetPassword(f.as(admin), other.ID, newPassword); err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.svc.Login(ctx, other.Username, newPassword, "192.0.2.3"); err != nil {
		t.Fatal(err)
	}
	wantCode(t, f.svc.SetPassword(f.as(admin), 1<<30, newPassword), apierr.CodeNotFound)
}

func TestMe(t *testing.T) {
	f := newFixture(t)
	u := f.user("")
	me, err := f.svc.Me(f.as(u))
	if err != nil || me.ID != u.ID || me.Username != u.Username {
		t.Fatalf("Me = %v, %v", me, err)
	}
	_, err = f.svc.Me(context.Background())
	wantCode(t, err, apierr.CodeUnauthenticated)
	_, err = f.svc.Me(authz.SystemContext(context.Background(), "x"))
	wantCode(t, err, apierr.CodeNotFound)
}
