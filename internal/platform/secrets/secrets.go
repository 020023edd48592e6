// Package secrets seals the secrets VirtFlow keeps in its database — the HMAC keys of
// hooks (an event rule's hookSecret, a maintainer group's webhookSecret), and later other
// keys — so that a copy of the database, a backup or a read-only SQL role does not hand
// them out. A Keyring holds the operator's key (VIRTFLOW_SECRET_KEY, 32 bytes) and, for
// rotation, older keys that can still open what they sealed.
//
// A sealed value is text, so that it fits the string columns it replaces:
//
//	vfsec:v1:<key id>:<base64url(nonce ‖ AES-256-GCM ciphertext ‖ tag)>
//
// The key id (8 hex digits of SHA-256 of the key) picks the key that opens it; the purpose
// given to Seal and Open (the column, e.g. "event_rules.hook_secret") is the GCM
// additional data, so a sealed value copied into another column does not open there. A
// value without the prefix is a legacy plain value: Open returns it as it is (see
// IsSealed), so rows written before sealing keep working until they are sealed.
package secrets

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Prefix starts every sealed value (version 1: AES-256-GCM).
const Prefix = "vfsec:v1:"

// KeySize is the size of a key: AES-256.
const KeySize = 32

// ErrNoKey is what Open fails with when no key of the keyring sealed the value.
var ErrNoKey = errors.New("secrets: sealed under a key this keyring does not hold")

// key is one AES-256-GCM key and its id.
type key struct {
	id   string
	aead cipher.AEAD
}

// Keyring seals with its primary key and opens with any of its keys. Safe for concurrent
// use.
type Keyring struct {
	primary key
	byID    map[string]key
}

// NewKeyring returns a keyring sealing with primary and opening with primary and old.
func NewKeyring(primary []byte, old ...[]byte) (*Keyring, error) {
	k := &Keyring{byID: map[string]key{}}
	for i, raw := range append([][]byte{primary}, old...) {
		if len(raw) != KeySize {
			return nil, fmt.Errorf("secrets: a key is %d bytes, got %d", KeySize, len(raw))
		}
		block, err := aes.NewCipher(raw)
		if err != nil {
			return nil, err
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(raw)
		kk := key{id: hex.EncodeToString(sum[:4]), aead: aead}
		if i == 0 {
			k.primary = kk
		}
		if _, dup := k.byID[kk.id]; !dup {
			k.byID[kk.id] = kk
		}
	}
	return k, nil
}

// ParseKey reads a key written as 64 hex digits or as base64 (standard or URL, padded or
// not) of 32 bytes.
func ParseKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if b, err := hex.DecodeString(s); err == nil && len(b) == KeySize {
		return b, nil
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil && len(b) == KeySize {
			return b, nil
		}
	}
	return nil, fmt.Errorf("secrets: want a key of %d bytes as 64 hex digits or base64", KeySize)
}

// NewKey returns a random key, base64 encoded (as ParseKey reads it).
func NewKey() (string, error) {
	b := make([]byte, KeySize)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

// LoadKeyFile reads the key kept in path, creating the file (mode 0600, with a random key)
// when it does not exist. created reports whether it did.
func LoadKeyFile(path string) (k []byte, created bool, err error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		s, err := NewKey()
		if err != nil {
			return nil, false, err
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, false, fmt.Errorf("secrets: %w", err)
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, os.ErrExist) {
			return LoadKeyFile(path) // another process of this installation made it first
		}
		if err != nil {
			return nil, false, fmt.Errorf("secrets: %w", err)
		}
		_, err = f.WriteString(s + "\n")
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, false, fmt.Errorf("secrets: write %s: %w", path, err)
		}
		k, err := ParseKey(s)
		return k, true, err
	}
	if err != nil {
		return nil, false, fmt.Errorf("secrets: %w", err)
	}
	k, err = ParseKey(string(b))
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", path, err)
	}
	return k, false, nil
}

// IsSealed reports whether s is a sealed value (else a legacy plain one, or empty).
func IsSealed(s string) bool { return strings.HasPrefix(s, Prefix) }

// Seal encrypts plain for the column named purpose. The empty string stays empty (no
// secret).
func (k *Keyring) Seal(plain, purpose string) (string, error) {
	if plain == "" {
		return "", nil
	}
	nonce := make([]byte, k.primary.aead.NonceSize(), k.primary.aead.NonceSize()+len(plain)+k.primary.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	out := k.primary.aead.Seal(nonce, nonce, []byte(plain), []byte(purpose))
	return Prefix + k.primary.id + ":" + base64.RawURLEncoding.EncodeToString(out), nil
}

// Open decrypts a value Seal made for purpose, with whichever key of the keyring sealed
// it. A value that is not sealed (no Prefix) is returned as it is: a legacy plain value.
func (k *Keyring) Open(stored, purpose string) (string, error) {
	rest, ok := strings.CutPrefix(stored, Prefix)
	if !ok {
		return stored, nil
	}
	id, enc, ok := strings.Cut(rest, ":")
	if !ok {
		return "", errors.New("secrets: malformed sealed value")
	}
	kk, ok := k.byID[id]
	if !ok {
		return "", fmt.Errorf("%w (key id %s)", ErrNoKey, id)
	}
	b, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil || len(b) < kk.aead.NonceSize() {
		return "", errors.New("secrets: malformed sealed value")
	}
	plain, err := kk.aead.Open(nil, b[:kk.aead.NonceSize()], b[kk.aead.NonceSize():], []byte(purpose))
	if err != nil {
		return "", fmt.Errorf("secrets: value does not open under key %s for %s: %w", id, purpose, err)
	}
	return string(plain), nil
}

// Current reports whether stored is sealed under the primary key (a rotation re-seals
// the others).
func (k *Keyring) Current(stored string) bool {
	return strings.HasPrefix(stored, Prefix+k.primary.id+":")
}
