package identity

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"entgo.io/ent/dialect/sql"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/apierr"
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
// is read on every call unless Service.Cache holds the token (see ViewerCache: revocations
// and role changes still apply to the very next request). The token's last_used_at is written at most once a minute, by a single conditional UPDATE (never
// read-then-write: concurrent requests cannot both write it).
//
// Each call costs one SELECT whatever the owner holds — the token joined with its owner, the
// owner's bindings, active maintainer and that maintainer's active groups aggregated into one
// JSON column by a correlated subquery (see lookupToken) — plus that UPDATE once a minute.
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
	now := s.now()
	var cache *ViewerCache
	if !c.fresh {
		cache = s.Cache
	}
	e, cached := cache.get(hash, now)
	if !cached {
		gen := cache.generation()
		t, err := s.lookupToken(sys, hash)
		switch {
		case ent.IsNotFound(err):
			// The hash of an unknown token reveals nothing of it and correlates repeated tries.
			return refuse("unknown token", "token_hash", hash[:12])
		case err != nil:
			return nil, fmt.Errorf("identity: look up token: %w", err)
		}
		grants, err := t.grants()
		if err != nil {
			return nil, fmt.Errorf("identity: roles of token %d: %w", t.ID, err)
		}
		e = cachedToken{row: *t, grants: grants, read: now}
		cache.put(hash, gen, e)
	}
	t := &e.row

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
	for _, g := range e.grants {
		switch g.Kind {
		case grantBinding:
			// grantsSQL already kept only the token's tenant; checked again all the same.
			if scope == "" || g.Domain == scope {
				v.Bindings = append(v.Bindings, authz.Binding{Role: authz.RoleFromEnum(g.Role), Domain: g.Domain})
			}
		// Being a maintainer is a platform matter, outside what a tenant-scoped token may do:
		// grantsSQL returns no maintainer rows for one, and they are ignored if it did.
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
		cache.touched(hash, now)
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
	// Grants is a JSON array of [kind, role, domain, id] arrays, one per grantRow, or NULL
	// when the owner holds nothing.
	Grants *string `sql:"grants"`
	// The owner's columns are NULL when the token has no owner (LEFT JOIN).
	OwnerID     *int    `sql:"owner_id"`
	OwnerName   *string `sql:"owner_name"`
	OwnerStatus *string `sql:"owner_status"`
}

// Credential is what a request authenticated with, kept in its context (CredentialFromContext)
// so that a long-lived connection can authenticate again (Reauthenticate): the hash of its
// token, never the token itself, and its source address.
type Credential struct {
	hash, sourceIP string
	// fresh reads the database, never Service.Cache (Reauthenticate).
	fresh bool
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

// Reauthenticate authenticates c again, reading the database (never the cache): the
// viewer c stands for now and when its token expires, or UNAUTHENTICATED once the token is
// revoked or expired or its owner disabled. A websocket connection calls it when its
// owner's credentials change (a Credentials event) and when its token expires.
func (s *Service) Reauthenticate(ctx context.Context, c *Credential) (*authz.Viewer, *time.Time, error) {
	again := &Credential{hash: c.hash, sourceIP: c.sourceIP, fresh: true}
	v, err := s.authenticateHash(ctx, again)
	if err != nil {
		return nil, nil, err
	}
	return v, again.ExpiresAt, nil
}

// lookupToken reads the token whose hash is hash, with its owner's name and status, its
// tenant's key and everything the owner holds (grantsSQL), in one SELECT: the api_tokens row
// LEFT JOIN users with the grants a correlated scalar subquery. It returns a
// NotFoundError when no token has that hash.
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
			q.AppendSelectExprAs(sql.Raw(grantsSQL(q.Dialect(), t.C(apitoken.TenantColumn), u.C(user.FieldID))), "grants")
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

// The kinds of grant lookupToken reads.
const (
	grantBinding    = "binding"
	grantMaintainer = "maintainer"
	grantGroup      = "group"
)

// grantRow is one element of the grants lookupToken reads: a role binding (Role, Domain), the owner's maintainer
// or one of its groups (ID).
type grantRow struct {
	Kind   string `sql:"kind"`
	Role   string `sql:"role"`
	Domain string `sql:"domain"`
	ID     int    `sql:"id"`
}

// grantsSQL is the correlated scalar subquery of lookupToken that aggregates, as a JSON array
// of [kind, role, domain, id], what the owner (ownerID, a column of the outer query) holds:
//
//	SELECT 'binding', role, domain, id FROM role_bindings WHERE user = owner
//	  AND (token.tenant IS NULL OR domain = 'tenant:' || token.tenant)
//	UNION ALL SELECT 'maintainer', '', '', m.id FROM maintainers m
//	  WHERE token.tenant IS NULL AND m.user = owner AND m ACTIVE
//	UNION ALL SELECT 'group', '', '', g.id FROM maintainer_groups g JOIN members JOIN maintainers m
//	  WHERE token.tenant IS NULL AND m.user = owner AND m ACTIVE AND g ACTIVE
//
// so a tenant-scoped token (tenantCol not NULL) gets only its tenant's bindings and nothing of
// the maintainer, as before. The aggregate is json_agg on PostgreSQL and json_group_array on
// SQLite; rows come in no particular order (grants sorts them).
func grantsSQL(dialect, tenantCol, ownerID string) string {
	b := &sql.Builder{}
	b.SetDialect(dialect)
	q := b.Quote
	agg, arr := "json_agg", "json_build_array"
	if dialect != "postgres" {
		agg, arr = "json_group_array", "json_array"
	}
	tenantPrefix := strings.TrimSuffix(authz.TenantDomain(0), "0")
	active := "'" + maintainer.StatusActive.String() + "'"
	groupActive := "'" + maintainergroup.StatusActive.String() + "'"
	return fmt.Sprintf("(SELECT %[1]s(%[2]s(x.kind, x.role, x.domain, x.id)) FROM ("+
		"SELECT '%[3]s' AS kind, rb.%[4]s AS role, rb.%[5]s AS domain, rb.%[6]s AS id FROM %[7]s rb "+
		"WHERE rb.%[8]s = %[9]s AND (%[10]s IS NULL OR rb.%[5]s = '%[11]s' || %[10]s) "+
		"UNION ALL SELECT '%[12]s', '', '', m.%[6]s FROM %[13]s m "+
		"WHERE %[10]s IS NULL AND m.%[14]s = %[9]s AND m.%[15]s = %[16]s "+
		"UNION ALL SELECT '%[17]s', '', '', g.%[6]s FROM %[18]s g "+
		"JOIN %[19]s gm ON gm.%[20]s = g.%[6]s JOIN %[13]s mm ON mm.%[6]s = gm.%[21]s "+
		"WHERE %[10]s IS NULL AND mm.%[14]s = %[9]s AND mm.%[15]s = %[16]s AND g.%[15]s = %[22]s) x)",
		agg, arr,
		grantBinding, q(rolebinding.FieldRole), q(rolebinding.FieldDomain), q(rolebinding.FieldID), q(rolebinding.Table),
		q(rolebinding.UserColumn), ownerID, tenantCol, tenantPrefix,
		grantMaintainer, q(maintainer.Table), q(maintainer.UserColumn), q(maintainer.FieldStatus), active,
		grantGroup, q(maintainergroup.Table), q(maintainergroup.MembersTable),
		q(maintainergroup.MembersPrimaryKey[0]), q(maintainergroup.MembersPrimaryKey[1]), groupActive)
}

// grants decodes the row's Grants, ordered by kind and id.
func (t *tokenRow) grants() ([]grantRow, error) {
	if t.Grants == nil {
		return nil, nil
	}
	var raw [][]any
	if err := json.Unmarshal([]byte(*t.Grants), &raw); err != nil {
		return nil, err
	}
	out := make([]grantRow, 0, len(raw))
	for _, r := range raw {
		if len(r) != 4 {
			return nil, fmt.Errorf("grant row %v", r)
		}
		kind, _ := r[0].(string)
		role, _ := r[1].(string)
		domain, _ := r[2].(string)
		id, _ := r[3].(float64)
		out = append(out, grantRow{Kind: kind, Role: role, Domain: domain, ID: int(id)})
	}
	slices.SortFunc(out, func(a, b grantRow) int {
		if c := strings.Compare(a.Kind, b.Kind); c != 0 {
			return c
		}
		return a.ID - b.ID
	})
	return out, nil
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
