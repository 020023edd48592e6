package identity

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/apitoken"
	"github.com/virtflow/virtflow/ent/rolebinding"
	"github.com/virtflow/virtflow/ent/tenant"
	"github.com/virtflow/virtflow/ent/user"
)

// CreateTokenInput describes an API token to create. Validation errors name the fields of the
// GraphQL input CreateAPITokenInput.
type CreateTokenInput struct {
	Name string
	// Scope is "READ_ONLY" (also when empty) or "READ_WRITE".
	Scope string
	// TenantID scopes the token to one tenant, in which the owner must hold a role: the token
	// then carries only the owner's roles in that tenant.
	TenantID *int
	// ExpiresAt, when set, must be in the future.
	ExpiresAt *time.Time
	// AllowedCIDRs restricts the networks the token may be used from (e.g. 10.0.0.0/8).
	AllowedCIDRs []string
	// UserID makes the token for another user: admins, or a tenant admin when TenantID is a
	// tenant it administers.
	UserID *int
}

// CreateAPIToken creates an API token for the viewer, or for in.UserID when the viewer is an
// admin, and returns its plaintext (the only time it is shown; only its hash is stored) and
// its row, with owner and tenant loaded.
//
// A token made with another non-session token is never broader than that one: it is scoped to
// the same tenant, limited to the same networks and expires no later (they are inherited when
// left out, and asking for more is FORBIDDEN). Read-only tokens cannot create tokens at all.
func (s *Service) CreateAPIToken(ctx context.Context, in CreateTokenInput) (string, *ent.APIToken, error) {
	v, err := writer(ctx)
	if err != nil {
		return "", nil, err
	}
	ownerID := v.UserID
	if in.UserID != nil && *in.UserID != v.UserID {
		// Admins make tokens for anyone; a tenant admin for a user of its tenant, scoped to
		// that tenant (the owner must hold a role there, checked below), so the token carries
		// only the owner's roles in the tenant.
		tenantAdmin := in.TenantID != nil && slices.Contains(tenantsAdministered(v), *in.TenantID)
		if !v.Can("APIToken", authz.ActWrite) && !tenantAdmin {
			return "", nil, apierr.Forbidden("only admins may create tokens for other users, and tenant admins for users of their tenant (name the tenant)")
		}
		ownerID = *in.UserID
	}
	if ownerID <= 0 {
		return "", nil, apierr.Validation("userID", "name the user the token is for")
	}

	name := strings.TrimSpace(in.Name)
	if name == "" || utf8.RuneCountInString(name) > 128 {
		return "", nil, apierr.Validation("name", "must be 1 to 128 characters long")
	}
	var scope apitoken.Scope
	switch in.Scope {
	case "", string(apitoken.ScopeReadOnly):
		scope = apitoken.ScopeReadOnly
	case string(apitoken.ScopeReadWrite):
		scope = apitoken.ScopeReadWrite
	default:
		return "", nil, apierr.Validation("scope", "must be READ_ONLY or READ_WRITE")
	}
	now := s.now()
	if in.ExpiresAt != nil && !in.ExpiresAt.After(now) {
		return "", nil, apierr.Validation("expiresAt", "must be in the future")
	}
	cidrs, err := parseCIDRs(in.AllowedCIDRs)
	if err != nil {
		return "", nil, err
	}
	tenantID := in.TenantID
	expiresAt := in.ExpiresAt

	sys := system(ctx)
	if ownerID == v.UserID && v.TokenID != 0 {
		if tenantID, expiresAt, cidrs, err = s.attenuate(sys, v.TokenID, tenantID, expiresAt, cidrs); err != nil {
			return "", nil, err
		}
	}
	if tenantID != nil && *tenantID <= 0 {
		return "", nil, apierr.Validation("tenantID", "no such tenant")
	}

	owner, err := s.db(ctx).User.Query().Where(user.ID(ownerID)).
		WithRoleBindings(func(q *ent.RoleBindingQuery) {
			if tenantID != nil {
				q.Where(rolebinding.Domain(authz.TenantDomain(*tenantID)))
			}
		}).
		Only(sys)
	switch {
	case ent.IsNotFound(err):
		return "", nil, apierr.NotFound("user %d not found", ownerID)
	case err != nil:
		return "", nil, fmt.Errorf("identity: read user %d: %w", ownerID, err)
	case owner.Status != user.StatusActive:
		return "", nil, apierr.Validation("userID", "the user is disabled")
	case tenantID != nil && len(owner.Edges.RoleBindings) == 0:
		return "", nil, apierr.Validation("tenantID", "the token's owner holds no role in tenant %d", *tenantID)
	}

	plaintext, hash, prefix := NewToken(apitoken.KindApi)
	create := s.db(ctx).APIToken.Create().
		SetName(name).
		SetTokenHash(hash).
		SetPrefix(prefix).
		SetScope(scope).
		SetKind(apitoken.KindApi).
		SetOwnerID(ownerID).
		SetNillableExpiresAt(expiresAt).
		SetNillableTenantID(tenantID)
	if len(cidrs) > 0 {
		create.SetAllowedCidrs(cidrs)
	}
	t, err := create.Save(sys)
	if err != nil {
		return "", nil, fmt.Errorf("identity: create API token: %w", err)
	}
	s.log().InfoContext(ctx, "identity: API token created", "token_id", t.ID, "prefix", prefix,
		"owner", owner.Username, "by", v.Name, "scope", scope)
	t, err = s.loadToken(sys, t.ID)
	if err != nil {
		return "", nil, err
	}
	return plaintext, t, nil
}

// attenuate narrows a new token's tenant, expiry and networks to those of the API or agent
// token creatorID the viewer uses, so that a scoped, short-lived or network-bound token cannot
// mint itself a broader one. Sessions (interactive logins) are not narrowed.
func (s *Service) attenuate(ctx context.Context, creatorID int, tenantID *int, expiresAt *time.Time, cidrs []string) (*int, *time.Time, []string, error) {
	c, err := s.db(ctx).APIToken.Query().Where(apitoken.ID(creatorID)).
		WithTenant(func(q *ent.TenantQuery) { q.Select(tenant.FieldID) }).
		Only(ctx)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("identity: read the viewer's token: %w", err)
	}
	if c.Kind == apitoken.KindSession {
		return tenantID, expiresAt, cidrs, nil
	}
	if ct := c.Edges.Tenant; ct != nil {
		switch {
		case tenantID == nil:
			tenantID = &ct.ID
		case *tenantID != ct.ID:
			return nil, nil, nil, apierr.Forbidden("a token scoped to tenant %d can only create tokens scoped to it", ct.ID)
		}
	}
	if c.ExpiresAt != nil {
		switch {
		case expiresAt == nil:
			expiresAt = c.ExpiresAt
		case expiresAt.After(*c.ExpiresAt):
			return nil, nil, nil, apierr.Forbidden("a token cannot create one that expires after it (%s)", c.ExpiresAt.UTC().Format(time.RFC3339))
		}
	}
	if len(c.AllowedCidrs) > 0 {
		if len(cidrs) == 0 {
			return tenantID, expiresAt, slices.Clone(c.AllowedCidrs), nil
		}
		for _, want := range cidrs {
			if !prefixWithin(netip.MustParsePrefix(want), c.AllowedCidrs) {
				return nil, nil, nil, apierr.Forbidden("a token cannot create one usable from %s, outside its own networks", want)
			}
		}
	}
	return tenantID, expiresAt, cidrs, nil
}

// prefixWithin reports whether p lies inside one of the networks outer.
func prefixWithin(p netip.Prefix, outer []string) bool {
	for _, o := range outer {
		op, err := netip.ParsePrefix(o)
		if err == nil && op.Bits() <= p.Bits() && op.Contains(p.Addr()) {
			return true
		}
	}
	return false
}

// parseCIDRs checks and normalises networks in CIDR notation (10.0.0.5/8 becomes 10.0.0.0/8).
func parseCIDRs(in []string) ([]string, error) {
	var out []string
	for _, c := range in {
		p, err := netip.ParsePrefix(strings.TrimSpace(c))
		if err != nil {
			return nil, apierr.Validation("allowedCIDRs", "%q is not a network in CIDR notation (such as 10.0.0.0/8 or 2001:db8::/32)", c)
		}
		if s := p.Masked().String(); !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out, nil
}

// RevokeAPIToken revokes token id (an API or session token) at once: Authenticate refuses it
// from the next request on. Its owner and admins may revoke it; to anyone else it does not
// exist (NOT_FOUND). Revoking a revoked token changes nothing and returns it.
func (s *Service) RevokeAPIToken(ctx context.Context, id int) (*ent.APIToken, error) {
	v, err := writer(ctx)
	if err != nil {
		return nil, err
	}
	sys := system(ctx)
	t, err := s.loadToken(sys, id)
	switch {
	case ent.IsNotFound(err):
		return nil, apierr.NotFound("API token %d not found", id)
	case err != nil:
		return nil, err
	case t.Edges.Owner.ID != v.UserID && !v.Can("APIToken", authz.ActWrite):
		return nil, apierr.NotFound("API token %d not found", id)
	case t.RevokedAt != nil:
		return t, nil
	}
	// Only a token not yet revoked: two concurrent revocations keep the first time.
	err = s.db(ctx).APIToken.Update().
		Where(apitoken.ID(id), apitoken.RevokedAtIsNil()).
		SetRevokedAt(s.now()).
		Exec(sys)
	if err != nil {
		return nil, fmt.Errorf("identity: revoke token %d: %w", id, err)
	}
	s.log().InfoContext(ctx, "identity: token revoked", "token_id", id, "prefix", t.Prefix, "by", v.Name)
	return s.loadToken(sys, id)
}
