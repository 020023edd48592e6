package authz

import (
	_ "embed"
	"fmt"
	"strings"
	"sync"

	"github.com/casbin/casbin/v2"
	"github.com/casbin/casbin/v2/model"
	"github.com/casbin/casbin/v2/util"
)

//go:embed model.conf
var modelText string

// Groups of GraphQL types the policy speaks about.
var (
	// Catalog is what every signed-in user may read: where and what they can order.
	Catalog = []string{"Region", "AvailabilityZone", "Flavor", "Image", "ServiceMesh", "Provider", "Price"}
	// Topology is the physical world, never shown to tenants.
	Topology = []string{"Datacenter", "Floor", "Rack", "PowerZone", "NetworkZone", "RackZone", "Host",
		"HostGroup", "Port", "Link", "Network", "IPAddress", "IPRange"}
	// Compute is the compute fabric.
	Compute = []string{"Cluster", "ComputeNode", "Assignment"}
	// Operations are events, rules, alerts, maintenance and notices.
	Operations = []string{"Event", "EventRule", "Alert", "Maintenance", "Notice", "Check", "Silence", "HookDelivery"}
	// Tenancy describes tenants and their limits.
	Tenancy = []string{"Tenant", "Quota", "UsageRecord"}
	// TenantResources are what tenants order and own.
	TenantResources = []string{"VirtualMachine", "Volume", "Snapshot", "Backup", "LoadBalancer", "RegionService", "GlobalService", "KubernetesCluster", "SSHKey", "SecurityRule"}
	// Billing is the reservation ledger and the final invoices, read by operators and by the
	// admins of the tenant billed; only the system writes them.
	Billing = []string{"ReservationInterval", "Invoice"}
	// Maintainers are the people responsible for resources.
	Maintainers = []string{"Maintainer", "MaintainerGroup"}
	// Accounts are users, their tokens and role bindings.
	Accounts = []string{"User", "APIToken", "RoleBinding"}
	// Maintained are the resources whose maintainers may act on them (write-own).
	Maintained = []string{"Host", "Rack", "ComputeNode", "Cluster", "VirtualMachine", "KubernetesCluster", "Alert"}
)

// rules are the "p" lines: role, domain pattern, object, action.
func rules() [][]string {
	var ps [][]string
	add := func(role Role, dom, act string, groups ...[]string) {
		for _, g := range groups {
			for _, obj := range g {
				ps = append(ps, []string{string(role), dom, obj, act})
			}
		}
	}
	ps = append(ps, []string{string(RoleAdmin), Platform, "*", "*"})
	add(RoleViewer, Platform, ActRead, Catalog, Topology, Compute, Operations, Tenancy, TenantResources, Maintainers, Billing)
	add(RoleOperator, Platform, ActRead, []string{"User", "Kubeconfig"})
	add(RoleOperator, Platform, ActWrite, Catalog, Topology, Compute, Operations, Maintainers)
	add(RoleMaintainer, Platform, ActWriteOwn, Maintained)
	add(RoleTenantMember, "tenant:*", ActRead, Catalog, Tenancy, TenantResources, []string{"Notice", "Network", "Port", "IPAddress", "Alert"})
	add(RoleTenantMember, "tenant:*", ActWrite, TenantResources)
	add(RoleTenantAdmin, "tenant:*", ActRead, []string{"AuditLog", "User", "RoleBinding", "APIToken", "Kubeconfig"}, Billing)
	add(RoleTenantAdmin, "tenant:*", ActWrite, []string{"RoleBinding"})
	add(RoleAgent, "node:*", ActRead, []string{"ComputeNode", "Assignment", "VirtualMachine", "Volume", "Snapshot", "Backup", "Flavor", "Image", "Port", "IPAddress", "SecurityRule"})
	add(RoleAgent, "node:*", ActWrite, []string{"ComputeNode", "Assignment", "Event"})
	return ps
}

// inheritance are the "g" lines between roles.
var inheritance = [][]string{
	{string(RoleOperator), string(RoleViewer), Platform},
	{string(RoleMaintainer), string(RoleViewer), Platform},
	{string(RoleTenantAdmin), string(RoleTenantMember), "tenant:*"},
}

// enforcer is the Casbin enforcer over the embedded model and policy; it holds no per-user
// state (bindings come with the viewer), so it is built once and only read.
var enforcer = mustEnforcer()

func mustEnforcer() *casbin.Enforcer {
	m, err := model.NewModelFromString(modelText)
	if err != nil {
		panic(fmt.Sprintf("authz: model: %v", err))
	}
	e, err := casbin.NewEnforcer(m)
	if err != nil {
		panic(fmt.Sprintf("authz: enforcer: %v", err))
	}
	e.AddNamedDomainMatchingFunc("g", "keyMatch", util.KeyMatch)
	if _, err := e.AddPolicies(rules()); err != nil {
		panic(fmt.Sprintf("authz: policy: %v", err))
	}
	if _, err := e.AddGroupingPolicies(inheritance); err != nil {
		panic(fmt.Sprintf("authz: role inheritance: %v", err))
	}
	return e
}

// Allowed reports whether role, in domain, may perform act on obj.
//
// Decisions are memoized: the model and policy are fixed at build time and every policy
// line names a domain pattern ("platform", "tenant:*", "node:*"), never one tenant or node,
// so the answer depends on the domain's kind only. Casbin's matcher costs microseconds and
// runs several times per request (it was about an eighth of the server's CPU under 500
// heartbeats a second); the memo holds at most roles × kinds × objects × acts entries.
func Allowed(role Role, domain, obj, act string) bool {
	key := decisionKey{role: role, kind: domainKind(domain), obj: obj, act: act}
	if v, ok := decisions.Load(key); ok {
		return v.(bool)
	}
	ok, err := enforcer.Enforce(string(role), domain, obj, act)
	allowed := err == nil && ok
	if err == nil {
		decisions.Store(key, allowed)
	}
	return allowed
}

// decisionKey is a memoized decision of Allowed.
type decisionKey struct {
	role           Role
	kind, obj, act string
}

var decisions sync.Map // decisionKey → bool

// domainKind maps "tenant:42" to "tenant:*" and "node:7" to "node:*"; other domains
// ("platform", or anything unexpected) stand for themselves.
func domainKind(domain string) string {
	if kind, _, ok := strings.Cut(domain, ":"); ok && (kind == "tenant" || kind == "node") {
		return kind + ":*"
	}
	return domain
}
