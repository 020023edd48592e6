package identity

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/virtflow/virtflow/apierr"
	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/apitoken"
	"github.com/virtflow/virtflow/ent/maintainer"
	"github.com/virtflow/virtflow/ent/maintainergroup"
	"github.com/virtflow/virtflow/ent/rolebinding"
	"github.com/virtflow/virtflow/ent/tenant"
	"github.com/virtflow/virtflow/ent/user"
)

// LastUsedGranularity is how often, at most, Authenticate records a token's last use.
const LastUsedGranularity = time.Minute

// maxTokenLen bounds what Authenticate will hash; no real token comes near it.
const maxTokenLen = 1024

// invalidToken is the one answer to every bad token, whatever was wrong with it.
const invalidToken = "invalid or expired token"

// Authenticate returns the viewer a token stands for, seen from sourceIP. Any token that is
// unknown, revoked, expired, owned by a disabled user or used from outside its allowed
// networks is UNAUTHENTICATED "invalid or expired token"; the precise reason is logged.
//
// The viewer holds the owner's role bindings (only those in the token's tenant when the token
// is scoped to one), is read-only when the token is, and carries the maintainer the owner is
// linked to and its groups (active ones only, and not for tenant-scoped tokens). The database is read on every call, so revocations and role changes apply to the
// very next request. The token's last_used_at is written at most once a minute, by a single
// conditional UPDATE (never read-then-write: concurrent requests cannot both write it). Each
// call costs a constant number of statements whatever the owner holds: at most five SELECTs
// (six for a tenant-scoped token), plus that UPDATE once a minute.
func (s *Service) Authenticate(ctx context.Context, token, sourceIP string) (*authz.Viewer, error) {
	refuse := func(reason string, attrs ...any) (*authz.Viewer, error) {
		attrs = append([]any{"reason", reason, "source_ip", sourceIP}, attrs...)
		s.log().WarnContext(ctx, "identity: token refused", attrs...)
		return nil, apierr.Unauthenticated(invalidToken)
	}
	if token == "" || len(token) > maxTokenLen {
		return refuse("malformed token", "length", len(token))
	}
	hash := HashToken(token)
	sys := system(ctx)
	t, err := s.db(ctx).APIToken.Query().
		Where(apitoken.TokenHash(hash)).
		WithTenant(func(q *ent.TenantQuery) { q.Select(tenant.FieldID) }).
		WithOwner(func(q *ent.UserQuery) {
			// Not the password hash: it has no business in a request's memory.
			q.Select(user.FieldUsername, user.FieldStatus)
			q.WithRoleBindings(func(q *ent.RoleBindingQuery) {
				q.Select(rolebinding.FieldRole, rolebinding.FieldDomain)
			})
			q.WithMaintainer(func(q *ent.MaintainerQuery) {
				q.Select(maintainer.FieldStatus)
				q.WithGroups(func(q *ent.MaintainerGroupQuery) {
					q.Select(maintainergroup.FieldID)
					q.Where(maintainergroup.StatusEQ(maintainergroup.StatusActive))
				})
			})
		}).
		Only(sys)
	switch {
	case ent.IsNotFound(err):
		// The hash of an unknown token reveals nothing of it and correlates repeated tries.
		return refuse("unknown token", "token_hash", hash[:12])
	case err != nil:
		return nil, fmt.Errorf("identity: look up token: %w", err)
	}

	now := s.now()
	owner := t.Edges.Owner
	attrs := []any{"token_id", t.ID, "prefix", t.Prefix, "kind", t.Kind}
	switch {
	case t.RevokedAt != nil:
		return refuse("revoked", attrs...)
	case t.ExpiresAt != nil && !now.Before(*t.ExpiresAt):
		return refuse("expired", attrs...)
	case owner == nil:
		return refuse("token without owner", attrs...)
	case owner.Status != user.StatusActive:
		return refuse("owner disabled", append(attrs, "user", owner.Username)...)
	case !sourceAllowed(t.AllowedCidrs, sourceIP):
		return refuse("source address not allowed", append(attrs, "allowed_cidrs", t.AllowedCidrs)...)
	}

	v := &authz.Viewer{
		UserID:   owner.ID,
		Name:     owner.Username,
		TokenID:  t.ID,
		ReadOnly: t.Scope == apitoken.ScopeReadOnly,
		SourceIP: sourceIP,
	}
	scope := "" // the only domain a tenant-scoped token acts in
	if t.Edges.Tenant != nil {
		scope = authz.TenantDomain(t.Edges.Tenant.ID)
	}
	for _, b := range owner.Edges.RoleBindings {
		if scope == "" || b.Domain == scope {
			v.Bindings = append(v.Bindings, authz.Binding{Role: authz.RoleFromEnum(string(b.Role)), Domain: b.Domain})
		}
	}
	// Being a maintainer is a platform matter, outside what a tenant-scoped token may do.
	if m := owner.Edges.Maintainer; m != nil && scope == "" && m.Status == maintainer.StatusActive {
		v.MaintainerID = m.ID
		for _, g := range m.Edges.Groups {
			v.MaintainerGroupIDs = append(v.MaintainerGroupIDs, g.ID)
		}
	}

	// The row just read tells whether an update could match at all; when it cannot, the
	// round trip is saved. The UPDATE's own condition decides in every other case.
	if t.LastUsedAt == nil || t.LastUsedAt.Before(now.Add(-LastUsedGranularity)) {
		s.touch(sys, t.ID, now)
	}
	return v, nil
}

// touch records that token id was used at now, unless that was already done less than
// LastUsedGranularity ago: one conditional UPDATE, so concurrent requests never race a read
// against a write. A failure is logged, not returned: the token is valid all the same.
func (s *Service) touch(ctx context.Context, id int, now time.Time) {
	err := s.db(ctx).APIToken.Update().
		Where(apitoken.ID(id), apitoken.Or(
			apitoken.LastUsedAtIsNil(),
			apitoken.LastUsedAtLT(now.Add(-LastUsedGranularity)),
		)).
		SetLastUsedAt(now).
		Exec(ctx)
	if err != nil {
		s.log().ErrorContext(ctx, "identity: record token use", "token_id", id, "err", err)
	}
}

// sourceAllowed reports whether ip lies in one of cidrs; with no cidrs every address is.
func sourceAllowed(cidrs []string, ip string) bool {
	if len(cidrs) == 0 {
		return true
	}
	addr, err := netip.ParseAddr(ip)
	if err != nil {
		return false
	}
	addr = addr.WithZone("")
	for _, c := range cidrs {
		p, err := netip.ParsePrefix(c)
		if err == nil && (p.Contains(addr) || p.Contains(addr.Unmap())) {
			return true
		}
	}
	return false
}
