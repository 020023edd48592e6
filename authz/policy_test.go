package authz

import (
	"slices"
	"testing"
)

// TestAllowedMemo: the memoized Allowed gives Casbin's own answer for every role, domain
// kind (two ids of each, asked twice so the second answer comes from the memo), object and
// act — including objects and domains no policy line names.
func TestAllowedMemo(t *testing.T) {
	roles := []Role{RoleAdmin, RoleOperator, RoleMaintainer, RoleViewer, RoleTenantAdmin, RoleTenantMember, RoleAgent, "nobody"}
	domains := []string{Platform, "tenant:1", "tenant:922", "node:3", "node:77", "elsewhere"}
	objs := slices.Concat(Catalog, Topology, Compute, Operations, Tenancy, TenantResources, Maintainers, Accounts,
		[]string{"AuditLog", "Unknown"})
	acts := []string{ActRead, ActWrite, ActWriteOwn, "delete"}
	allowed := 0
	for round := 0; round < 2; round++ {
		for _, r := range roles {
			for _, d := range domains {
				for _, o := range objs {
					for _, a := range acts {
						want, err := enforcer.Enforce(string(r), d, o, a)
						if err != nil {
							t.Fatal(err)
						}
						if got := Allowed(r, d, o, a); got != want {
							t.Fatalf("round %d: Allowed(%s, %s, %s, %s) = %v, Casbin says %v", round, r, d, o, a, got, want)
						}
						if want && round == 0 {
							allowed++
						}
					}
				}
			}
		}
	}
	if allowed == 0 {
		t.Fatal("no decision allowed anything: the policy did not load")
	}
}
