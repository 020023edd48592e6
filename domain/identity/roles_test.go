package identity

import (
	"context"
	"testing"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/ent/rolebinding"
)

func TestGrantRoleValidation(t *testing.T) {
	f := newFixture(t)
	admin := f.user("")
	f.bind(admin, authz.RoleAdmin, nil)
	ctx := f.as(admin)
	u := f.user("")
	one := ptr(1)
	for _, c := range []struct {
		name         string
		role         authz.Role
		tenant, node *int
		field        string
	}{
		{"tenant role without tenant", authz.RoleTenantMember, nil, nil, "tenantID"},
		{"tenant role with node", authz.RoleTenantAdmin, one, one, "nodeID"},
		{"agent without node", authz.RoleAgent, nil, nil, "nodeID"},
		{"agent with tenant", authz.RoleAgent, one, one, "tenantID"},
		{"platform role with tenant", authz.RoleAdmin, one, nil, "tenantID"},
		{"platform role with node", authz.RoleViewer, nil, one, "nodeID"},
		{"unknown role", authz.Role("root"), nil, nil, "role"},
	} {
		_, err := f.svc.GrantRole(ctx, u.ID, c.role, c.tenant, c.node)
		if err == nil {
			t.Fatalf("%s: accepted", c.name)
		}
		wantCode(t, err, apierr.CodeValidation, c.field)
	}
	_, err := f.svc.GrantRole(ctx, 1<<30, authz.RoleViewer, nil, nil)
	wantCode(t, err, apierr.CodeNotFound)
	_, err = f.svc.GrantRole(ctx, u.ID, authz.RoleTenantMember, ptr(1<<30), nil)
	wantCode(t, err, apierr.CodeNotFound)
	_, err = f.svc.GrantRole(ctx, u.ID, authz.RoleAgent, nil, ptr(1<<30))
	wantCode(t, err, apierr.CodeNotFound)
}

func TestGrantRole(t *testing.T) {
	f := newFixture(t)
	tn, tn2 := f.tenant(), f.tenant()
	admin, tadmin, member, nobody := f.user(""), f.user(""), f.user(""), f.user("")
	f.bind(admin, authz.RoleAdmin, nil)
	f.bind(tadmin, authz.RoleTenantAdmin, tn)
	actx, tctx, nctx := f.as(admin), f.as(tadmin), f.as(nobody)

	// Admins grant platform roles, and granting again returns the same binding.
	b, err := f.svc.GrantRole(actx, member.ID, authz.RoleOperator, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b.Role != rolebinding.RoleOperator || b.Domain != "platform" || b.GrantedBy != admin.Username {
		t.Fatalf("binding %+v", b)
	}
	again, err := f.svc.GrantRole(actx, member.ID, authz.RoleOperator, nil, nil)
	if err != nil || again.ID != b.ID {
		t.Fatalf("granting again: %v, %v (first %d)", again, err, b.ID)
	}
	// ... and the agent role, on a node.
	node := f.node()
	ab, err := f.svc.GrantRole(actx, member.ID, authz.RoleAgent, nil, &node.ID)
	if err != nil || ab.Domain != authz.NodeDomain(node.ID) {
		t.Fatalf("agent binding %+v, %v", ab, err)
	}

	// A tenant admin grants tenant roles in its tenant...
	mb, err := f.svc.GrantRole(tctx, member.ID, authz.RoleTenantMember, &tn.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if mb.Domain != authz.TenantDomain(tn.ID) {
		t.Fatalf("domain %q", mb.Domain)
	}
	if mb2, err := f.svc.GrantRole(tctx, member.ID, authz.RoleTenantAdmin, &tn.ID, nil); err != nil || mb2.ID == mb.ID {
		t.Fatalf("tenant admin grants tenant admin: %v", err)
	}
	// ... which applies to the member's next request.
	plain, _ := f.token(member)
	if v := mustAuth(t, f, plain); len(v.Domains("tenant", "VirtualMachine", authz.ActWrite)) != 1 {
		t.Fatalf("member bindings %v", v.Bindings)
	}
	// ... but no platform role, no agent role, and nothing in another tenant.
	for _, c := range []struct {
		role         authz.Role
		tenant, node *int
	}{
		{authz.RoleAdmin, nil, nil},
		{authz.RoleViewer, nil, nil},
		{authz.RoleAgent, nil, &node.ID},
		{authz.RoleTenantMember, &tn2.ID, nil},
		{authz.RoleTenantAdmin, &tn2.ID, nil},
	} {
		_, err := f.svc.GrantRole(tctx, nobody.ID, c.role, c.tenant, c.node)
		wantCode(t, err, apierr.CodeForbidden)
	}
	// A tenant admin's read-only token grants nothing.
	_, err = f.svc.GrantRole(f.as(tadmin, readOnly), nobody.ID, authz.RoleTenantMember, &tn.ID, nil)
	wantCode(t, err, apierr.CodeForbidden)
	// Nor does a user without roles, nor anyone anonymous.
	_, err = f.svc.GrantRole(nctx, nobody.ID, authz.RoleTenantMember, &tn.ID, nil)
	wantCode(t, err, apierr.CodeForbidden)
	_, err = f.svc.GrantRole(context.Background(), nobody.ID, authz.RoleViewer, nil, nil)
	wantCode(t, err, apierr.CodeUnauthenticated)

	// Revoking: a tenant admin in its tenant; platform bindings are invisible to it.
	wantCode(t, f.svc.RevokeRole(tctx, b.ID), apierr.CodeNotFound)
	wantCode(t, f.svc.RevokeRole(nctx, mb.ID), apierr.CodeNotFound)
	if err := f.svc.RevokeRole(tctx, mb.ID); err != nil {
		t.Fatal(err)
	}
	wantCode(t, f.svc.RevokeRole(tctx, mb.ID), apierr.CodeNotFound)
	if err := f.svc.RevokeRole(actx, b.ID); err != nil {
		t.Fatal(err)
	}
	if n, _ := testDB.Client.RoleBinding.Query().Where(rolebinding.IDIn(b.ID, mb.ID)).Count(f.sys); n != 0 {
		t.Fatalf("%d revoked bindings remain", n)
	}
	// A tenant admin does not see another tenant's bindings; that tenant's admin revokes them.
	other := f.user("")
	f.bind(other, authz.RoleTenantAdmin, tn2)
	tb := f.bind(member, authz.RoleTenantMember, tn2)
	wantCode(t, f.svc.RevokeRole(tctx, tb.ID), apierr.CodeNotFound)
	if err := f.svc.RevokeRole(f.as(other), tb.ID); err != nil {
		t.Fatal(err)
	}
}
