package authz

import (
	"fmt"
	"strconv"
	"strings"
)

// Role is a role a user can be granted. The values match ent's rolebinding.Role constants
// in lower-case, hyphenated form.
type Role string

// The roles of VirtFlow.
const (
	RoleAdmin        Role = "admin"
	RoleOperator     Role = "operator"
	RoleMaintainer   Role = "maintainer"
	RoleViewer       Role = "viewer"
	RoleTenantAdmin  Role = "tenant-admin"
	RoleTenantMember Role = "tenant-member"
	RoleAgent        Role = "agent"
)

// Actions checked against the policy.
const (
	ActRead     = "read"
	ActWrite    = "write"
	ActWriteOwn = "write-own" // write, limited to resources that name the maintainer
)

// Platform is the domain of platform-wide roles.
const Platform = "platform"

// TenantDomain is the domain of one tenant.
func TenantDomain(id int) string { return "tenant:" + strconv.Itoa(id) }

// NodeDomain is the domain of one node (for its agent).
func NodeDomain(id int) string { return "node:" + strconv.Itoa(id) }

// DomainID splits "tenant:5" into ("tenant", 5).
func DomainID(domain string) (kind string, id int, ok bool) {
	kind, rest, found := strings.Cut(domain, ":")
	if !found {
		return domain, 0, domain == Platform
	}
	id, err := strconv.Atoi(rest)
	return kind, id, err == nil && id > 0
}

// RoleFromEnum maps ent's role enum value (e.g. TENANT_ADMIN) to a Role.
func RoleFromEnum(v string) Role {
	return Role(strings.ReplaceAll(strings.ToLower(v), "_", "-"))
}

// Enum is the ent enum value of the role (e.g. TENANT_ADMIN).
func (r Role) Enum() string { return strings.ToUpper(strings.ReplaceAll(string(r), "-", "_")) }

// Scope is the kind of domain a role is granted in.
func (r Role) Scope() string {
	switch r {
	case RoleTenantAdmin, RoleTenantMember:
		return "tenant"
	case RoleAgent:
		return "node"
	default:
		return Platform
	}
}

// Binding is a role held in a domain.
type Binding struct {
	Role   Role
	Domain string
}

func (b Binding) String() string { return fmt.Sprintf("%s@%s", b.Role, b.Domain) }
