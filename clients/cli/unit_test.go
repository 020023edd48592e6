package cli

import (
	"bytes"
	"context"
	"os/exec"
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

// TestYAMLIntegers: -o yaml prints whole numbers as integers, as -o json does.
func TestYAMLIntegers(t *testing.T) {
	var out bytes.Buffer
	a := &app{output: "yaml", io: IO{Stdout: &out}}
	if err := a.show(map[string]any{"memoryMB": float64(2048), "vcpus": 4, "ratio": 1.5, "id": "4294967301"}, nil); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"memoryMB: 2048\n", "vcpus: 4\n", "ratio: 1.5\n", `id: "4294967301"`} {
		if !strings.Contains(got, want) {
			t.Errorf("yaml output lacks %q:\n%s", want, got)
		}
	}
}

// TestVersionAndCompletion: --version prints the build, completion scripts name every
// command for each shell, and an unknown shell is a usage error.
func TestVersionAndCompletion(t *testing.T) {
	run := func(args ...string) (string, int) {
		var out, errb bytes.Buffer
		code := Run(context.Background(), args, IO{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }})
		return out.String() + errb.String(), code
	}
	if out, code := run("--version"); code != 0 || !strings.HasPrefix(out, "virtflow ") {
		t.Errorf("--version: %d %q", code, out)
	}
	for _, sh := range []string{"bash", "zsh", "fish"} {
		out, code := run("completion", sh)
		if code != 0 {
			t.Fatalf("completion %s: %d %s", sh, code, out)
		}
		for name := range commands() {
			if !strings.Contains(out, name) {
				t.Errorf("completion %s lacks %s", sh, name)
			}
		}
		if sh == "bash" {
			if b, err := exec.Command("bash", "-n", "-c", out).CombinedOutput(); err != nil {
				t.Errorf("bash -n on the bash completion: %v %s", err, b)
			}
		}
	}
	if _, code := run("completion", "tcsh"); code != 2 {
		t.Errorf("completion tcsh: exit %d, want 2", code)
	}
}

func TestIsID(t *testing.T) {
	for s, want := range map[string]bool{"4294967301": true, "acme": false, "s1.small": false, "12a": false, "": false} {
		if isID(s) != want {
			t.Errorf("isID(%q) = %v", s, !want)
		}
	}
}
