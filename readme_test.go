package virtflow_test

// README examples that run.
//
// Marker convention. In README.md, an HTML comment on the line right before a fenced block
// says what the test does with it:
//
//	<!-- runnable -->              the block runs as written against a fresh `server --demo`
//	<!-- runnable: apply -->       (hcl only) terraform plan, then apply and destroy
//	<!-- not runnable: REASON -->  the block is left out, for the reason given
//
// Every fenced block that shows how to use VirtFlow must carry one of these markers
// (TestReadmeExamplesMarked fails otherwise): a block whose info string is graphql, sh or
// hcl, and any block whose text runs curl, virtflow, terraform or ansible. Other blocks
// (diagrams, YAML excerpts, make targets) need none. So a new README section's examples run
// in CI as soon as they are marked runnable, and one that cannot run says why.
//
// How a runnable block runs (TestReadmeExamplesRun, in README order, on one demo server, so
// a later example may use what an earlier one made):
//   - graphql: each operation (operations are separated by a blank line) is sent to /query
//     with the admin token; any error fails.
//   - sh, or no info string: `bash -e -o pipefail` in a scratch directory, with the CLI
//     (virtflow) built from this checkout first on PATH, and these variables set: TOKEN,
//     VIRTFLOW_TOKEN and VIRTFLOW_ADMIN_TOKEN (the admin's token), VIRTFLOW_ENDPOINT (the
//     server), TENANT (acme), REGION (tokyo1), FLAVOR (s1.small), IMAGE (ubuntu-24.04), VM
//     (acme-web-01) and USER_ID (the user alice), each that object's id. localhost:8080 and 127.0.0.1:8080 in the block
//     are replaced by the test server's address.
//   - hcl: main.tf of its own directory (the provider block is added when the block has
//     none), the provider built from this checkout loaded through dev_overrides, then
//     terraform plan (and apply, destroy for "runnable: apply").
//
// Nothing leaves the machine: a runnable block may name no URL but the local server's
// (TestReadmeExamplesStayLocal), must not run ansible's modules (which open SSH to the VMs'
// addresses; the inventory's --list is what runs), and HTTP clients that honor a proxy get
// one that refuses everything but loopback.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// example is one fenced block of README.md.
type example struct {
	line   int    // 1-based line of the opening fence
	info   string // the fence's info string: graphql, sh, hcl or ""
	marker string // "runnable", "runnable: apply", "not runnable: …" or ""
	body   string
}

var markerRE = regexp.MustCompile(`^<!--\s*((?:not )?runnable(?::.*?)?)\s*-->$`)

// readmeExamples parses README.md's fenced blocks and their markers.
func readmeExamples(t *testing.T) []example {
	t.Helper()
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	var out []example
	for i := 0; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(l, "```") {
			continue
		}
		ex := example{line: i + 1, info: strings.TrimSpace(strings.TrimPrefix(l, "```"))}
		for j := i - 1; j >= 0; j-- { // the marker: the nearest non-blank line above
			if p := strings.TrimSpace(lines[j]); p != "" {
				if m := markerRE.FindStringSubmatch(p); m != nil {
					ex.marker = strings.TrimSpace(m[1])
				}
				break
			}
		}
		var body []string
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			body = append(body, lines[i])
		}
		ex.body = strings.Join(body, "\n")
		out = append(out, ex)
	}
	return out
}

var usesTool = regexp.MustCompile(`(?m)(^|[\s;|&(])(curl|virtflow|terraform|ansible|ansible-inventory)\s`)

// isExample reports whether a block shows how to use VirtFlow (and so needs a marker).
func (e example) isExample() bool {
	switch e.info {
	case "graphql", "sh", "hcl":
		return true
	}
	return usesTool.MatchString(e.body)
}

func (e example) runnable() bool { return strings.HasPrefix(e.marker, "runnable") }

// TestReadmeExamplesMarked: every example says whether it runs.
func TestReadmeExamplesMarked(t *testing.T) {
	n := 0
	for _, e := range readmeExamples(t) {
		if !e.isExample() {
			continue
		}
		n++
		switch {
		case e.marker == "":
			t.Errorf("README.md:%d: an example without a marker: put <!-- runnable --> or <!-- not runnable: REASON --> on the line before it (readme_test.go)", e.line)
		case strings.HasPrefix(e.marker, "not runnable") && strings.TrimSpace(strings.TrimPrefix(e.marker, "not runnable:")) == "":
			t.Errorf("README.md:%d: <!-- not runnable --> needs a reason", e.line)
		case e.marker == "runnable: apply" && e.info != "hcl":
			t.Errorf("README.md:%d: runnable: apply is for hcl blocks", e.line)
		}
	}
	if n < 10 {
		t.Errorf("found only %d examples in README.md; the parser is broken", n)
	}
}

var urlRE = regexp.MustCompile(`https?://[^\s"'\\)]+`)

// TestReadmeExamplesStayLocal: a runnable example reaches nothing outside the machine.
func TestReadmeExamplesStayLocal(t *testing.T) {
	for _, e := range readmeExamples(t) {
		if !e.runnable() {
			continue
		}
		for _, raw := range urlRE.FindAllString(e.body, -1) {
			u, err := url.Parse(raw)
			if err != nil || !isLoopback(u.Hostname()) {
				t.Errorf("README.md:%d: runnable example names %s, outside this machine", e.line, raw)
			}
		}
		if regexp.MustCompile(`(?m)(^|[\s;|&])ansible\s`).MatchString(e.body) {
			t.Errorf("README.md:%d: runnable example runs ansible modules (SSH to the VMs); use ansible-inventory --list", e.line)
		}
	}
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// demoServer is a `server --demo` process the test started.
type demoServer struct {
	addr, token string
	bin         string // directory of the built binaries
}

const readmeAdminToken = "vf_readme-test-admin-token-0123456789"

// buildBinaries builds the commands the examples use into a temporary directory.
func buildBinaries(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command("go", "build", "-o", dir+string(filepath.Separator),
		"./cmd/server", "./cmd/virtflow", "./cmd/terraform-provider-virtflow")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return dir
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// startDemo runs the built server with --demo on its own data directory (embedded database
// and Redis) and waits until the demo's VMs run.
func startDemo(t *testing.T, bin string) *demoServer {
	t.Helper()
	s := &demoServer{addr: freeAddr(t), token: readmeAdminToken, bin: bin}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "server"), "--demo", "--addr", s.addr, "--data-dir", t.TempDir())
	cmd.Env = append(cleanEnv(), "VIRTFLOW_ADMIN_TOKEN="+s.token)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 20 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	deadline := time.Now().Add(4 * time.Minute)
	for {
		var r struct {
			VirtualMachines struct{ TotalCount int }
		}
		err := s.gql(`{ virtualMachines(where: {status: ACTIVE}) { totalCount } }`, nil, &r)
		if err == nil && r.VirtualMachines.TotalCount > 0 {
			return s
		}
		if time.Now().After(deadline) || cmd.ProcessState != nil {
			t.Fatalf("demo server not running with active VMs after 4 minutes (%v)\nlog:\n%s", err, log.String())
		}
		time.Sleep(time.Second)
	}
}

// cleanEnv is the test's environment without what would point a process elsewhere.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "VIRTFLOW_") || k == "DATABASE_URL" || k == "REDIS_URL" || strings.HasSuffix(strings.ToLower(k), "_proxy") {
			continue
		}
		env = append(env, kv)
	}
	// HTTP clients that honor a proxy (curl, Go's) send everything but loopback to a port
	// that refuses: an example reaching out fails rather than leaves the machine.
	return append(env, "http_proxy=http://127.0.0.1:9", "https_proxy=http://127.0.0.1:9",
		"HTTP_PROXY=http://127.0.0.1:9", "HTTPS_PROXY=http://127.0.0.1:9", "no_proxy=127.0.0.1,localhost", "NO_PROXY=127.0.0.1,localhost")
}

// gql sends one operation as the admin; GraphQL errors are an error.
func (s *demoServer) gql(query string, vars map[string]any, out any) error {
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, _ := http.NewRequest(http.MethodPost, "http://"+s.addr+"/query", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+s.token)
	resp, err := (&http.Client{Timeout: time.Minute}).Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var r struct {
		Data   json.RawMessage
		Errors []any
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return fmt.Errorf("HTTP %d: %w", resp.StatusCode, err)
	}
	if len(r.Errors) > 0 {
		b, _ := json.Marshal(r.Errors)
		return fmt.Errorf("%s", b)
	}
	if out != nil {
		return json.Unmarshal(r.Data, out)
	}
	return nil
}

// id finds the id of the object of a list query named name.
func (s *demoServer) id(t *testing.T, list, name string) string {
	t.Helper()
	var r map[string]struct {
		Edges []struct{ Node struct{ ID string } }
	}
	if err := s.gql(fmt.Sprintf(`query($n: String) { l: %s(where: {name: $n}) { edges { node { id } } } }`, list), map[string]any{"n": name}, &r); err != nil {
		t.Fatalf("look up %s %q: %v", list, name, err)
	}
	if len(r["l"].Edges) != 1 {
		t.Fatalf("%s named %q: %d found", list, name, len(r["l"].Edges))
	}
	return r["l"].Edges[0].Node.ID
}

// userID finds a user's id by username.
func (s *demoServer) userID(t *testing.T, username string) string {
	t.Helper()
	var r struct {
		Users struct {
			Edges []struct{ Node struct{ ID string } }
		}
	}
	if err := s.gql(`query($n: String) { users(where: {username: $n}) { edges { node { id } } } }`, map[string]any{"n": username}, &r); err != nil || len(r.Users.Edges) != 1 {
		t.Fatalf("user %s: %v %+v", username, err, r)
	}
	return r.Users.Edges[0].Node.ID
}

// TestReadmeExamplesRun runs every runnable README example against a fresh demo server.
func TestReadmeExamplesRun(t *testing.T) {
	examples := readmeExamples(t)
	var runnable []example
	for _, e := range examples {
		if e.runnable() {
			runnable = append(runnable, e)
		}
	}
	if len(runnable) < 5 {
		t.Fatalf("README.md marks %d examples runnable; the first example query (Using the API), the CLI, Terraform and inventory examples must be among them", len(runnable))
	}
	if testing.Short() {
		t.Skip("-short: builds and starts a demo server")
	}
	bin := buildBinaries(t)
	s := startDemo(t, bin)
	home := t.TempDir()
	env := append(cleanEnv(),
		"PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"TOKEN="+s.token, "VIRTFLOW_TOKEN="+s.token, "VIRTFLOW_ADMIN_TOKEN="+s.token,
		"VIRTFLOW_ENDPOINT=http://"+s.addr,
		"TENANT="+s.id(t, "tenants", "acme"), "REGION="+s.id(t, "regions", "tokyo1"),
		"FLAVOR="+s.id(t, "flavors", "s1.small"), "IMAGE="+s.id(t, "images", "ubuntu-24.04"),
		"VM="+s.id(t, "virtualMachines", "acme-web-01"), "USER_ID="+s.userID(t, "alice"))
	local := strings.NewReplacer("localhost:8080", s.addr, "127.0.0.1:8080", s.addr)
	tf := newTerraform(t, bin, env)

	for _, e := range runnable {
		name := fmt.Sprintf("README.md:%d", e.line)
		began := time.Now()
		failed := false
		errorf := func(format string, args ...any) { failed = true; t.Errorf(format, args...) }
		switch e.info {
		case "graphql":
			for _, op := range strings.Split(e.body, "\n\n") {
				if err := s.gql(op, nil, nil); err != nil {
					errorf("%s: %v\n%s", name, err, op)
				}
			}
		case "hcl":
			if tf == nil {
				t.Logf("%s: skipped: terraform CLI not on PATH", name)
				continue
			}
			failed = !tf.run(t, name, e)
		case "sh", "":
			if err := runShell(e.body, local, env); err != nil {
				errorf("%s: %v\n%s", name, err, e.body)
			}
		default:
			errorf("%s: a runnable block of unknown kind %q", name, e.info)
		}
		if !failed {
			t.Logf("%s (%s): ran in %v", name, map[string]string{"": "sh"}[e.info]+e.info, time.Since(began).Round(time.Millisecond))
		}
	}
}

// runShell runs a block with bash in a scratch directory.
func runShell(body string, local *strings.Replacer, env []string) error {
	for _, tool := range []string{"jq", "ansible-inventory"} {
		if regexp.MustCompile(`(^|[\s|;(])` + tool + `\s`).MatchString(body) {
			if _, err := exec.LookPath(tool); err != nil {
				return fmt.Errorf("the example needs %s, which is not installed", tool)
			}
		}
	}
	dir, err := os.MkdirTemp("", "readme-sh-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-e", "-o", "pipefail", "-c", local.Replace(body))
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%v\n%s", err, out)
	}
	// curl exits 0 on a GraphQL error: an answer with errors fails the example too.
	if bytes.Contains(out, []byte(`"errors":`)) {
		return fmt.Errorf("an answer has GraphQL errors:\n%s", out)
	}
	return nil
}

// terraform runs hcl examples with the provider built from this checkout.
type terraform struct {
	bin, rc string
	env     []string
}

func newTerraform(t *testing.T, bin string, env []string) *terraform {
	t.Helper()
	tfBin, err := exec.LookPath("terraform")
	if err != nil {
		return nil
	}
	rc := filepath.Join(t.TempDir(), "terraform.rc")
	cfg := fmt.Sprintf("provider_installation {\n  dev_overrides {\n    \"virtflow/virtflow\" = %q\n  }\n  direct {}\n}\n", bin)
	if err := os.WriteFile(rc, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return &terraform{bin: tfBin, rc: rc, env: append(env, "TF_CLI_CONFIG_FILE="+rc, "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1")}
}

const tfHeader = `terraform {
  required_providers {
    virtflow = { source = "virtflow/virtflow" }
  }
}

provider "virtflow" {}
`

func (tf *terraform) run(t *testing.T, name string, e example) bool {
	t.Helper()
	dir := t.TempDir()
	config := e.body
	if !strings.Contains(config, "required_providers") {
		config = tfHeader + config
	}
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	steps := [][]string{{"plan", "-input=false", "-no-color"}}
	if e.marker == "runnable: apply" {
		steps = append(steps, []string{"apply", "-input=false", "-no-color", "-auto-approve"},
			[]string{"plan", "-input=false", "-no-color", "-detailed-exitcode"},
			[]string{"destroy", "-input=false", "-no-color", "-auto-approve"})
	}
	for _, args := range steps {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		cmd := exec.CommandContext(ctx, tf.bin, args...)
		cmd.Dir, cmd.Env = dir, append(tf.env, "TF_DATA_DIR="+filepath.Join(dir, ".terraform"))
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			t.Errorf("%s: terraform %s: %v\n%s", name, args[0], err, out)
			return false
		}
	}
	return true
}
