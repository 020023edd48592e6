package identity

import (
	"unicode/utf8"

	"golang.org/x/crypto/bcrypt"

	"github.com/virtflow/virtflow/domain/apierr"
)

// Password rules.
const (
	// PasswordCost is the bcrypt cost of stored passwords (about a quarter of a second).
	PasswordCost = 12
	// MinPasswordLen is the minimum length of a password, in characters.
	MinPasswordLen = 12
	// MaxPasswordBytes is the most bcrypt can hash; longer passwords are refused rather than
	// silently truncated.
	MaxPasswordBytes = 72
)

// dummyHash is a bcrypt hash (cost 12) of a random string nobody knows. CheckPassword
// compares against it when there is no real hash, so that an unknown user takes as long to
// refuse as a wrong password.
const dummyHash = "$2a$12$dWET.FUrMGVkjWOwGatzEuXn7nK2beBqiOpWsJPDc4yCckAAS1VTC"

// HashPassword returns the bcrypt hash of pw to store, or VALIDATION (field "password") when
// pw is shorter than 12 characters or longer than 72 bytes.
func HashPassword(pw string) (string, error) {
	if err := validatePassword(pw); err != nil {
		return "", err
	}
	h, err := bcrypt.GenerateFromPassword([]byte(pw), PasswordCost)
	if err != nil {
		return "", err
	}
	return string(h), nil
}

func validatePassword(pw string) error {
	switch {
	case utf8.RuneCountInString(pw) < MinPasswordLen:
		return apierr.Validation("password", "must be at least %d characters long", MinPasswordLen)
	case len(pw) > MaxPasswordBytes:
		return apierr.Validation("password", "must be at most %d bytes long", MaxPasswordBytes)
	}
	return nil
}

// CheckPassword reports whether pw matches hash, in constant time. With an empty or invalid
// hash (no such user, or a user without a password) it still spends the time of a real
// comparison and reports false, so that answers do not tell which usernames exist.
func CheckPassword(hash, pw string) bool {
	if _, err := bcrypt.Cost([]byte(hash)); err != nil {
		_ = bcrypt.CompareHashAndPassword([]byte(dummyHash), []byte(pw))
		return false
	}
	err := bcrypt.CompareHashAndPassword([]byte(hash), []byte(pw))
	if len(pw) > MaxPasswordBytes {
		// bcrypt only reads 72 bytes; a longer password could never have been set.
		return false
	}
	return err == nil
}
