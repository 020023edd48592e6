package credential_test

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/virtflow/virtflow/domain/guest/credential"
)

func TestNewIsFreshPrefixedAndHashed(t *testing.T) {
	plain, hash, err := credential.New()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(plain, credential.Prefix) || len(plain) != len(credential.Prefix)+43 {
		t.Errorf("credential %q: want %q and 43 base64url characters (256 bits)", plain, credential.Prefix)
	}
	sum := sha256.Sum256([]byte(plain))
	if want := hex.EncodeToString(sum[:]); hash != want || credential.Hash(plain) != want {
		t.Errorf("hash = %q, Hash = %q, want the SHA-256 in hex %q", hash, credential.Hash(plain), want)
	}
	again, _, err := credential.New()
	if err != nil {
		t.Fatal(err)
	}
	if again == plain {
		t.Errorf("two credentials are equal: %q", plain)
	}
}
