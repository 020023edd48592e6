package identity

import (
	"testing"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/ent"
)

// A tenant admin onboards a user into its tenant and makes the user a token scoped to it,
// and can do neither for another tenant; members cannot; admins can for anyone.
func TestTenantAdminOnboardsUsers(t *testing.T) {
	f := newFixture(t)
	mine, other := f.tenant(), f.tenant()
	ta := f.user("")
	f.bind(ta, authz.RoleTenantAdmin, mine)
	actx := f.as(ta)

	u, err := f.svc.CreateUser(actx, ent.CreateUserInput{Username: unique("newbie"), TenantIDs: []int{mine.ID}})
	if err != nil {
		t.Fatal(err)
	}
	if ts, err := u.QueryTenants().IDs(f.sys); err != nil || len(ts) != 1 || ts[0] != mine.ID {
		t.Fatalf("tenants of the new user = %v, %v", ts, err)
	}

	for _, c := range []struct {
		name string
		in   ent.CreateUserInput
		code apierr.Code
	}{
		{"no tenant", ent.CreateUserInput{Username: unique("u")}, apierr.CodeForbidden},
		{"another tenant", ent.CreateUserInput{Username: unique("u"), TenantIDs: []int{other.ID}}, apierr.CodeForbidden},
		{"both tenants", ent.CreateUserInput{Username: unique("u"), TenantIDs: []int{mine.ID, other.ID}}, apierr.CodeForbidden},
		{"with a binding", ent.CreateUserInput{Username: unique("u"), TenantIDs: []int{mine.ID}, RoleBindingIDs: []int{1}}, apierr.CodeForbidden},
	} {
		if _, err := f.svc.CreateUser(actx, c.in); err == nil {
			t.Fatalf("%s: accepted", c.name)
		} else {
			wantCode(t, err, c.code)
		}
	}

	// A token for the new user needs a role of the user in the tenant, and the tenant named.
	_, _, err = f.svc.CreateAPIToken(actx, CreateTokenInput{Name: "ci", UserID: &u.ID, TenantID: &mine.ID})
	wantCode(t, err, apierr.CodeValidation, "tenantID")
	if _, err := f.svc.GrantRole(actx, u.ID, authz.RoleTenantMember, &mine.ID, nil); err != nil {
		t.Fatal(err)
	}
	_, tok, err := f.svc.CreateAPIToken(actx, CreateTokenInput{Name: "ci", UserID: &u.ID, TenantID: &mine.ID})
	if err != nil || tok.Edges.Owner.ID != u.ID || tok.Edges.Tenant == nil || tok.Edges.Tenant.ID != mine.ID {
		t.Fatalf("tenant admin's token for the new user: %+v, %v", tok, err)
	}
	_, _, err = f.svc.CreateAPIToken(actx, CreateTokenInput{Name: "x", UserID: &u.ID})
	wantCode(t, err, apierr.CodeForbidden)
	_, _, err = f.svc.CreateAPIToken(actx, CreateTokenInput{Name: "x", UserID: &u.ID, TenantID: &other.ID})
	wantCode(t, err, apierr.CodeForbidden)

	// A tenant member may not create users; an admin may, in any tenant.
	member := f.user("")
	f.bind(member, authz.RoleTenantMember, mine)
	_, err = f.svc.CreateUser(f.as(member), ent.CreateUserInput{Username: unique("u"), TenantIDs: []int{mine.ID}})
	wantCode(t, err, apierr.CodeForbidden)
	admin := f.user("")
	f.bind(admin, authz.RoleAdmin, nil)
	if _, err := f.svc.CreateUser(f.as(admin), ent.CreateUserInput{Username: unique("u"), TenantIDs: []int{other.ID}}); err != nil {
		t.Fatalf("admin: %v", err)
	}
}
