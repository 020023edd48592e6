package audit

import (
	"strings"
	"testing"
	"time"
)

func TestRedacted(t *testing.T) {
	in := map[string]any{
		"token":        "vf_secret",
		"apiToken":     map[string]any{"name": "ci", "prefix": "vf_abc", "tokenHash": "deadbeef"},
		"list":         []any{map[string]any{"password": "hunter2"}},
		"clientSecret": "s3",
		"user_data":    "#cloud-config\npassword: pw-marker\n",
		"edges":        map[string]any{"assignments": []any{map[string]any{"config_drive": `{"UserData":"pw-marker"}`}}},
		"UserData":     "",
		"name":         "ok",
		"warrantyEnd":  time.Time{},
		"createdAt":    time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC),
	}
	out, err := redacted(in)
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	for _, secret := range []string{"vf_secret", "deadbeef", "hunter2", "s3", "pw-marker"} {
		if strings.Contains(s, secret) {
			t.Errorf("%q survived redaction: %s", secret, s)
		}
	}
	if strings.Contains(s, "warrantyEnd") || strings.Contains(s, "0001-01-01") {
		t.Errorf("an unset time survived: %s", s)
	}
	for _, kept := range []string{`"name":"ok"`, `"prefix":"vf_abc"`, `"createdAt":"2030-01-02T03:04:05Z"`} {
		if !strings.Contains(s, kept) {
			t.Errorf("%s missing from %s", kept, s)
		}
	}
	if want := `"user_data":"` + Digest("#cloud-config\npassword: pw-marker\n") + `"`; !strings.Contains(s, want) ||
		!strings.Contains(want, "[redacted: 34 bytes, sha256:") {
		t.Errorf("user_data should read %s: %s", want, s)
	}
	if !strings.Contains(s, `"UserData":""`) {
		t.Errorf("an empty user-data should stay empty: %s", s)
	}
	if out, _ := redacted(nil); out != nil {
		t.Errorf("nil encodes to %s", out)
	}
}
