package identity

import (
	"context"
	"fmt"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/apitoken"
	"github.com/virtflow/virtflow/ent/user"
	"github.com/virtflow/virtflow/store/dbtx"
)

// SetPassword sets the password of user userID: admins for anyone, users for themselves. The
// user's other sessions are revoked (the caller's own token stays valid), so that changing a
// password locks out whoever else had signed in with the old one; API tokens are kept.
func (s *Service) SetPassword(ctx context.Context, userID int, password string) error {
	v, err := writer(ctx)
	if err != nil {
		return err
	}
	if v.UserID != userID && !v.Can("User", authz.ActWrite) {
		return apierr.Forbidden("you may only set your own password")
	}
	hash, err := HashPassword(password)
	if err != nil {
		return err
	}
	sys := system(ctx)
	revoked := 0
	_, err = dbtx.Run(sys, s.Client, func(tx *ent.Client) error {
		if err := tx.User.UpdateOneID(userID).SetPasswordHash(hash).Exec(sys); err != nil {
			return err
		}
		n, err := tx.APIToken.Update().Where(
			apitoken.HasOwnerWith(user.ID(userID)),
			apitoken.KindEQ(apitoken.KindSession),
			apitoken.RevokedAtIsNil(),
			apitoken.IDNEQ(v.TokenID),
		).SetRevokedAt(s.now()).Save(sys)
		revoked = n
		return err
	})
	switch {
	case ent.IsNotFound(err):
		return apierr.NotFound("user %d not found", userID)
	case err != nil:
		return fmt.Errorf("identity: set password of user %d: %w", userID, err)
	}
	s.log().InfoContext(ctx, "identity: password set", "user_id", userID, "by", v.Name, "sessions_revoked", revoked)
	return nil
}

// Me returns the viewer's user: UNAUTHENTICATED without a viewer, NOT_FOUND for the system
// viewer (which is no user).
func (s *Service) Me(ctx context.Context) (*ent.User, error) {
	v, err := viewer(ctx)
	if err != nil {
		return nil, err
	}
	if v.IsSystem() || v.UserID == 0 {
		return nil, apierr.NotFound("the system viewer is not a user")
	}
	u, err := s.db(ctx).User.Get(system(ctx), v.UserID)
	switch {
	case ent.IsNotFound(err):
		return nil, apierr.NotFound("user %d not found", v.UserID)
	case err != nil:
		return nil, fmt.Errorf("identity: read user %d: %w", v.UserID, err)
	}
	return u, nil
}
