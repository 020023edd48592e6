package identity

import (
	"context"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/apitoken"
	"github.com/virtflow/virtflow/ent/user"
)

// The bootstrap administrator.
const (
	// AdminUsername is the user EnsureAdminToken makes sure exists.
	AdminUsername = "admin"
	// BootstrapTokenName names the token EnsureAdminToken makes.
	BootstrapTokenName = "bootstrap"
	// MinAdminSecretLen is the shortest secret EnsureAdminToken accepts.
	MinAdminSecretLen = 16
)

// EnsureAdminToken makes secret (VIRTFLOW_ADMIN_TOKEN) a working admin credential: it ensures
// a user "admin" exists with the ADMIN role on the platform, and an API token "bootstrap"
// (READ_WRITE, no expiry) owned by it whose hash is HashToken(secret). Only the hash is
// stored, with the first three characters of the secret as the token's prefix (ten would
// give away too much of a short secret; a "vf_" token keeps its usual prefix). A token with
// that hash is kept as it is, even revoked: revocation is final. Bootstrap tokens of earlier
// secrets are revoked, so rotating the variable retires the old secret. Calling it again with
// the same secret changes nothing; concurrent calls from several replicas are safe.
func (s *Service) EnsureAdminToken(ctx context.Context, secret string) error {
	switch {
	case utf8.RuneCountInString(secret) < MinAdminSecretLen:
		return apierr.Validation("VIRTFLOW_ADMIN_TOKEN", "must be at least %d characters long", MinAdminSecretLen)
	case len(secret) > maxTokenLen:
		return apierr.Validation("VIRTFLOW_ADMIN_TOKEN", "must be at most %d bytes long", maxTokenLen)
	case strings.IndexFunc(secret, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0:
		return apierr.Validation("VIRTFLOW_ADMIN_TOKEN", "must not contain spaces or control characters")
	}
	sys := system(ctx)
	admin, err := s.ensureUser(sys, AdminUsername)
	if err != nil {
		return err
	}
	if admin.Status != user.StatusActive {
		s.log().WarnContext(ctx, "identity: the admin user is disabled; VIRTFLOW_ADMIN_TOKEN will not work", "user_id", admin.ID)
	}
	if _, _, err := s.ensureBinding(sys, admin.ID, authz.RoleAdmin, authz.Platform, nil, nil, authz.System(Component).Name); err != nil {
		return err
	}

	hash := HashToken(secret)
	t, err := s.db(ctx).APIToken.Query().Where(apitoken.TokenHash(hash)).WithOwner().Only(sys)
	switch {
	case err == nil:
		if t.Edges.Owner == nil || t.Edges.Owner.ID != admin.ID || t.RevokedAt != nil || (t.ExpiresAt != nil && !s.now().Before(*t.ExpiresAt)) {
			s.log().WarnContext(ctx, "identity: VIRTFLOW_ADMIN_TOKEN matches a token that is revoked, expired or not the admin's; it is kept as it is",
				"token_id", t.ID, "name", t.Name)
		}
	case ent.IsNotFound(err):
		prefix := string([]rune(secret)[:3]) + "..."
		if strings.HasPrefix(secret, TokenPrefix) && len(secret) == TokenLen {
			prefix = displayPrefix(secret)
		}
		t, err = s.db(ctx).APIToken.Create().
			SetName(BootstrapTokenName).
			SetTokenHash(hash).
			SetPrefix(prefix).
			SetScope(apitoken.ScopeReadWrite).
			SetKind(apitoken.KindApi).
			SetOwnerID(admin.ID).
			Save(sys)
		if ent.IsConstraintError(err) {
			// Another replica created it first.
			t, err = s.db(ctx).APIToken.Query().Where(apitoken.TokenHash(hash)).Only(sys)
		}
		if err != nil {
			return fmt.Errorf("identity: create the bootstrap token: %w", err)
		}
		s.log().InfoContext(ctx, "identity: bootstrap admin token created", "token_id", t.ID, "prefix", t.Prefix)
	default:
		return fmt.Errorf("identity: look up the bootstrap token: %w", err)
	}

	n, err := s.db(ctx).APIToken.Update().Where(
		apitoken.Name(BootstrapTokenName),
		apitoken.KindEQ(apitoken.KindApi),
		apitoken.HasOwnerWith(user.ID(admin.ID)),
		apitoken.RevokedAtIsNil(),
		apitoken.TokenHashNEQ(hash),
	).SetRevokedAt(s.now()).Save(sys)
	if err != nil {
		return fmt.Errorf("identity: revoke earlier bootstrap tokens: %w", err)
	}
	if n > 0 {
		s.log().InfoContext(ctx, "identity: bootstrap tokens of an earlier VIRTFLOW_ADMIN_TOKEN revoked", "count", n)
	}
	return nil
}

// ensureUser returns the user called username, creating it (active, without password) if
// missing.
func (s *Service) ensureUser(ctx context.Context, username string) (*ent.User, error) {
	find := func() (*ent.User, error) { return s.db(ctx).User.Query().Where(user.Username(username)).Only(ctx) }
	u, err := find()
	if err == nil {
		return u, nil
	}
	if !ent.IsNotFound(err) {
		return nil, fmt.Errorf("identity: read user %s: %w", username, err)
	}
	u, err = s.db(ctx).User.Create().SetUsername(username).Save(ctx)
	if ent.IsConstraintError(err) {
		u, err = find()
	}
	if err != nil {
		return nil, fmt.Errorf("identity: create user %s: %w", username, err)
	}
	s.log().InfoContext(ctx, "identity: user created", "user", username, "user_id", u.ID)
	return u, nil
}
