package identity

import (
	"context"
	"fmt"
	"slices"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/rolebinding"
	"github.com/virtflow/virtflow/ent/tenant"
	"github.com/virtflow/virtflow/ent/user"
)

// GrantRole grants user userID the role: a platform role (admin, operator, maintainer,
// viewer) names neither tenant nor node, a tenant role (tenant-admin, tenant-member) names
// the tenant, and the agent role names the node. Admins grant any role; a tenant admin grants
// tenant roles in its own tenant; anyone else is FORBIDDEN. Granting a role the user already
// holds returns the existing binding. Role changes apply from the user's next request.
func (s *Service) GrantRole(ctx context.Context, userID int, role authz.Role, tenantID, nodeID *int) (*ent.RoleBinding, error) {
	v, err := writer(ctx)
	if err != nil {
		return nil, err
	}
	if rolebinding.RoleValidator(rolebinding.Role(role.Enum())) != nil {
		return nil, apierr.Validation("role", "unknown role %q", role)
	}
	domain, err := roleDomain(role, tenantID, nodeID)
	if err != nil {
		return nil, err
	}
	if !mayWriteBindings(v, domain) {
		return nil, apierr.Forbidden("you may not grant the %s role here", role)
	}

	sys := system(ctx)
	if ok, err := s.db(ctx).User.Query().Where(user.ID(userID)).Exist(sys); err != nil {
		return nil, fmt.Errorf("identity: read user %d: %w", userID, err)
	} else if !ok {
		return nil, apierr.NotFound("user %d not found", userID)
	}
	if tenantID != nil {
		if ok, err := s.db(ctx).Tenant.Query().Where(tenant.ID(*tenantID)).Exist(sys); err != nil {
			return nil, fmt.Errorf("identity: read tenant %d: %w", *tenantID, err)
		} else if !ok {
			return nil, apierr.NotFound("tenant %d not found", *tenantID)
		}
	}
	if nodeID != nil {
		if ok, err := s.db(ctx).ComputeNode.Query().Where(computenode.ID(*nodeID)).Exist(sys); err != nil {
			return nil, fmt.Errorf("identity: read node %d: %w", *nodeID, err)
		} else if !ok {
			return nil, apierr.NotFound("node %d not found", *nodeID)
		}
	}
	b, created, err := s.ensureBinding(sys, userID, role, domain, tenantID, nodeID, v.Name)
	if err != nil {
		return nil, err
	}
	if created {
		s.log().InfoContext(ctx, "identity: role granted", "binding_id", b.ID, "user_id", userID,
			"role", role, "domain", domain, "by", v.Name)
	}
	return b, nil
}

// ensureBinding returns the binding of role in domain for userID, creating it if missing (also
// when a concurrent request creates it first).
func (s *Service) ensureBinding(ctx context.Context, userID int, role authz.Role, domain string, tenantID, nodeID *int, grantedBy string) (*ent.RoleBinding, bool, error) {
	find := func() (*ent.RoleBinding, error) {
		return s.db(ctx).RoleBinding.Query().Where(
			rolebinding.RoleEQ(rolebinding.Role(role.Enum())),
			rolebinding.Domain(domain),
			rolebinding.HasUserWith(user.ID(userID)),
		).Only(ctx)
	}
	b, err := find()
	if err == nil {
		return b, false, nil
	}
	if !ent.IsNotFound(err) {
		return nil, false, fmt.Errorf("identity: read role bindings: %w", err)
	}
	b, err = s.db(ctx).RoleBinding.Create().
		SetRole(rolebinding.Role(role.Enum())).
		SetDomain(domain).
		SetUserID(userID).
		SetNillableTenantID(tenantID).
		SetNillableNodeID(nodeID).
		SetGrantedBy(grantedBy).
		Save(ctx)
	if ent.IsConstraintError(err) {
		if b, err := find(); err == nil {
			return b, false, nil
		}
	}
	if err != nil {
		return nil, false, fmt.Errorf("identity: create role binding: %w", err)
	}
	if tenantID != nil {
		if err := s.ensureMember(ctx, *tenantID, userID); err != nil {
			return nil, false, err
		}
	}
	return b, true, nil
}

// ensureMember makes a user granted a tenant role a member of the tenant, so the tenant's
// admins see them among its users. The grant itself was authorized by the caller.
func (s *Service) ensureMember(ctx context.Context, tenantID, userID int) error {
	sys := system(ctx)
	member, err := s.db(ctx).Tenant.Query().
		Where(tenant.ID(tenantID), tenant.HasMembersWith(user.ID(userID))).Exist(sys)
	if err != nil {
		return fmt.Errorf("identity: read tenant members: %w", err)
	}
	if member {
		return nil
	}
	if err := s.db(ctx).Tenant.UpdateOneID(tenantID).AddMemberIDs(userID).Exec(sys); err != nil {
		return fmt.Errorf("identity: add tenant member: %w", err)
	}
	return nil
}

// RevokeRole deletes role binding id. Who may revoke a binding is who may grant it; a viewer
// who may not even see it gets NOT_FOUND.
func (s *Service) RevokeRole(ctx context.Context, id int) error {
	v, err := writer(ctx)
	if err != nil {
		return err
	}
	sys := system(ctx)
	b, err := s.db(ctx).RoleBinding.Get(sys, id)
	switch {
	case ent.IsNotFound(err):
		return apierr.NotFound("role binding %d not found", id)
	case err != nil:
		return fmt.Errorf("identity: read role binding %d: %w", id, err)
	case !mayWriteBindings(v, b.Domain):
		if mayReadBindings(v, b.Domain) {
			return apierr.Forbidden("you may not revoke the %s role", authz.RoleFromEnum(string(b.Role)))
		}
		return apierr.NotFound("role binding %d not found", id)
	}
	if err := s.db(ctx).RoleBinding.DeleteOneID(id).Exec(sys); err != nil {
		if ent.IsNotFound(err) {
			return apierr.NotFound("role binding %d not found", id)
		}
		return fmt.Errorf("identity: delete role binding %d: %w", id, err)
	}
	s.log().InfoContext(ctx, "identity: role revoked", "binding_id", id, "role", b.Role, "domain", b.Domain, "by", v.Name)
	return nil
}

// roleDomain checks that role names the right kind of target and returns its domain.
func roleDomain(role authz.Role, tenantID, nodeID *int) (string, error) {
	switch role.Scope() {
	case "tenant":
		switch {
		case tenantID == nil:
			return "", apierr.Validation("tenantID", "the %s role must name a tenant", role)
		case *tenantID <= 0:
			return "", apierr.Validation("tenantID", "no such tenant")
		case nodeID != nil:
			return "", apierr.Validation("nodeID", "the %s role cannot name a node", role)
		}
		return authz.TenantDomain(*tenantID), nil
	case "node":
		switch {
		case nodeID == nil:
			return "", apierr.Validation("nodeID", "the %s role must name a node", role)
		case *nodeID <= 0:
			return "", apierr.Validation("nodeID", "no such node")
		case tenantID != nil:
			return "", apierr.Validation("tenantID", "the %s role cannot name a tenant", role)
		}
		return authz.NodeDomain(*nodeID), nil
	default:
		switch {
		case tenantID != nil:
			return "", apierr.Validation("tenantID", "the %s role is platform-wide and cannot name a tenant", role)
		case nodeID != nil:
			return "", apierr.Validation("nodeID", "the %s role is platform-wide and cannot name a node", role)
		}
		return authz.Platform, nil
	}
}

// mayWriteBindings reports whether v may grant or revoke roles in domain: admins anywhere,
// tenant admins in their tenants.
func mayWriteBindings(v *authz.Viewer, domain string) bool {
	return mayBindings(v, domain, authz.ActWrite)
}

// mayReadBindings reports whether v may see the bindings of domain.
func mayReadBindings(v *authz.Viewer, domain string) bool {
	return mayBindings(v, domain, authz.ActRead)
}

func mayBindings(v *authz.Viewer, domain, act string) bool {
	if v.Can("RoleBinding", act) {
		return true
	}
	kind, id, ok := authz.DomainID(domain)
	return ok && kind == "tenant" && slices.Contains(v.Domains("tenant", "RoleBinding", act), id)
}
