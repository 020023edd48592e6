package identity

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/ent/apitoken"
)

func TestCreateAPIToken(t *testing.T) {
	f := newFixture(t)
	tn := f.tenant()
	u := f.user("")
	f.bind(u, authz.RoleTenantMember, tn)
	uctx := f.as(u)

	plain, tok, err := f.svc.CreateAPIToken(uctx, CreateTokenInput{Name: "ci", Scope: "READ_WRITE",
		AllowedCIDRs: []string{"10.1.2.3/8", "2001:db8::/32"}, ExpiresAt: ptr(f.clock.Now().Add(time.Hour)), TenantID: &tn.ID})
	if err != nil {
		t.Fatal(err)
	}
	if !tokenFormat.MatchString(plain) || tok.TokenHash != HashToken(plain) || tok.Prefix != plain[:10] {
		t.Fatalf("token %q row %+v", plain, tok)
	}
	if tok.Kind != apitoken.KindApi || tok.Scope != apitoken.ScopeReadWrite || tok.Name != "ci" ||
		!slices.Equal(tok.AllowedCidrs, []string{"10.0.0.0/8", "2001:db8::/32"}) ||
		tok.Edges.Owner.ID != u.ID || tok.Edges.Tenant == nil || tok.Edges.Tenant.ID != tn.ID {
		t.Fatalf("token row %+v edges %+v", tok, tok.Edges)
	}
	v, err := f.svc.Authenticate(context.Background(), plain, "10.200.0.1")
	if err != nil || v.UserID != u.ID {
		t.Fatalf("new token: %v %v", v, err)
	}

	// Scope defaults to read-only.
	_, ro, err := f.svc.CreateAPIToken(uctx, CreateTokenInput{Name: "reader"})
	if err != nil || ro.Scope != apitoken.ScopeReadOnly || ro.Edges.Tenant != nil || ro.ExpiresAt != nil {
		t.Fatalf("default token %+v, %v", ro, err)
	}

	for _, c := range []struct {
		name  string
		in    CreateTokenInput
		field string
	}{
		{"no name", CreateTokenInput{Name: "  "}, "name"},
		{"bad scope", CreateTokenInput{Name: "x", Scope: "ADMIN"}, "scope"},
		{"past expiry", CreateTokenInput{Name: "x", ExpiresAt: ptr(f.clock.Now())}, "expiresAt"},
		{"bad cidr", CreateTokenInput{Name: "x", AllowedCIDRs: []string{"10.0.0.0/8", "10.0.0.300/8"}}, "allowedCIDRs"},
		{"address without length", CreateTokenInput{Name: "x", AllowedCIDRs: []string{"10.0.0.1"}}, "allowedCIDRs"},
		{"tenant without role", CreateTokenInput{Name: "x", TenantID: &f.tenant().ID}, "tenantID"},
		{"no such tenant", CreateTokenInput{Name: "x", TenantID: ptr(1 << 30)}, "tenantID"},
	} {
		_, _, err := f.svc.CreateAPIToken(uctx, c.in)
		if err == nil {
			t.Fatalf("%s: accepted", c.name)
		}
		wantCode(t, err, apierr.CodeValidation, c.field)
	}

	// Only admins make tokens for others.
	other := f.user("")
	_, _, err = f.svc.CreateAPIToken(uctx, CreateTokenInput{Name: "x", UserID: &other.ID})
	wantCode(t, err, apierr.CodeForbidden)
	admin := f.user("")
	f.bind(admin, authz.RoleAdmin, nil)
	_, forOther, err := f.svc.CreateAPIToken(f.as(admin), CreateTokenInput{Name: "for other", UserID: &other.ID})
	if err != nil || forOther.Edges.Owner.ID != other.ID {
		t.Fatalf("admin for another user: %+v, %v", forOther, err)
	}
	_, _, err = f.svc.CreateAPIToken(f.as(admin), CreateTokenInput{Name: "x", UserID: &other.ID, TenantID: &tn.ID})
	wantCode(t, err, apierr.CodeValidation, "tenantID")

	// Read-only tokens, anonymous callers and the system without a user cannot.
	_, _, err = f.svc.CreateAPIToken(f.as(u, readOnly), CreateTokenInput{Name: "x"})
	wantCode(t, err, apierr.CodeForbidden)
	_, _, err = f.svc.CreateAPIToken(context.Background(), CreateTokenInput{Name: "x"})
	wantCode(t, err, apierr.CodeUnauthenticated)
	_, _, err = f.svc.CreateAPIToken(authz.SystemContext(context.Background(), "t"), CreateTokenInput{Name: "x"})
	wantCode(t, err, apierr.CodeValidation, "userID")
}

// A token cannot mint a broader one: tenant, networks and expiry carry over.
func TestCreateAPITokenAttenuated(t *testing.T) {
	f := newFixture(t)
	tn, tn2 := f.tenant(), f.tenant()
	u := f.user("")
	f.bind(u, authz.RoleAdmin, nil)
	f.bind(u, authz.RoleTenantAdmin, tn)
	f.bind(u, authz.RoleTenantAdmin, tn2)
	limit := f.clock.Now().Add(time.Hour)
	plain, _ := f.token(u, scopedTo(tn), cidrs("10.0.0.0/8"), expiresAt(limit))
	v, err := f.svc.Authenticate(context.Background(), plain, "10.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	ctx := authz.NewContext(context.Background(), v)

	_, tok, err := f.svc.CreateAPIToken(ctx, CreateTokenInput{Name: "child", Scope: "READ_WRITE"})
	if err != nil {
		t.Fatal(err)
	}
	if tok.Edges.Tenant == nil || tok.Edges.Tenant.ID != tn.ID || !slices.Equal(tok.AllowedCidrs, []string{"10.0.0.0/8"}) ||
		tok.ExpiresAt == nil || !tok.ExpiresAt.Equal(limit) {
		t.Fatalf("child token not narrowed: %+v tenant %v", tok, tok.Edges.Tenant)
	}
	if _, _, err := f.svc.CreateAPIToken(ctx, CreateTokenInput{Name: "narrower", AllowedCIDRs: []string{"10.1.0.0/16"},
		ExpiresAt: ptr(limit.Add(-time.Minute)), TenantID: &tn.ID}); err != nil {
		t.Fatalf("a narrower token: %v", err)
	}
	for _, in := range []CreateTokenInput{
		{Name: "other tenant", TenantID: &tn2.ID},
		{Name: "wider net", AllowedCIDRs: []string{"0.0.0.0/0"}},
		{Name: "outside", AllowedCIDRs: []string{"192.168.0.0/24"}},
		{Name: "longer", ExpiresAt: ptr(limit.Add(time.Minute))},
	} {
		_, _, err := f.svc.CreateAPIToken(ctx, in)
		wantCode(t, err, apierr.CodeForbidden)
	}

	// Sessions are not narrowed: a signed-in user makes long-lived tokens.
	_, session := f.token(u, kind(apitoken.KindSession), expiresAt(limit))
	sctx := authz.NewContext(context.Background(), &authz.Viewer{UserID: u.ID, Name: u.Username, TokenID: session.ID})
	if _, tok, err := f.svc.CreateAPIToken(sctx, CreateTokenInput{Name: "long", ExpiresAt: ptr(limit.Add(24 * time.Hour))}); err != nil || tok.Edges.Tenant != nil {
		t.Fatalf("from a session: %+v, %v", tok, err)
	}
}

func TestRevokeAPIToken(t *testing.T) {
	f := newFixture(t)
	owner, stranger, admin := f.user(""), f.user(""), f.user("")
	f.bind(admin, authz.RoleAdmin, nil)
	tn := f.tenant()
	f.bind(stranger, authz.RoleTenantAdmin, tn)
	f.bind(owner, authz.RoleTenantMember, tn)
	plain, tok := f.token(owner, scopedTo(tn))

	// Not the owner's: NOT_FOUND, exactly as for a token that does not exist, even for the
	// owner's tenant admin.
	_, err := f.svc.RevokeAPIToken(f.as(stranger), tok.ID)
	wantCode(t, err, apierr.CodeNotFound)
	_, err = f.svc.RevokeAPIToken(f.as(stranger), 1<<30)
	wantCode(t, err, apierr.CodeNotFound)
	mustAuth(t, f, plain)

	octx := f.as(owner)
	revoked, err := f.svc.RevokeAPIToken(octx, tok.ID)
	if err != nil {
		t.Fatal(err)
	}
	if revoked.RevokedAt == nil || !revoked.RevokedAt.Equal(f.clock.Now()) || revoked.Edges.Owner == nil {
		t.Fatalf("revoked token %+v", revoked)
	}
	f.wantRefused(plain, "192.0.2.1")
	// Idempotent: the first revocation time stays.
	f.clock.Add(time.Minute)
	again, err := f.svc.RevokeAPIToken(octx, tok.ID)
	if err != nil || !again.RevokedAt.Equal(*revoked.RevokedAt) {
		t.Fatalf("second revoke: %v, %v", again.RevokedAt, err)
	}

	// Admins revoke anyone's token; a read-only token revokes nothing.
	plain2, tok2 := f.token(owner)
	_, err = f.svc.RevokeAPIToken(f.as(owner, readOnly), tok2.ID)
	wantCode(t, err, apierr.CodeForbidden)
	if _, err := f.svc.RevokeAPIToken(f.as(admin), tok2.ID); err != nil {
		t.Fatal(err)
	}
	f.wantRefused(plain2, "192.0.2.1")
}

// TestPlaintextNeverStored looks at every column of every api_tokens row for the plaintexts
// of tokens made every way there is.
func TestPlaintextNeverStored(t *testing.T) {
	f := newFixture(t).withRedis()
	ctx := context.Background()
	u := f.user(goodPassword)
	var secrets []string
	session, _, err := f.svc.Login(ctx, u.Username, goodPassword, "192.0.2.1")
	if err != nil {
		t.Fatal(err)
	}
	secrets = append(secrets, session)
	api, _, err := f.svc.CreateAPIToken(f.as(u), CreateTokenInput{Name: "x", Scope: "READ_WRITE"})
	if err != nil {
		t.Fatal(err)
	}
	secrets = append(secrets, api)
	const adminSecret = "s3cr3t-admin-token-for-tests"
	if err := f.svc.EnsureAdminToken(ctx, adminSecret); err != nil {
		t.Fatal(err)
	}
	secrets = append(secrets, adminSecret)

	rows, err := testDB.DB.QueryContext(ctx, `SELECT * FROM api_tokens`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	n := 0
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		for i, v := range vals {
			var s string
			switch v := v.(type) {
			case []byte:
				s = string(v)
			case string:
				s = v
			default:
				continue
			}
			for _, secret := range secrets {
				// The whole secret, or the part beyond the displayed prefix.
				if strings.Contains(s, secret) || strings.Contains(s, secret[DisplayPrefixLen:]) {
					t.Fatalf("api_tokens.%s holds a token's plaintext: %q", cols[i], s)
				}
			}
		}
		n++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 3 {
		t.Fatalf("only %d rows", n)
	}
}
