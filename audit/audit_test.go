package audit

import (
	"strings"
	"testing"
)

func TestRedacted(t *testing.T) {
	in := map[string]any{
		"token":        "vf_secret",
		"apiToken":     map[string]any{"name": "ci", "prefix": "vf_abc", "tokenHash": "deadbeef"},
		"list":         []any{map[string]any{"password": "hunter2"}},
		"clientSecret": "s3",
		"name":         "ok",
	}
	out, err := redacted(in)
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	for _, secret := range []string{"vf_secret", "deadbeef", "hunter2", "s3"} {
		if strings.Contains(s, secret) {
			t.Errorf("%q survived redaction: %s", secret, s)
		}
	}
	for _, kept := range []string{`"name":"ok"`, `"prefix":"vf_abc"`} {
		if !strings.Contains(s, kept) {
			t.Errorf("%s missing from %s", kept, s)
		}
	}
	if out, _ := redacted(nil); out != nil {
		t.Errorf("nil encodes to %s", out)
	}
}
