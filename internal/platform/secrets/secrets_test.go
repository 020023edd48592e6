package secrets_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/virtflow/virtflow/internal/platform/secrets"
)

func mustKey(t *testing.T) []byte {
	t.Helper()
	s, err := secrets.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	k, err := secrets.ParseKey(s)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestSealOpenRotate: a sealed value hides the secret, opens for its purpose only, opens
// after a rotation through the old key, and a plain legacy value reads as itself.
func TestSealOpenRotate(t *testing.T) {
	k1, k2 := mustKey(t), mustKey(t)
	ring, err := secrets.NewKeyring(k1)
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := ring.Seal("s3cret-hmac", "event_rules.hook_secret")
	if err != nil {
		t.Fatal(err)
	}
	if !secrets.IsSealed(sealed) || strings.Contains(sealed, "s3cret") {
		t.Fatalf("sealed value %q", sealed)
	}
	again, _ := ring.Seal("s3cret-hmac", "event_rules.hook_secret")
	if again == sealed {
		t.Fatal("two seals of one secret are equal: the nonce is not random")
	}
	if got, err := ring.Open(sealed, "event_rules.hook_secret"); err != nil || got != "s3cret-hmac" {
		t.Fatalf("Open: %q, %v", got, err)
	}
	if _, err := ring.Open(sealed, "maintainer_groups.webhook_secret"); err == nil {
		t.Fatal("a value sealed for one column opened for another")
	}
	if got, err := ring.Open("legacy-plain", "x"); err != nil || got != "legacy-plain" {
		t.Fatalf("legacy plain value: %q, %v", got, err)
	}
	rotated, err := secrets.NewKeyring(k2, k1)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := rotated.Open(sealed, "event_rules.hook_secret"); err != nil || got != "s3cret-hmac" || rotated.Current(sealed) {
		t.Fatalf("after rotation: %q, %v, current %v", got, err, rotated.Current(sealed))
	}
	other, _ := secrets.NewKeyring(k2)
	if _, err := other.Open(sealed, "event_rules.hook_secret"); !errors.Is(err, secrets.ErrNoKey) {
		t.Fatalf("open without the key: %v, want ErrNoKey", err)
	}
	if empty, _ := ring.Seal("", "x"); empty != "" {
		t.Fatalf("the empty secret sealed to %q", empty)
	}
}

// TestParseKey: hex and base64 of 32 bytes, nothing else.
func TestParseKey(t *testing.T) {
	for _, s := range []string{strings.Repeat("ab", 32), "q83vq83vq83vq83vq83vq83vq83vq83vq83vq83vq80=", "q83vq83vq83vq83vq83vq83vq83vq83vq83vq83vq80"} {
		if _, err := secrets.ParseKey(s); err != nil {
			t.Errorf("ParseKey(%q): %v", s, err)
		}
	}
	for _, s := range []string{"", "short", strings.Repeat("ab", 31)} {
		if _, err := secrets.ParseKey(s); err == nil {
			t.Errorf("ParseKey(%q) accepted", s)
		}
	}
}

// TestLoadKeyFile: the key file is made once, 0600, and read back the same.
func TestLoadKeyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "secret.key")
	k, created, err := secrets.LoadKeyFile(path)
	if err != nil || !created {
		t.Fatalf("first load: created %v, %v", created, err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v, %v", st.Mode().Perm(), err)
	}
	k2, created, err := secrets.LoadKeyFile(path)
	if err != nil || created || string(k) != string(k2) {
		t.Fatalf("second load: created %v, same %v, %v", created, string(k) == string(k2), err)
	}
}
