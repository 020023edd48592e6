package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

func TestGroupName(t *testing.T) {
	for in, want := range map[string]string{"acme": "tenant_acme", "ACME Corp.": "tenant_acme_corp_", "tokyo-1": "tenant_tokyo_1"} {
		if got := groupName("tenant", in); got != want {
			t.Errorf("groupName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestGlobalsAfterCommand(t *testing.T) {
	a := &app{output: "table"}
	rest, err := a.globalsAfter([]string{"vms", "-o", "json", "--first", "3", "--endpoint=http://x"})
	if err != nil {
		t.Fatal(err)
	}
	if a.output != "json" || a.endpoint != "http://x" || strings.Join(rest, " ") != "vms --first 3" {
		t.Errorf("output %q endpoint %q rest %v", a.output, a.endpoint, rest)
	}
}

// TestUsageErrors: a command line the tool cannot run exits 2 and says why, before any
// request; a command without a login says how to sign in.
func TestUsageErrors(t *testing.T) {
	env := map[string]string{"XDG_CONFIG_HOME": t.TempDir()}
	run := func(args ...string) (int, string) {
		var out, errb bytes.Buffer
		code := Run(context.Background(), args, IO{Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return env[k] }})
		return code, errb.String()
	}
	for _, args := range [][]string{{}, {"frobnicate"}, {"list"}, {"inventory"}, {"vm", "create", "--name", "x"}, {"list", "vms", "-o", "xml"}} {
		if code, _ := run(args...); code != 2 {
			t.Errorf("virtflow %v: exit %d, want 2", args, code)
		}
	}
	if code, errs := run("list", "vms"); code != 1 || !strings.Contains(errs, "virtflow login") {
		t.Errorf("list without login: exit %d, %q", code, errs)
	}
	if p, _ := configPath(func(k string) string { return env[k] }); p != filepath.Join(env["XDG_CONFIG_HOME"], "virtflow", "config.json") {
		t.Errorf("config path %s", p)
	}
}
