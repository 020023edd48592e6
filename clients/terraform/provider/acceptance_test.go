package provider_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"text/template"
	"time"

	"github.com/virtflow/virtflow/clients/apiclient"
	"github.com/virtflow/virtflow/internal/testkit/stacktest"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

// tf runs the real terraform CLI in a directory with the provider built from this
// repository loaded through dev_overrides (a CLI configuration in the test's temporary
// directory, TF_CLI_CONFIG_FILE), against a running stack.
type tf struct {
	t   testing.TB
	bin string
	dir string
	env []string
}

// newTF builds the provider, writes the CLI configuration and returns a runner for dir.
// The test is skipped, saying so, when terraform is not installed.
func newTF(t testing.TB, st *stacktest.Stack) *tf {
	t.Helper()
	bin, err := exec.LookPath("terraform")
	if err != nil {
		t.Skip("terraform CLI not on PATH (.ci/run builds github.com/hashicorp/terraform@v1.5.7 when missing)")
	}
	tmp := t.TempDir()
	pluginDir := filepath.Join(tmp, "plugins")
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..", "..")
	build := exec.Command("go", "build", "-o", filepath.Join(pluginDir, "terraform-provider-virtflow"), "./cmd/terraform-provider-virtflow")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the provider: %v\n%s", err, out)
	}
	rc := filepath.Join(tmp, "terraform.rc")
	cfg := fmt.Sprintf("provider_installation {\n  dev_overrides {\n    \"virtflow/virtflow\" = %q\n  }\n  direct {}\n}\n", pluginDir)
	if err := os.WriteFile(rc, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(tmp, "work")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "TF_CLI_CONFIG_FILE="+rc, "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1",
		"TF_DATA_DIR="+filepath.Join(tmp, ".terraform"), "VIRTFLOW_ENDPOINT="+st.URL, "VIRTFLOW_TOKEN="+st.AdminToken)
	return &tf{t: t, bin: bin, dir: dir, env: env}
}

// write replaces the configuration.
func (r *tf) write(config string) {
	r.t.Helper()
	if err := os.WriteFile(filepath.Join(r.dir, "main.tf"), []byte(config), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

// run runs terraform with args and returns its combined output and exit code.
func (r *tf) run(args ...string) (string, int) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.bin, args...)
	cmd.Dir, cmd.Env = r.dir, r.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return out.String(), exit.ExitCode()
	case err != nil:
		r.t.Fatalf("terraform %s: %v", strings.Join(args, " "), err)
	}
	return out.String(), 0
}

// must runs terraform and fails the test unless it exits 0.
func (r *tf) must(args ...string) string {
	r.t.Helper()
	out, code := r.run(args...)
	if code != 0 {
		r.t.Fatalf("terraform %s exited %d:\n%s", strings.Join(args, " "), code, out)
	}
	return out
}

// planClean asserts that a plan shows no change (-detailed-exitcode 0).
func (r *tf) planClean(when string) {
	r.t.Helper()
	out, code := r.run("plan", "-input=false", "-no-color", "-detailed-exitcode", "-parallelism=10")
	if code != 0 {
		r.t.Fatalf("plan %s: exit code %d, want 0 (no changes):\n%s", when, code, out)
	}
}

const header = `terraform {
  required_providers {
    virtflow = { source = "virtflow/virtflow" }
  }
}

provider "virtflow" {}
`

// fullConfig uses every resource and data source kind: 50 VMs on a network and 50 addresses
// allocated from the same prefix, in parallel.
var fullConfig = template.Must(template.New("main.tf").Parse(header + `
data "virtflow_region" "r" { name = "{{.Region}}" }
data "virtflow_flavor" "f" { name = "{{.Flavor}}" }
data "virtflow_image" "i" { name = "{{.Image}}" }

resource "virtflow_tenant" "t" {
  name         = "tf-tenant"
  display_name = "Terraform tenant"
}

resource "virtflow_quota" "q" {
  tenant_id     = virtflow_tenant.t.id
  host_group_id = "{{.HostGroup}}"
  vcpus         = 200
}

resource "virtflow_network" "n" {
  name      = "tf-net"
  cidr      = "10.77.0.0/24"
  gateway   = "10.77.0.1"
  purpose   = "VM"
  tenant_id = virtflow_tenant.t.id
}

data "virtflow_network" "n" { name = virtflow_network.n.name }

resource "virtflow_ip_address" "a" {
  count       = {{.Addresses}}
  network_id  = data.virtflow_network.n.id
  description = "tf address ${count.index}"
}

resource "virtflow_flavor" "metal" {
  name               = "tf-metal-half"
  vcpus              = 8
  memory_mb          = 32768
  exclusive          = "NUMA_NODE"
  network_mbps_limit = 1000
}

resource "virtflow_ssh_key" "k" {
  name       = "tf-key"
  public_key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGq2m1o0Ue5n0dQ5xXbX3X9iQ6v7xwO8s0Wq0CkYpT3C tf@example"
  tenant_id  = virtflow_tenant.t.id
}

resource "virtflow_virtual_machine" "vm" {
  count       = {{.VMs}}
  name        = "tf-vm-${count.index}"
  tenant_id   = virtflow_tenant.t.id
  region_id   = data.virtflow_region.r.id
  flavor_id   = data.virtflow_flavor.f.id
  network_ids = [virtflow_network.n.id]
  ssh_key_ids = [virtflow_ssh_key.k.id]
  labels      = { app = "tf" }
  timeouts    = { create = "5m", delete = "5m" }
  depends_on  = [virtflow_quota.q]
}

resource "virtflow_security_rule" "https" {
  tenant_id          = virtflow_tenant.t.id
  virtual_machine_id = virtflow_virtual_machine.vm[0].id
  direction          = "INGRESS"
  protocol           = "TCP"
  port_from          = 443
  cidr               = "10.0.0.0/8"
}

resource "virtflow_volume" "v" {
  name      = "tf-vol"
  size_gb   = 10
  tenant_id = virtflow_tenant.t.id
}

resource "virtflow_region_service" "s" {
  name       = "tf-svc"
  tenant_id  = virtflow_tenant.t.id
  region_id  = data.virtflow_region.r.id
  flavor_id  = data.virtflow_flavor.f.id
  replicas   = 2
  depends_on = [virtflow_quota.q]
}

resource "virtflow_rack" "r" {
  name     = "tf-rack"
  floor_id = "{{.Floor}}"
  row      = "T"
  position = 9
}

resource "virtflow_host" "h" {
  count    = 2
  name     = "tf-host-${count.index}"
  rack_id  = virtflow_rack.r.id
  position = 1 + count.index * 2
  height   = 2
}

resource "virtflow_port" "p" {
  count   = 2
  name    = "eth0"
  host_id = virtflow_host.h[count.index].id
}

resource "virtflow_cable" "c" {
  a_port_id = virtflow_port.p[0].id
  b_port_id = virtflow_port.p[1].id
  label     = "tf-cable"
  kind      = "COPPER"
}

output "image_id" { value = data.virtflow_image.i.id }
`))

// TestTerraformApplyPlanImportDestroy: the real terraform CLI applies 50 VMs and 50
// addresses from one prefix with -parallelism=10 together with one of every other resource
// kind: no error, no address handed out twice, every VM ACTIVE; a plan right after shows no
// change; every resource kind imports by id to the same state (a plan after the imports shows
// no change either); destroy removes everything and waits for the VMs to be gone.
func TestTerraformApplyPlanImportDestroy(t *testing.T) {
	st := stacktest.Start(t, testdb.DSN(t), stacktest.Spec{})
	r := newTF(t, st)
	const vms, addresses = 50, 50
	r.write(renderFull(t, st, vms, addresses))

	began := time.Now()
	out, code := r.run("apply", "-input=false", "-no-color", "-auto-approve", "-parallelism=10")
	applyTime := time.Since(began)
	if code != 0 {
		t.Fatalf("apply exited %d:\n%s", code, out)
	}
	if n := strings.Count(out, "Error:"); n != 0 {
		t.Fatalf("apply printed %d errors:\n%s", n, out)
	}
	t.Logf("apply of %d VMs + %d addresses (and one of every other kind) with -parallelism=10: %v", vms, addresses, applyTime.Round(time.Millisecond))

	c, err := apiclient.New(st.URL, st.AdminToken)
	if err != nil {
		t.Fatal(err)
	}
	checkNetwork(t, c, vms, addresses)
	var fl struct {
		Flavors struct {
			Edges []struct{ Node struct{ Exclusive string } }
		}
	}
	if err := c.Do(context.Background(), `{ flavors(where: {name: "tf-metal-half"}) { edges { node { exclusive } } } }`, nil, &fl); err != nil {
		t.Fatal(err)
	}
	if len(fl.Flavors.Edges) != 1 || fl.Flavors.Edges[0].Node.Exclusive != "NUMA_NODE" {
		t.Errorf("virtflow_flavor.metal: %+v, want exclusive NUMA_NODE", fl)
	}

	began = time.Now()
	r.planClean("after apply")
	t.Logf("plan after apply: %v", time.Since(began).Round(time.Millisecond))

	// Import: forget one resource of every kind and import it by id.
	state := r.must("show", "-json")
	for _, addr := range []string{"virtflow_tenant.t", "virtflow_quota.q", "virtflow_network.n", "virtflow_ip_address.a[7]",
		"virtflow_ssh_key.k", "virtflow_security_rule.https", "virtflow_flavor.metal", "virtflow_virtual_machine.vm[3]", "virtflow_volume.v", "virtflow_region_service.s",
		"virtflow_rack.r", "virtflow_host.h[1]", "virtflow_port.p[0]", "virtflow_cable.c"} {
		id := resourceID(t, state, addr)
		r.must("state", "rm", "-no-color", addr)
		r.must("import", "-input=false", "-no-color", addr, id)
	}
	// An import cannot know the configuration's timeouts (no provider can): the only change a
	// plan may show afterwards is the imported VM's timeouts.
	r.must("plan", "-input=false", "-no-color", "-parallelism=10", "-out=import.plan")
	checkOnlyTimeouts(t, r.must("show", "-json", "import.plan"))

	began = time.Now()
	r.must("destroy", "-input=false", "-no-color", "-auto-approve", "-parallelism=10")
	t.Logf("destroy: %v", time.Since(began).Round(time.Millisecond))
	var left struct {
		VirtualMachines struct{ TotalCount int }
		Tenants         struct{ TotalCount int }
	}
	if err := c.Do(context.Background(), `{ virtualMachines(where: {nameHasPrefix: "tf-vm-"}) { totalCount } tenants(where: {name: "tf-tenant"}) { totalCount } }`, nil, &left); err != nil {
		t.Fatal(err)
	}
	if left.VirtualMachines.TotalCount != 0 || left.Tenants.TotalCount != 0 {
		t.Errorf("after destroy: %d VMs and %d tenants left", left.VirtualMachines.TotalCount, left.Tenants.TotalCount)
	}
}

// TestTerraformErrors: API errors become diagnostics with their code, on the attribute their
// field names: an invalid prefix (VALIDATION, cidr), a duplicate name (CONFLICT), a VM that
// fits nowhere (NO_CAPACITY), a data source naming nothing (NOT_FOUND).
func TestTerraformErrors(t *testing.T) {
	st := stacktest.Start(t, testdb.DSN(t), stacktest.Spec{Racks: 1, HostsPerRack: 1})
	r := newTF(t, st)
	big, err := st.Site.Flavor(ctxSys(), 1000, 128, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	region, err := st.Client.Region.Get(ctxSys(), st.Site.Region)
	if err != nil {
		t.Fatal(err)
	}
	r.write(header + fmt.Sprintf(`
resource "virtflow_network" "bad" {
  name = "tf-bad"
  cidr = "10.99.0.0/33"
}

resource "virtflow_tenant" "a" { name = "tf-dup" }

resource "virtflow_tenant" "b" {
  name       = "tf-dup"
  depends_on = [virtflow_tenant.a]
}

resource "virtflow_virtual_machine" "huge" {
  name      = "tf-huge"
  tenant_id = virtflow_tenant.a.id
  region_id = %q
  flavor_id = %q
}

data "virtflow_image" "missing" { name = "no-such-image" }
`, fmt.Sprint(region.ID), fmt.Sprint(big.ID)))
	out, code := r.run("apply", "-input=false", "-no-color", "-auto-approve")
	if code == 0 {
		t.Fatalf("apply of invalid resources succeeded:\n%s", out)
	}
	for _, want := range []string{"NOT_FOUND: no image is named \"no-such-image\"", "with data.virtflow_image.missing"} {
		if !strings.Contains(out, want) {
			t.Errorf("apply output lacks %q:\n%s", want, out)
		}
	}
	// The data source fails the plan, so nothing was created yet; without it, the
	// resources' own errors show.
	cfg := strings.Replace(readConfig(t, r), `data "virtflow_image" "missing" { name = "no-such-image" }`, "", 1)
	r.write(cfg)
	out, code = r.run("apply", "-input=false", "-no-color", "-auto-approve")
	if code == 0 {
		t.Fatalf("apply of invalid resources succeeded:\n%s", out)
	}
	t.Logf("diagnostics:\n%s", out[strings.Index(out, "Error:"):])
	for _, want := range []string{"VALIDATION", `with virtflow_network.bad`, `cidr = "10.99.0.0/33"`, "CONFLICT", `with virtflow_tenant.b`, "NO_CAPACITY", `with virtflow_virtual_machine.huge`} {
		if !strings.Contains(out, want) {
			t.Errorf("apply output lacks %q:\n%s", want, out)
		}
	}
	r.must("destroy", "-input=false", "-no-color", "-auto-approve")
}

// renderFull is fullConfig for the stack.
func renderFull(t testing.TB, st *stacktest.Stack, vms, addresses int) string {
	t.Helper()
	region, err := st.Client.Region.Get(ctxSys(), st.Site.Region)
	if err != nil {
		t.Fatal(err)
	}
	var cfg strings.Builder
	if err := fullConfig.Execute(&cfg, map[string]any{
		"Region": region.Name, "Flavor": st.Flavor.Name, "Image": st.Image.Name, "HostGroup": st.Site.HostGroup, "Floor": st.Site.Floor,
		"VMs": vms, "Addresses": addresses,
	}); err != nil {
		t.Fatal(err)
	}
	return cfg.String()
}

// BenchmarkTerraformApply50VMs50Addresses measures `terraform apply -parallelism=10` of the
// full configuration (50 VMs ACTIVE, 50 addresses, one of every other kind) and its destroy,
// reported as seconds per apply and per destroy. Run with -benchtime=1x: one iteration
// takes tens of seconds.
func BenchmarkTerraformApply50VMs50Addresses(b *testing.B) {
	st := stacktest.Start(b, testdb.DSN(b), stacktest.Spec{})
	r := newTF(b, st)
	r.write(renderFull(b, st, 50, 50))
	var apply, destroy time.Duration
	b.ResetTimer()
	for range b.N {
		began := time.Now()
		r.must("apply", "-input=false", "-no-color", "-auto-approve", "-parallelism=10")
		apply += time.Since(began)
		began = time.Now()
		r.must("destroy", "-input=false", "-no-color", "-auto-approve", "-parallelism=10")
		destroy += time.Since(began)
	}
	b.ReportMetric(apply.Seconds()/float64(b.N), "s/apply")
	b.ReportMetric(destroy.Seconds()/float64(b.N), "s/destroy")
}

// checkNetwork asserts that the VMs are ACTIVE and that the network's addresses (the VMs'
// NICs and the allocated ones) are all different.
func checkNetwork(t *testing.T, c *apiclient.Client, vms, addresses int) {
	t.Helper()
	var got struct {
		Networks struct {
			Edges []struct {
				Node struct {
					IPAddresses struct {
						TotalCount int
						Edges      []struct{ Node struct{ Address string } }
					}
				}
			}
		}
		VirtualMachines struct {
			Edges []struct{ Node struct{ Name, Status string } }
		}
	}
	if err := c.Do(context.Background(), `{
  networks(where: {name: "tf-net"}) { edges { node { ipAddresses(first: 500) { totalCount edges { node { address } } } } } }
  virtualMachines(first: 500, where: {nameHasPrefix: "tf-vm-"}) { edges { node { name status } } }
}`, nil, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Networks.Edges) != 1 {
		t.Fatalf("networks named tf-net: %d", len(got.Networks.Edges))
	}
	seen := map[string]int{}
	for _, e := range got.Networks.Edges[0].Node.IPAddresses.Edges {
		seen[e.Node.Address]++
	}
	dups := 0
	for a, n := range seen {
		if n > 1 {
			dups++
			t.Errorf("address %s handed out %d times", a, n)
		}
	}
	total := got.Networks.Edges[0].Node.IPAddresses.TotalCount
	if total < vms+addresses {
		t.Errorf("network has %d addresses, want at least %d (one per VM NIC and %d allocated)", total, vms+addresses, addresses)
	}
	active := 0
	for _, e := range got.VirtualMachines.Edges {
		if e.Node.Status == "ACTIVE" {
			active++
		}
	}
	if active != vms {
		t.Errorf("%d of %d VMs ACTIVE after apply", active, vms)
	}
	t.Logf("network tf-net: %d addresses, %d duplicates; %d VMs ACTIVE", total, dups, active)
}

// TestTerraformVMError: a VM whose node cannot create it (every hypervisor operation fails)
// goes to ERROR; the apply fails with the VM's reason, and the VM stays in the state tainted,
// so that the next plan replaces it rather than leaking it.
func TestTerraformVMError(t *testing.T) {
	st := stacktest.Start(t, testdb.DSN(t), stacktest.Spec{Racks: 1, HostsPerRack: 1, FailureRate: 1, Attempts: 1})
	r := newTF(t, st)
	r.write(header + fmt.Sprintf(`
resource "virtflow_virtual_machine" "doomed" {
  name      = "tf-doomed"
  tenant_id = %q
  region_id = %q
  flavor_id = %q
  timeouts  = { create = "2m" }
}
`, fmt.Sprint(st.Site.Tenant), fmt.Sprint(st.Site.Region), fmt.Sprint(st.Flavor.ID)))
	out, code := r.run("apply", "-input=false", "-no-color", "-auto-approve")
	if code == 0 {
		t.Fatalf("apply of a VM that cannot be created succeeded:\n%s", out)
	}
	if !strings.Contains(out, "went to ERROR") || !strings.Contains(out, "with virtflow_virtual_machine.doomed") {
		t.Errorf("apply output lacks the VM's ERROR:\n%s", out)
	}
	if list := r.must("state", "list"); !strings.Contains(list, "virtflow_virtual_machine.doomed") {
		t.Errorf("the VM in ERROR is not in the state: %q", list)
	}
	plan, _ := r.run("plan", "-input=false", "-no-color")
	if !strings.Contains(plan, "is tainted, so must be replaced") {
		t.Errorf("plan after the failed create does not replace the tainted VM:\n%s", plan)
	}
}
