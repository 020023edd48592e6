package livestatus

import (
	"testing"

	"github.com/virtflow/virtflow/authz"
)

// TestReadScopeKey checks who shares an event's re-read: viewers with the same permissions
// whoever they are, never viewers whose permissions differ, and, for the types a user reads
// of their own, never two users.
func TestReadScopeKey(t *testing.T) {
	tenantA, tenantB := authz.TenantDomain(1), authz.TenantDomain(2)
	alice := &authz.Viewer{UserID: 1, Name: "alice", TokenID: 10, Bindings: []authz.Binding{
		{Role: authz.RoleTenantMember, Domain: tenantA}, {Role: authz.RoleViewer, Domain: authz.Platform}}}
	bob := &authz.Viewer{UserID: 2, Name: "bob", TokenID: 20, Bindings: []authz.Binding{
		{Role: authz.RoleViewer, Domain: authz.Platform}, {Role: authz.RoleTenantMember, Domain: tenantA}}}
	carol := &authz.Viewer{UserID: 3, Name: "carol", TokenID: 30, Bindings: []authz.Binding{
		{Role: authz.RoleTenantMember, Domain: tenantB}, {Role: authz.RoleViewer, Domain: authz.Platform}}}
	readOnlyBob := *bob
	readOnlyBob.ReadOnly = true
	maintainerBob := *bob
	maintainerBob.MaintainerID, maintainerBob.MaintainerGroupIDs = 7, []int{3}

	vm := string(VirtualMachine)
	if readScopeKey(alice, vm) != readScopeKey(bob, vm) {
		t.Errorf("alice and bob hold the same roles but do not share reads:\n%s\n%s", readScopeKey(alice, vm), readScopeKey(bob, vm))
	}
	for name, other := range map[string]*authz.Viewer{"another tenant": carol, "read-only": &readOnlyBob,
		"a maintainer": &maintainerBob, "the system": authz.System("x")} {
		if readScopeKey(alice, vm) == readScopeKey(other, vm) {
			t.Errorf("alice shares reads with %s: %s", name, readScopeKey(other, vm))
		}
	}
	if readScopeKey(alice, vm) == readScopeKey(alice, string(ComputeNode)) {
		t.Error("one key for two entity types")
	}
	for _, typ := range []string{"User", "APIToken", "RoleBinding", "Notice"} {
		if !authz.SelfScoped(typ) {
			t.Errorf("authz.SelfScoped(%s) = false", typ)
		}
		if readScopeKey(alice, typ) == readScopeKey(bob, typ) {
			t.Errorf("%s: alice and bob share reads of what each reads of their own", typ)
		}
	}
	for _, typ := range []Type{VirtualMachine, ComputeNode, RegionService, Assignment} {
		if authz.SelfScoped(string(typ)) {
			t.Errorf("%s is self-scoped: its subscribers would share nothing", typ)
		}
	}
}
