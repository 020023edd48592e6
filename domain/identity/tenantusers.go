package identity

import (
	"context"
	"slices"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/ent"
)

// CreateUser creates a user account. A viewer who may write users (admins) creates any user,
// through the usual privacy rules. A tenant admin onboards users into the tenants it
// administers: the new user must join at least one tenant, every tenant named must be one of
// them, and nothing else may be attached (roles are granted afterwards with GrantRole, which
// keeps them inside the tenant). Anyone else is FORBIDDEN.
func (s *Service) CreateUser(ctx context.Context, in ent.CreateUserInput) (*ent.User, error) {
	v, err := writer(ctx)
	if err != nil {
		return nil, err
	}
	if v.Can("User", authz.ActWrite) {
		return s.db(ctx).User.Create().SetInput(in).Save(ctx)
	}
	administered := tenantsAdministered(v)
	if len(administered) == 0 {
		return nil, apierr.Forbidden("you may not create users")
	}
	if len(in.TenantIDs) == 0 {
		// A user outside every tenant is the platform's to create: refused, saying how to
		// create one the tenant admin may.
		return nil, apierr.Forbidden("a tenant admin creates users only in the tenants it administers: name one in tenantIDs")
	}
	for _, id := range in.TenantIDs {
		if !slices.Contains(administered, id) {
			return nil, apierr.Forbidden("you may not add users to tenant %d", id)
		}
	}
	if len(in.APITokenIDs) > 0 || len(in.RoleBindingIDs) > 0 || len(in.NoticeIDs) > 0 || in.MaintainerID != nil {
		return nil, apierr.Forbidden("a tenant admin sets only a new user's tenants; grant roles with grantRole")
	}
	// The checks above are the whole of a tenant admin's right here, so the row is written as
	// the system (the policy lets tenant admins write role bindings, not users).
	return s.db(ctx).User.Create().SetInput(in).Save(system(ctx))
}

// tenantsAdministered lists the tenants in which v is a tenant admin (may write role bindings).
func tenantsAdministered(v *authz.Viewer) []int {
	return v.Domains("tenant", "RoleBinding", authz.ActWrite)
}
