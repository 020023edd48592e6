package identity

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"

	"github.com/virtflow/virtflow/ent/apitoken"
)

// Token format.
const (
	// TokenPrefix starts every token VirtFlow makes, so that secret scanners and people can
	// recognise one.
	TokenPrefix = "vf_"
	// TokenLen is the length of a token made by NewToken: the prefix and 32 random bytes in
	// unpadded base64url (43 characters).
	TokenLen = len(TokenPrefix) + 43
	// DisplayPrefixLen is how many leading characters of a token are stored in clear and
	// shown to users to recognise it.
	DisplayPrefixLen = 10
)

// NewToken makes a token of the given kind. It returns the plaintext, to hand to the user once
// and never store; its hash, to store and look it up by; and its prefix, to show. Every kind
// shares the same format: the kind is recorded on the token's row, not in the secret.
func NewToken(kind apitoken.Kind) (plaintext, hash, prefix string) {
	_ = kind
	var b [32]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand.Read crashes the program instead)
	plaintext = TokenPrefix + base64.RawURLEncoding.EncodeToString(b[:])
	return plaintext, HashToken(plaintext), plaintext[:DisplayPrefixLen]
}

// HashToken is the hex SHA-256 of a token's plaintext, as stored in api_tokens.token_hash.
func HashToken(plaintext string) string {
	sum := sha256.Sum256([]byte(plaintext))
	return hex.EncodeToString(sum[:])
}

// displayPrefix is the part of a token shown to users, for tokens of any format.
func displayPrefix(plaintext string) string {
	if len(plaintext) > DisplayPrefixLen {
		return plaintext[:DisplayPrefixLen]
	}
	return plaintext
}
