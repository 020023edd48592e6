package identity

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"entgo.io/ent/dialect/sql"

	"github.com/virtflow/virtflow/apierr"
	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/apitoken"
	"github.com/virtflow/virtflow/ent/maintainer"
	"github.com/virtflow/virtflow/ent/maintainergroup"
	"github.com/virtflow/virtflow/ent/rolebinding"
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
// linked to and its groups (active ones only, and not for tenant-scoped tokens). The database
// is read on every call, so revocations and role changes apply to the very next request. The
// token's last_used_at is written at most once a minute, by a single conditional UPDATE (never
// read-then-write: concurrent requests cannot both write it).
//
// Each call costs two SELECTs whatever the owner holds — the token joined with its owner (and
// the id of the owner's active maintainer), then the owner's bindings, with the maintainer's
// groups in a UNION ALL only when there is a maintainer (see lookupToken and lookupGrants) —
// plus that UPDATE once a minute. A refused token costs the first SELECT only.
func (s *Service) Authenticate(ctx context.Context, token, sourceIP string) (*authz.Viewer, error) {
	v, _, err := s.authenticate(ctx, token, sourceIP)
	return v, err
}

// authenticate is Authenticate, also returning the credential it accepted (for
// Reauthenticate).
func (s *Service) authenticate(ctx context.Context, token, sourceIP string) (*authz.Viewer, *Credential, error) {
	if token == "" || len(token) > maxTokenLen {
		s.log().WarnContext(ctx, "identity: token refused", "reason", "malformed token", "source_ip", sourceIP, "length", len(token))
		return nil, nil, apierr.Unauthenticated(invalidToken)
	}
	c := &Credential{hash: HashToken(token), sourceIP: sourceIP}
	v, err := s.authenticateHash(ctx, c)
	if err != nil {
		return nil, nil, err
	}
	return v, c, nil
}

// authenticateHash authenticates the token whose hash c holds, from c's source address, and
// records in c when the token expires.
func (s *Service) authenticateHash(ctx context.Context, c *Credential) (*authz.Viewer, error) {
	hash, sourceIP := c.hash, c.sourceIP
	refuse := func(reason string, attrs ...any) (*authz.Viewer, error) {
		attrs = append([]any{"reason", reason, "source_ip", sourceIP}, attrs...)
		s.log().WarnContext(ctx, "identity: token refused", attrs...)
		return nil, apierr.Unauthenticated(invalidToken)
	}
	sys := system(ctx)
	t, err := s.lookupToken(sys, hash)
	switch {
	case ent.IsNotFound(err):
		// The hash of an unknown token reveals nothing of it and correlates repeated tries.
		return refuse("unknown token", "token_hash", hash[:12])
	case err != nil:
		return nil, fmt.Errorf("identity: look up token: %w", err)
	}

	now := s.now()
	attrs := []any{"token_id", t.ID, "prefix", t.Prefix, "kind", t.Kind}
	switch {
	case t.RevokedAt != nil:
		return refuse("revoked", attrs...)
	case t.ExpiresAt != nil && !now.Before(*t.ExpiresAt):
		return refuse("expired", attrs...)
	case t.OwnerID == nil:
		return refuse("token without owner", attrs...)
	case t.OwnerStatus == nil || user.Status(*t.OwnerStatus) != user.StatusActive:
		return refuse("owner disabled", append(attrs, "user", deref(t.OwnerName))...)
	case !sourceAllowed(t.AllowedCidrs, sourceIP):
		return refuse("source address not allowed", append(attrs, "allowed_cidrs", t.AllowedCidrs)...)
	}

	c.ExpiresAt = t.ExpiresAt
	v := &authz.Viewer{
		UserID:   *t.OwnerID,
		Name:     deref(t.OwnerName),
		TokenID:  t.ID,
		ReadOnly: apitoken.Scope(t.Scope) == apitoken.ScopeReadOnly,
		SourceIP: sourceIP,
	}
	scope := "" // the only domain a tenant-scoped token acts in
	if t.TenantID != nil {
		scope = authz.TenantDomain(*t.TenantID)
	}
	maintainerID := 0 // lookupGrants reads the maintainer's groups only when there is one
	if scope == "" && t.MaintainerID != nil {
		maintainerID = *t.MaintainerID
	}
	grants, err := s.lookupGrants(sys, *t.OwnerID, scope, maintainerID)
	if err != nil {
		return nil, fmt.Errorf("identity: look up roles of token %d: %w", t.ID, err)
	}
	for _, g := range grants {
		switch g.Kind {
		case grantBinding:
			// lookupGrants already kept only the token's tenant; checked again all the same.
			if scope == "" || g.Domain == scope {
				v.Bindings = append(v.Bindings, authz.Binding{Role: authz.RoleFromEnum(g.Role), Domain: g.Domain})
			}
		// Being a maintainer is a platform matter, outside what a tenant-scoped token may do:
		// lookupGrants returns no maintainer rows for one, and they are ignored if it did.
		case grantMaintainer:
			if scope == "" {
				v.MaintainerID = g.ID
			}
		case grantGroup:
			if scope == "" {
				v.MaintainerGroupIDs = append(v.MaintainerGroupIDs, g.ID)
			}
		}
	}

	// The row just read tells whether an update could match at all; when it cannot, the
	// round trip is saved. The UPDATE's own condition decides in every other case.
	if t.LastUsedAt == nil || t.LastUsedAt.Before(now.Add(-LastUsedGranularity)) {
		s.touch(sys, t.ID, now)
	}
	return v, nil
}

// tokenRow is what Authenticate reads of a token and its owner: no password hash (it has no
// business in a request's memory) and no token hash, and only the key of the tenant.
type tokenRow struct {
	ID           int        `sql:"id"`
	Prefix       string     `sql:"prefix"`
	Kind         string     `sql:"kind"`
	Scope        string     `sql:"scope"`
	AllowedCidrs []string   `sql:"allowed_cidrs"`
	ExpiresAt    *time.Time `sql:"expires_at"`
	LastUsedAt   *time.Time `sql:"last_used_at"`
	RevokedAt    *time.Time `sql:"revoked_at"`
	TenantID     *int       `sql:"tenant_id"`
	// The owner's columns are NULL when the token has no owner (LEFT JOIN).
	OwnerID     *int    `sql:"owner_id"`
	OwnerName   *string `sql:"owner_name"`
	OwnerStatus *string `sql:"owner_status"`
	// MaintainerID is the owner's maintainer when it is ACTIVE, else NULL.
	MaintainerID *int `sql:"maintainer_id"`
}

// lookupToken reads the token whose hash is hash, with its owner's name and status, its
// tenant's key and the id of the owner's maintainer if that is ACTIVE, in one SELECT: the
// api_tokens row LEFT JOIN users, the maintainer a scalar subquery (maintainers.user is
// unique). It returns a NotFoundError when no token has that hash.
// Credential is what a request authenticated with, kept in its context (CredentialFromContext)
// so that a long-lived connection can authenticate again (Reauthenticate): the hash of its
// token, never the token itself, and its source address.
type Credential struct {
	hash, sourceIP string
	// ExpiresAt is when the token expires, as last read; nil when it never does.
	ExpiresAt *time.Time
}

type credentialKey struct{}

// withCredential returns ctx carrying c.
func withCredential(ctx context.Context, c *Credential) context.Context {
	return context.WithValue(ctx, credentialKey{}, c)
}

// CredentialFromContext returns the credential Middleware or WebsocketInit authenticated the
// request of ctx with, or nil for an anonymous request.
func CredentialFromContext(ctx context.Context) *Credential {
	c, _ := ctx.Value(credentialKey{}).(*Credential)
	return c
}

// Reauthenticate authenticates c again, reading the database as Authenticate does: the
// viewer c stands for now and when its token expires, or UNAUTHENTICATED once the token is
// revoked or expired or its owner disabled. A websocket connection calls it when its
// owner's credentials change (a Credentials event) and when its token expires.
func (s *Service) Reauthenticate(ctx context.Context, c *Credential) (*authz.Viewer, *time.Time, error) {
	again := &Credential{hash: c.hash, sourceIP: c.sourceIP}
	v, err := s.authenticateHash(ctx, again)
	if err != nil {
		return nil, nil, err
	}
	return v, again.ExpiresAt, nil
}

func (s *Service) lookupToken(ctx context.Context, hash string) (*tokenRow, error) {
	var rows []tokenRow
	err := s.db(ctx).APIToken.Query().
		Where(apitoken.TokenHash(hash)).
		Modify(func(q *sql.Selector) {
			t := q.Table()
			u := sql.Dialect(q.Dialect()).Table(user.Table).As("owner")
			q.LeftJoin(u).On(t.C(apitoken.OwnerColumn), u.C(user.FieldID))
			q.Select(
				sql.As(t.C(apitoken.FieldID), "id"),
				sql.As(t.C(apitoken.FieldPrefix), "prefix"),
				sql.As(t.C(apitoken.FieldKind), "kind"),
				sql.As(t.C(apitoken.FieldScope), "scope"),
				sql.As(t.C(apitoken.FieldAllowedCidrs), "allowed_cidrs"),
				sql.As(t.C(apitoken.FieldExpiresAt), "expires_at"),
				sql.As(t.C(apitoken.FieldLastUsedAt), "last_used_at"),
				sql.As(t.C(apitoken.FieldRevokedAt), "revoked_at"),
				sql.As(t.C(apitoken.TenantColumn), "tenant_id"),
				sql.As(u.C(user.FieldID), "owner_id"),
				sql.As(u.C(user.FieldUsername), "owner_name"),
				sql.As(u.C(user.FieldStatus), "owner_status"),
			)
			m := sql.Dialect(q.Dialect()).Table(maintainer.Table).As("m")
			q.AppendSelectExprAs(sql.Dialect(q.Dialect()).Select(m.C(maintainer.FieldID)).From(m).
				Where(sql.And(
					sql.ColumnsEQ(m.C(maintainer.UserColumn), u.C(user.FieldID)),
					sql.EQ(m.C(maintainer.FieldStatus), maintainer.StatusActive.String()),
				)), "maintainer_id")
		}).
		Scan(ctx, &rows)
	switch {
	case err != nil:
		return nil, err
	case len(rows) == 0:
		return nil, &ent.NotFoundError{}
	case len(rows) > 1: // token_hash is unique: cannot happen
		return nil, &ent.NotSingularError{}
	}
	return &rows[0], nil
}

// The kinds of row lookupGrants returns.
const (
	grantBinding    = "binding"
	grantMaintainer = "maintainer"
	grantGroup      = "group"
)

// grantRow is one row of lookupGrants: a role binding (Role, Domain), the owner's maintainer
// or one of its groups (ID).
type grantRow struct {
	Kind   string `sql:"kind"`
	Role   string `sql:"role"`
	Domain string `sql:"domain"`
	ID     int    `sql:"id"`
}

// lookupGrants reads, in one SELECT, what user uid holds: its role bindings (only those in
// domain scope unless scope is empty) and, when maintainerID is set (lookupToken found the
// owner's maintainer ACTIVE, for an unscoped token), that maintainer's ACTIVE groups and the
// maintainer itself if it is still ACTIVE. The statement is
//
//	SELECT 'binding', role, domain, id FROM role_bindings WHERE user = uid [AND domain = scope]
//
// or, for a maintainer, a UNION ALL of it with
//
//	SELECT 'maintainer', '', '', m.id FROM maintainers m WHERE user = uid AND m ACTIVE
//	UNION ALL SELECT 'group', '', '', g.id FROM maintainer_groups g JOIN members JOIN maintainers m
//	  WHERE m.user = uid AND m ACTIVE AND g ACTIVE
//
// its rows ordered by kind and id. Nearly every token (node agents, tenants' tokens) belongs to
// no maintainer, and the single-table statement costs PostgreSQL a fraction of the UNION's
// planning; a maintainer's rows are read, and its status checked again, in the same statement
// as its bindings.
func (s *Service) lookupGrants(ctx context.Context, uid int, scope string, maintainerID int) ([]grantRow, error) {
	var rows []grantRow
	err := s.db(ctx).RoleBinding.Query().
		Modify(func(q *sql.Selector) {
			rb := q.Table()
			q.Select()
			q.AppendSelectExprAs(sql.Raw("'"+grantBinding+"'"), "kind")
			q.AppendSelectAs(rb.C(rolebinding.FieldRole), "role")
			q.AppendSelectAs(rb.C(rolebinding.FieldDomain), "domain")
			q.AppendSelectAs(rb.C(rolebinding.FieldID), "id")
			q.Where(sql.EQ(rb.C(rolebinding.UserColumn), uid))
			if scope != "" {
				q.Where(sql.EQ(rb.C(rolebinding.FieldDomain), scope))
			}
			if scope != "" || maintainerID == 0 {
				q.OrderBy("kind", "id")
				return
			}
			b := sql.Dialect(q.Dialect())
			// The owner's maintainer, when active.
			m := b.Table(maintainer.Table).As("m")
			q.UnionAll(b.Select().
				AppendSelectExprAs(sql.Raw("'"+grantMaintainer+"'"), "kind").
				AppendSelectExprAs(sql.Raw("''"), "role").
				AppendSelectExprAs(sql.Raw("''"), "domain").
				AppendSelectAs(m.C(maintainer.FieldID), "id").
				From(m).
				Where(sql.And(
					sql.EQ(m.C(maintainer.UserColumn), uid),
					sql.EQ(m.C(maintainer.FieldStatus), maintainer.StatusActive.String()),
				)))
			// Its active groups, through the membership table.
			gm := b.Table(maintainer.GroupsTable).As("gm")
			mm := b.Table(maintainer.Table).As("mm")
			g := b.Table(maintainergroup.Table).As("g")
			q.UnionAll(b.Select().
				AppendSelectExprAs(sql.Raw("'"+grantGroup+"'"), "kind").
				AppendSelectExprAs(sql.Raw("''"), "role").
				AppendSelectExprAs(sql.Raw("''"), "domain").
				AppendSelectAs(g.C(maintainergroup.FieldID), "id").
				From(g).
				Join(gm).On(gm.C(maintainergroup.MembersPrimaryKey[0]), g.C(maintainergroup.FieldID)).
				Join(mm).On(mm.C(maintainer.FieldID), gm.C(maintainergroup.MembersPrimaryKey[1])).
				Where(sql.And(
					sql.EQ(mm.C(maintainer.UserColumn), uid),
					sql.EQ(mm.C(maintainer.FieldStatus), maintainer.StatusActive.String()),
					sql.EQ(g.C(maintainergroup.FieldStatus), maintainergroup.StatusActive.String()),
				)))
			q.OrderBy("kind", "id")
		}).
		Scan(ctx, &rows)
	return rows, err
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
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
