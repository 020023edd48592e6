package identity

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
	"testing"

	"github.com/virtflow/virtflow/ent/apitoken"
)

var tokenFormat = regexp.MustCompile(`^vf_[A-Za-z0-9_-]{43}$`)

func TestNewToken(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range []apitoken.Kind{apitoken.KindApi, apitoken.KindSession, apitoken.KindAgent} {
		for range 50 {
			plain, hash, prefix := NewToken(k)
			if !tokenFormat.MatchString(plain) || len(plain) != TokenLen {
				t.Fatalf("token %q does not match %s", plain, tokenFormat)
			}
			sum := sha256.Sum256([]byte(plain))
			if hash != hex.EncodeToString(sum[:]) || hash != HashToken(plain) {
				t.Fatalf("hash %q is not the hex SHA-256 of the token", hash)
			}
			if prefix != plain[:10] || !strings.HasPrefix(prefix, "vf_") {
				t.Fatalf("prefix %q, want %q", prefix, plain[:10])
			}
			if seen[plain] {
				t.Fatalf("token %q made twice", plain)
			}
			seen[plain] = true
		}
	}
}

func TestHashTokenKnownValue(t *testing.T) {
	// echo -n vf_test | sha256sum
	const want = "5b448cb7946c970d7f5547cf914ef2ff7632528a5ec587b5cb13c539889ac7fb"
	if got := HashToken("vf_test"); got != want {
		t.Fatalf("HashToken = %s, want %s", got, want)
	}
}
