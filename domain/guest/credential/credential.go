// Package credential makes and hashes the per-VM guest credential: the node agent writes a fresh
// one onto a VM's config drive and registers only its hash, package guest checks a guest's call
// against that hash. It imports only the standard library, so that the node agent can make a
// credential without linking package guest (and with it ent and the SQL driver).
package credential

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
)

// Prefix starts every guest credential, so that one found in a log can be told for what it is.
const Prefix = "vfg_"

// New returns a fresh random credential and its hash (what guest.Service.RegisterCredential
// takes).
func New() (plain, hash string, err error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", "", fmt.Errorf("guest credential: %w", err)
	}
	plain = Prefix + base64.RawURLEncoding.EncodeToString(b)
	return plain, Hash(plain), nil
}

// Hash is the SHA-256, in hex, of a credential: what the database keeps. A credential is 256
// random bits, so a fast hash is enough (as for API tokens).
func Hash(plain string) string {
	sum := sha256.Sum256([]byte(plain))
	return hex.EncodeToString(sum[:])
}
