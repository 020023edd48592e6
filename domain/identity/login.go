package identity

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/apitoken"
	"github.com/virtflow/virtflow/ent/user"
	"github.com/virtflow/virtflow/internal/platform/ratekey"
	"github.com/virtflow/virtflow/store/dbtx"
)

// invalidLogin is the one answer to every failed login, whatever failed.
const invalidLogin = "invalid username or password"

// Login checks username and password and opens a session: a READ_WRITE token of kind SESSION
// that expires after SessionTTL. It returns the token's plaintext (shown once, never stored)
// and its row, and records the user's last login.
//
// Every failure (unknown user, wrong password, disabled user, user without a password) is
// UNAUTHENTICATED "invalid username or password" and takes the time of a bcrypt comparison.
// After MaxFailuresPerAccount failures for the username, or MaxFailuresPerSource from the
// source address, within FailureWindow, attempts are refused with RATE_LIMITED before any
// password is checked; a successful login clears the account's count.
func (s *Service) Login(ctx context.Context, username, password, sourceIP string) (string, *ent.APIToken, error) {
	if s.Redis == nil {
		return "", nil, errors.New("identity: Login needs Redis for its rate limiter")
	}
	limit := s.limiter(username, sourceIP)
	if err := limit.reserve(ctx); err != nil {
		if e, ok := apierr.As(err); ok {
			s.log().WarnContext(ctx, "identity: login throttled", "user", ratekey.Part(username), "source_ip", sourceIP, "err", e.Message)
		}
		return "", nil, err
	}
	// From here on the attempt counts as a failure unless it succeeds.

	sys := system(ctx)
	u, err := s.db(ctx).User.Query().Where(user.Username(username)).Only(sys)
	if err != nil && !ent.IsNotFound(err) {
		return "", nil, fmt.Errorf("identity: look up user: %w", err)
	}
	hash := ""
	if u != nil {
		hash = u.PasswordHash
	}
	ok := CheckPassword(hash, password) // always takes a bcrypt comparison's time
	reason := ""
	switch {
	case u == nil:
		reason = "unknown user"
	case hash == "":
		reason = "user has no password"
	case !ok:
		reason = "wrong password"
	case u.Status != user.StatusActive:
		reason = "user disabled"
	}
	if reason != "" {
		s.log().WarnContext(ctx, "identity: login refused", "reason", reason, "user", ratekey.Part(username), "source_ip", sourceIP)
		return "", nil, apierr.Unauthenticated(invalidLogin)
	}

	plaintext, tok, err := s.openSession(sys, u)
	if err != nil {
		return "", nil, err
	}
	if err := limit.release(ctx); err != nil {
		s.log().ErrorContext(ctx, "identity: clear failed logins", "user", username, "err", err)
	}
	s.log().InfoContext(ctx, "identity: login", "user", username, "token_id", tok.ID, "source_ip", sourceIP)
	return plaintext, tok, nil
}

// openSession creates a session token for u and records the login, in one transaction.
func (s *Service) openSession(ctx context.Context, u *ent.User) (string, *ent.APIToken, error) {
	now := s.now()
	plaintext, hash, prefix := NewToken(apitoken.KindSession)
	var id int
	_, err := dbtx.Run(ctx, s.Client, func(tx *ent.Client) error {
		tok, err := tx.APIToken.Create().
			SetName("session " + now.UTC().Format(time.RFC3339)).
			SetTokenHash(hash).
			SetPrefix(prefix).
			SetScope(apitoken.ScopeReadWrite).
			SetKind(apitoken.KindSession).
			SetExpiresAt(now.Add(s.sessionTTL())).
			SetOwnerID(u.ID).
			Save(ctx)
		if err != nil {
			return fmt.Errorf("create session token: %w", err)
		}
		id = tok.ID
		if err := tx.User.UpdateOneID(u.ID).SetLastLoginAt(now).Exec(ctx); err != nil {
			return fmt.Errorf("record last login: %w", err)
		}
		return nil
	})
	if err != nil {
		return "", nil, fmt.Errorf("identity: open session: %w", err)
	}
	tok, err := s.loadToken(ctx, id)
	if err != nil {
		return "", nil, err
	}
	return plaintext, tok, nil
}

// loadToken reads token id with its owner and tenant, so that callers (a GraphQL payload, for
// one) need no further query to show them.
func (s *Service) loadToken(ctx context.Context, id int) (*ent.APIToken, error) {
	tok, err := s.db(ctx).APIToken.Query().Where(apitoken.ID(id)).WithOwner().WithTenant().Only(ctx)
	if err != nil {
		return nil, fmt.Errorf("identity: read token %d: %w", id, err)
	}
	return tok, nil
}
