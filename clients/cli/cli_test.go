package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/virtflow/virtflow/clients/apiclient"
	"github.com/virtflow/virtflow/clients/cli"
	"github.com/virtflow/virtflow/internal/testkit/stacktest"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

// syncBuffer is an output safe to read while a command writes to it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// runner runs the tool in-process with its own configuration directory and environment.
type runner struct {
	t   *testing.T
	env map[string]string
}

func (r runner) run(ctx context.Context, stdin string, args ...string) (stdout, stderr string, code int) {
	var out, errb syncBuffer
	code = cli.Run(ctx, args, cli.IO{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return r.env[k] }})
	return out.String(), errb.String(), code
}

func (r runner) must(args ...string) string {
	r.t.Helper()
	out, errs, code := r.run(context.Background(), "", args...)
	if code != 0 {
		r.t.Fatalf("virtflow %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, out, errs)
	}
	return out
}

// TestCLI runs the tool against a real server and fleet: login stores the endpoint and token
// in a 0600 file; types, list, get and describe work generically; a VM is created, watched,
// stopped, started, rebooted and deleted; a node is cordoned, uncordoned and drained; errors
// exit non-zero with the API's code.
func TestCLI(t *testing.T) {
	st := stacktest.Start(t, testdb.DSN(t), stacktest.Spec{})
	cfgHome := t.TempDir()
	r := runner{t: t, env: map[string]string{"XDG_CONFIG_HOME": cfgHome}}
	ctx := context.Background()

	out := r.must("login", "--endpoint", st.URL, "--token", st.AdminToken)
	if !strings.Contains(out, "signed in") {
		t.Errorf("login said %q", out)
	}
	cfgFile := filepath.Join(cfgHome, "virtflow", "config.json")
	fi, err := os.Stat(cfgFile)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("%s has mode %v, want 0600", cfgFile, fi.Mode().Perm())
	}
	if _, errs, code := r.run(ctx, "", "login", "--endpoint", st.URL, "--token", "vf_wrong"); code != 1 || !strings.Contains(errs, "UNAUTHENTICATED") {
		t.Errorf("login with a bad token: exit %d, %q; want 1 and UNAUTHENTICATED", code, errs)
	}

	if out := r.must("types"); !strings.Contains(out, "VirtualMachine") || !strings.Contains(out, "virtualMachines") {
		t.Errorf("types does not list VirtualMachine:\n%s", out)
	}
	if out := r.must("list", "hosts"); !strings.HasPrefix(out, "ID") || strings.Count(out, "\n") < 5 {
		t.Errorf("list hosts (table):\n%s", out)
	}

	// Whole-machine flavors: created HOST, changed to NUMA_NODE; a bad value is a usage error.
	var fl struct{ ID, Exclusive string }
	if err := json.Unmarshal([]byte(r.must("flavor", "create", "--name", "cli-metal", "--vcpus", "2", "--memory-mb", "1024",
		"--exclusive", "HOST", "-o", "json")), &fl); err != nil || fl.Exclusive != "HOST" {
		t.Fatalf("flavor create --exclusive HOST: %+v %v", fl, err)
	}
	if err := json.Unmarshal([]byte(r.must("flavor", "set", fl.ID, "--exclusive", "NUMA_NODE", "-o", "json")), &fl); err != nil || fl.Exclusive != "NUMA_NODE" {
		t.Fatalf("flavor set --exclusive NUMA_NODE: %+v %v", fl, err)
	}
	if _, _, code := r.run(ctx, "", "flavor", "set", fl.ID, "--exclusive", "SOCKET"); code != 2 {
		t.Errorf("flavor set --exclusive SOCKET: exit %d, want 2", code)
	}

	// A network for the VM, so that it has an address for the inventory.
	c, err := apiclient.New(st.URL, st.AdminToken)
	if err != nil {
		t.Fatal(err)
	}
	tenant := fmt.Sprint(st.Site.Tenant)
	net, err := apiclient.CreateNetwork(ctx, c, apiclient.CreateNetworkInput{Name: "cli-net", Cidr: "10.88.0.0/24", TenantID: &tenant})
	if err != nil {
		t.Fatal(err)
	}

	var vm struct{ ID, Name, Status string }
	out = r.must("vm", "create", "--name", "cli-vm", "--tenant", tenant, "--region", fmt.Sprint(st.Site.Region),
		"--flavor", fmt.Sprint(st.Flavor.ID), "--network", net.CreateNetwork.Id, "--wait", "-o", "json")
	if err := json.Unmarshal([]byte(out), &vm); err != nil {
		t.Fatalf("vm create -o json: %v\n%s", err, out)
	}
	if vm.Status != "ACTIVE" {
		t.Fatalf("vm create --wait: status %s", vm.Status)
	}

	// Metering: a price, the VM's usage since it was placed, the month's draft invoice.
	if out := r.must("prices", "add", "--kind", "flavor", "--key", st.Flavor.Name, "--amount", "1.5", "--from", "2026-01-01T00:00:00Z"); !strings.Contains(out, "1.500000") {
		t.Errorf("prices add:\n%s", out)
	}
	if out := r.must("prices", "list"); !strings.Contains(out, st.Flavor.Name) {
		t.Errorf("prices list:\n%s", out)
	}
	// Usage counts whole seconds up to now: the VM shows once its first second has passed
	// (the test may get here within the second it was placed in).
	var usage string
	for deadline := time.Now().Add(10 * time.Second); ; {
		usage = r.must("usage", "--tenant", tenant)
		if strings.Contains(usage, "cli-vm") || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if !strings.Contains(usage, "cli-vm") || !strings.Contains(usage, "VIRTUAL_MACHINE") || !strings.Contains(usage, "total ") {
		t.Errorf("usage:\n%s", usage)
	}
	if out := r.must("invoices", "--tenant", tenant); !strings.Contains(out, "DRAFT") {
		t.Errorf("invoices:\n%s", out)
	}

	var listed []map[string]any
	if err := json.Unmarshal([]byte(r.must("list", "vms", "-o", "json", "--where", `{"name":"cli-vm"}`)), &listed); err != nil {
		t.Fatal(err)
	}
	if len(listed) != 1 || listed[0]["id"] != vm.ID || listed[0]["status"] != "ACTIVE" {
		t.Errorf("list vms --where name: %v", listed)
	}
	var got map[string]any
	if err := yaml.Unmarshal([]byte(r.must("get", "virtual-machines", vm.ID, "-o", "yaml")), &got); err != nil {
		t.Fatal(err)
	}
	if got["name"] != "cli-vm" {
		t.Errorf("get vm -o yaml: %v", got)
	}
	if err := yaml.Unmarshal([]byte(r.must("describe", "vm", vm.ID)), &got); err != nil {
		t.Fatal(err)
	}
	if ten, _ := got["tenant"].(map[string]any); ten == nil || fmt.Sprint(ten["id"]) != tenant {
		t.Errorf("describe vm: tenant edge %v, want id %s", got["tenant"], tenant)
	}

	// watch sees the stop.
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var wout, werr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- cli.Run(wctx, []string{"watch", "vms", "--id", vm.ID, "--count", "1"},
			cli.IO{Stdout: &wout, Stderr: &werr, Getenv: func(k string) string { return r.env[k] }})
	}()
	for deadline := time.Now().Add(time.Minute); !strings.Contains(werr.String(), "watching") && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if out := r.must("vm", "stop", vm.ID, "--wait"); !strings.Contains(out, "STOPPED") {
		t.Errorf("vm stop --wait:\n%s", out)
	}
	if code := <-done; code != 0 || !strings.Contains(wout.String(), vm.ID) {
		t.Errorf("watch: exit %d, stdout %q, stderr %q", code, wout.String(), werr.String())
	}
	if out := r.must("vm", "start", vm.ID, "--wait"); !strings.Contains(out, "ACTIVE") {
		t.Errorf("vm start --wait:\n%s", out)
	}
	if out := r.must("vm", "reboot", vm.ID, "--wait"); !strings.Contains(out, "ACTIVE") {
		t.Errorf("vm reboot --wait:\n%s", out)
	}

	t.Run("inventory", func(t *testing.T) { testInventory(t, r, st, vm.ID) })

	// Nodes: cordon, uncordon, drain an empty one.
	node := fmt.Sprint(st.Site.Nodes[len(st.Site.Nodes)-1].ID)
	if out := r.must("node", "cordon", node, "--reason", "cli test", "-o", "json"); !strings.Contains(out, `"schedulable": false`) {
		t.Errorf("node cordon:\n%s", out)
	}
	if out := r.must("node", "uncordon", node, "-o", "json"); !strings.Contains(out, `"schedulable": true`) {
		t.Errorf("node uncordon:\n%s", out)
	}
	if out := r.must("node", "drain", node); !strings.Contains(out, "moving") {
		t.Errorf("node drain:\n%s", out)
	}
	r.must("node", "uncordon", node)
	if out := r.must("node", "reenroll", node); !strings.Contains(out, "join token") || !strings.Contains(out, "vf_") {
		t.Errorf("node reenroll:\n%s", out)
	}

	// Errors: a missing object, an unknown type, a bad output.
	if _, errs, code := r.run(ctx, "", "vm", "start", "999999999"); code != 1 || !strings.Contains(errs, "NOT_FOUND") {
		t.Errorf("vm start of a missing VM: exit %d, %q", code, errs)
	}
	if _, errs, code := r.run(ctx, "", "list", "spaceships"); code != 2 || !strings.Contains(errs, "unknown type") {
		t.Errorf("list of an unknown type: exit %d, %q", code, errs)
	}
	if _, _, code := r.run(ctx, "", "list", "vms", "-o", "xml"); code != 2 {
		t.Errorf("-o xml: exit %d, want 2", code)
	}

	if out := r.must("vm", "delete", vm.ID, "--wait"); !strings.Contains(out, "deleted") {
		t.Errorf("vm delete --wait:\n%s", out)
	}
	if out := r.must("list", "vms", "-o", "json", "--where", `{"name":"cli-vm"}`); strings.TrimSpace(out) != "[]" {
		t.Errorf("after delete: %s", out)
	}
}

// testInventory checks the inventory JSON directly and through Debian's ansible-inventory
// (skipped, saying so, when it is not installed).
func testInventory(t *testing.T, r runner, st *stacktest.Stack, vmID string) {
	var inv map[string]json.RawMessage
	if err := json.Unmarshal([]byte(r.must("inventory", "--list")), &inv); err != nil {
		t.Fatal(err)
	}
	var meta struct {
		Hostvars map[string]map[string]any `json:"hostvars"`
	}
	if err := json.Unmarshal(inv["_meta"], &meta); err != nil {
		t.Fatal(err)
	}
	hv := meta.Hostvars["cli-vm"]
	if hv == nil || hv["virtflow_id"] != vmID || !strings.HasPrefix(fmt.Sprint(hv["ansible_host"]), "10.88.0.") {
		t.Fatalf("hostvars of cli-vm: %v", hv)
	}
	groups := []string{}
	for g := range inv {
		groups = append(groups, g)
	}
	for _, prefix := range []string{"tenant_", "region_", "cluster_"} {
		found := false
		for _, g := range groups {
			if strings.HasPrefix(g, prefix) && strings.Contains(string(inv[g]), `"cli-vm"`) {
				found = true
			}
		}
		if !found {
			t.Errorf("no %s… group holds cli-vm; groups %v", prefix, groups)
		}
	}
	var one map[string]any
	if err := json.Unmarshal([]byte(r.must("inventory", "--host", "cli-vm")), &one); err != nil || one["virtflow_id"] != vmID {
		t.Errorf("inventory --host cli-vm: %v %v", one, err)
	}

	ai, err := exec.LookPath("ansible-inventory")
	if err != nil {
		t.Skip("ansible-inventory not installed (apt-get install ansible-core; .ci/run installs it): the inventory is checked without Ansible only")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "virtflow")
	_, file, _, _ := runtime.Caller(0)
	build := exec.Command("go", "build", "-o", bin, "./cmd/virtflow")
	build.Dir = filepath.Join(filepath.Dir(file), "..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build virtflow: %v\n%s", err, out)
	}
	script := filepath.Join(dir, "virtflow-inventory")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nexec "+bin+" inventory \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(ai, "-i", script, "--list")
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+r.env["XDG_CONFIG_HOME"], "ANSIBLE_LOCAL_TEMP="+dir, "ANSIBLE_HOME="+dir,
		"ANSIBLE_INVENTORY_UNPARSED_FAILED=True")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ansible-inventory --list: %v\n%s", err, stderr.String())
	}
	var parsed struct {
		Meta struct {
			Hostvars map[string]map[string]any `json:"hostvars"`
		} `json:"_meta"`
		All struct {
			Children []string `json:"children"`
		} `json:"all"`
	}
	if err := json.Unmarshal(out, &parsed); err != nil {
		t.Fatalf("ansible-inventory output: %v\n%s", err, out)
	}
	if hv := parsed.Meta.Hostvars["cli-vm"]; hv == nil || hv["virtflow_id"] != vmID || hv["ansible_host"] != meta.Hostvars["cli-vm"]["ansible_host"] {
		t.Errorf("ansible-inventory hostvars of cli-vm: %v", hv)
	}
	tenantGroup := ""
	for _, g := range parsed.All.Children {
		if strings.HasPrefix(g, "tenant_") {
			tenantGroup = g
		}
	}
	if tenantGroup == "" {
		t.Errorf("ansible-inventory: no tenant group under all: %v", parsed.All.Children)
	}
	cmd = exec.Command(ai, "-i", script, "--host", "cli-vm")
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+r.env["XDG_CONFIG_HOME"], "ANSIBLE_LOCAL_TEMP="+dir, "ANSIBLE_HOME="+dir)
	if out, err := cmd.Output(); err != nil || !strings.Contains(string(out), vmID) {
		t.Errorf("ansible-inventory --host cli-vm: %v\n%s", err, out)
	}
}
