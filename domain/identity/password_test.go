package identity

import (
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/virtflow/virtflow/domain/apierr"
)

func TestHashPassword(t *testing.T) {
	for _, pw := range []string{"", "short", "elevenchars", strings.Repeat("x", 73), strings.Repeat("é", 37)} {
		if _, err := HashPassword(pw); err == nil {
			t.Errorf("HashPassword(%d bytes) accepted", len(pw))
		} else {
			wantCode(t, err, apierr.CodeValidation, "password")
		}
	}
	for _, pw := range []string{"twelve chars", strings.Repeat("x", 72), "ünïcödé pässwörd"} {
		h, err := HashPassword(pw)
		if err != nil {
			t.Fatalf("HashPassword(%q): %v", pw, err)
		}
		if cost, err := bcrypt.Cost([]byte(h)); err != nil || cost != 12 {
			t.Fatalf("cost = %d, %v; want 12", cost, err)
		}
		if !CheckPassword(h, pw) {
			t.Fatalf("CheckPassword(hash of %q, same) = false", pw)
		}
		if CheckPassword(h, pw+"x") || CheckPassword(h, "") {
			t.Fatalf("CheckPassword accepts a wrong password")
		}
	}
}

func TestCheckPasswordNoHash(t *testing.T) {
	const pw = "correct horse battery"
	h, err := HashPassword(pw)
	if err != nil {
		t.Fatal(err)
	}
	// bcrypt truncates at 72 bytes: a longer password with the same start must not pass.
	long := strings.Repeat("y", 72)
	hl, err := HashPassword(long)
	if err != nil {
		t.Fatal(err)
	}
	if CheckPassword(hl, long+"extra") {
		t.Fatal("a password longer than 72 bytes matched its first 72 bytes")
	}

	timeOf := func(hash string) time.Duration {
		start := time.Now()
		for range 3 {
			CheckPassword(hash, pw+"?")
		}
		return time.Since(start)
	}
	genuine := timeOf(h)
	for _, hash := range []string{"", "not a bcrypt hash"} {
		if CheckPassword(hash, pw) {
			t.Fatalf("CheckPassword(%q, ...) = true", hash)
		}
		// No user (no hash) must cost about as much as a wrong password.
		if d := timeOf(hash); d < genuine/2 {
			t.Errorf("checking against no hash took %v, a real hash %v: unknown users are distinguishable", d, genuine)
		}
	}
}
