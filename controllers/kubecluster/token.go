package kubecluster

import (
	"crypto/rand"
	"fmt"
	"regexp"
	"time"

	"github.com/virtflow/virtflow/internal/platform/secrets"
)

// TokenTTL is how long a kubeadm bootstrap token works (kubeadm's default); a token that
// expires within TokenRenewBefore is replaced before it is rendered into a new node.
const (
	TokenTTL         = 24 * time.Hour
	TokenRenewBefore = 2 * time.Hour
)

// tokenPurpose is the additional data a join token is sealed with (its column).
const tokenPurpose = "kubernetes_clusters.join_token_sealed"

// TokenRe is kubeadm's bootstrap token format: <id>.<secret>.
var TokenRe = regexp.MustCompile(`^([a-z0-9]{6})\.([a-z0-9]{16})$`)

const tokenAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789"

// JoinToken is a kubeadm bootstrap token and when it expires.
type JoinToken struct {
	ID, Secret string
	Expires    time.Time
}

// String is the token as kubeadm takes it.
func (t JoinToken) String() string { return t.ID + "." + t.Secret }

// NewJoinToken returns a random token expiring TokenTTL after now.
func NewJoinToken(now time.Time) (JoinToken, error) {
	id, err := randomString(6)
	if err != nil {
		return JoinToken{}, err
	}
	sec, err := randomString(16)
	if err != nil {
		return JoinToken{}, err
	}
	return JoinToken{ID: id, Secret: sec, Expires: now.Add(TokenTTL)}, nil
}

// Due reports whether t must be replaced before it is given to a node at now.
func (t JoinToken) Due(now time.Time) bool {
	return t.ID == "" || !now.Add(TokenRenewBefore).Before(t.Expires)
}

// sealToken seals the token for the join_token_sealed column.
func sealToken(keys *secrets.Keyring, t JoinToken) (string, error) {
	return keys.Seal(t.String(), tokenPurpose)
}

// openToken opens a sealed token.
func openToken(keys *secrets.Keyring, sealed string, expires time.Time) (JoinToken, error) {
	if !secrets.IsSealed(sealed) {
		return JoinToken{}, fmt.Errorf("join token: not sealed")
	}
	s, err := keys.Open(sealed, tokenPurpose)
	if err != nil {
		return JoinToken{}, fmt.Errorf("open the join token: %w", err)
	}
	m := TokenRe.FindStringSubmatch(s)
	if m == nil {
		return JoinToken{}, fmt.Errorf("join token: bad format")
	}
	return JoinToken{ID: m[1], Secret: m[2], Expires: expires}, nil
}

// randomString returns n characters of tokenAlphabet, uniformly (rejection sampling).
func randomString(n int) (string, error) {
	out := make([]byte, 0, n)
	buf := make([]byte, 2*n)
	for len(out) < n {
		if _, err := rand.Read(buf); err != nil {
			return "", err
		}
		for _, b := range buf {
			if int(b) < 252 && len(out) < n { // 252 = 7*36: no modulo bias
				out = append(out, tokenAlphabet[int(b)%len(tokenAlphabet)])
			}
		}
	}
	return string(out), nil
}
