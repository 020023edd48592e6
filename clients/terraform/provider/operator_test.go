package provider_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/virtflow/virtflow/clients/apiclient"
	"github.com/virtflow/virtflow/internal/testkit/stacktest"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

// operatorResources are the addresses of operatorConfig's resources and the type they
// import as (by id, and by name where the second element is set).
var operatorResources = []struct{ addr, byName string }{
	{"virtflow_power_zone.pz", "tf-pz"},
	{"virtflow_rack_zone.rz", "tf-rz"},
	{"virtflow_network_zone.nz", "tf-nz"},
	{"virtflow_availability_zone.az", "tf-az"},
	{"virtflow_host_group.hg", "tf-hg"},
	{"virtflow_network.n", ""},
	{"virtflow_ip_range.ipr", ""},
	{"virtflow_cluster.c", "tf-cluster"},
	{"virtflow_host.h", "tf-host"},
	{"virtflow_compute_node.cn", "tf-node"},
	{"virtflow_provider.p", "tf-provider"},
	{"virtflow_image.img", "tf-image"},
	{"virtflow_user.u", "tf-user"},
	{"virtflow_role_binding.rb", ""},
	{"virtflow_api_token.tok", ""},
	{"virtflow_maintainer.m", "tf-maint"},
	{"virtflow_maintainer_group.mg", "tf-team"},
	{"virtflow_check.chk", "tf-check"},
	{"virtflow_event_rule.er", "tf-rule"},
	{"virtflow_silence.s", ""},
	{"virtflow_maintenance.mw", ""},
	{"virtflow_notice.no", ""},
	{"virtflow_service_mesh.sm", "tf-mesh"},
}

// operatorConfig uses every resource an operator edits that the DCIM hierarchy test does not;
// v changes a description (or title, comment) of each, in place.
func operatorConfig(dc, region, cluster, tenant, rack, floor int, v string, ends time.Time) string {
	return header + fmt.Sprintf(`
locals {
  dc      = "%d"
  region  = "%d"
  cluster = "%d"
  tenant  = "%d"
  rack    = "%d"
  floor   = "%d"
  v       = %q
}

resource "virtflow_power_zone" "pz" {
  name          = "tf-pz"
  description   = "power ${local.v}"
  datacenter_id = local.dc
  rack_ids      = [virtflow_rack.rk.id]
}

resource "virtflow_rack" "rk" {
  name     = "tf-op-rack"
  floor_id = local.floor
}

resource "virtflow_rack_zone" "rz" {
  name          = "tf-rz"
  description   = "rack zone ${local.v}"
  datacenter_id = local.dc
}

resource "virtflow_network" "n" {
  name      = "tf-op-net"
  cidr      = "10.78.0.0/24"
  gateway   = "10.78.0.1"
  purpose   = "VM"
  tenant_id = local.tenant
}

resource "virtflow_network_zone" "nz" {
  name          = "tf-nz"
  description   = "network zone ${local.v}"
  datacenter_id = local.dc
  network_ids   = [virtflow_network.n.id]
}

resource "virtflow_ip_range" "ipr" {
  start_address = "10.78.0.100"
  end_address   = "10.78.0.150"
  description   = "dhcp ${local.v}"
  network_id    = virtflow_network.n.id
}

resource "virtflow_availability_zone" "az" {
  name        = "tf-az"
  description = "az ${local.v}"
  region_id   = local.region
}

resource "virtflow_host" "h" {
  name    = "tf-host"
  rack_id = local.rack
}

resource "virtflow_host_group" "hg" {
  name        = "tf-hg"
  description = "group ${local.v}"
  host_ids    = [virtflow_host.h.id]
}

resource "virtflow_cluster" "c" {
  name          = "tf-cluster"
  description   = "cluster ${local.v}"
  labels        = { tier = "gold" }
  weight        = 50
  region_id     = local.region
  datacenter_id = local.dc
}

resource "virtflow_compute_node" "cn" {
  name                 = "tf-node"
  schedulable          = false
  labels               = { ssd = "true", v = local.v }
  cpu_capacity         = 16
  host_id              = virtflow_host.h.id
  cluster_id           = virtflow_cluster.c.id
  availability_zone_id = virtflow_availability_zone.az.id
}

resource "virtflow_provider" "p" {
  name        = "tf-provider"
  description = "provider ${local.v}"
  kind        = "VIRTUAL_MACHINE"
  driver      = "LIBVIRT"
}

resource "virtflow_image" "img" {
  name        = "tf-image"
  description = "image ${local.v}"
  source      = "upload"
  os_name     = "Debian"
}

resource "virtflow_user" "u" {
  username     = "tf-user"
  display_name = "Terraform ${local.v}"
  email        = "tf-user@example.test"
}

resource "virtflow_role_binding" "rb" {
  user_id   = virtflow_user.u.id
  role      = "TENANT_MEMBER"
  tenant_id = local.tenant
}

resource "virtflow_api_token" "tok" {
  name          = "tf-token"
  scope         = "READ_ONLY"
  allowed_cidrs = ["127.0.0.0/8"]
}

resource "virtflow_maintainer" "m" {
  name     = "tf-maint"
  account  = "tf-maint"
  email    = "maint-${local.v}@example.test"
  user_id  = virtflow_user.u.id
  rack_ids = [virtflow_rack.rk.id]
}

resource "virtflow_maintainer_group" "mg" {
  name           = "tf-team"
  description    = "team ${local.v}"
  webhook_url    = "https://hooks.example.test/team"
  webhook_secret = "s3cret-team"
  admin_id       = virtflow_maintainer.m.id
  member_ids     = [virtflow_maintainer.m.id]
}

resource "virtflow_check" "chk" {
  name             = "tf-check"
  description      = "check ${local.v}"
  builtin          = "NIC_LINK"
  interval_seconds = 30
  label_selector   = { ssd = "true" }
  cluster_ids      = [virtflow_cluster.c.id]
}

resource "virtflow_event_rule" "er" {
  name           = "tf-rule"
  description    = "rule ${local.v}"
  kind           = "AGGREGATE"
  group_by       = ["check", "node"]
  node_pattern   = "tf-*"
  hook_secret    = "s3cret-rule"
}

resource "virtflow_silence" "s" {
  node_pattern = "tf-node"
  ends_at      = %q
  comment      = "silence ${local.v}"
}

resource "virtflow_maintenance" "mw" {
  title         = "tf window ${local.v}"
  starts_at     = %q
  maintainer_id = virtflow_maintainer.m.id
  host_ids      = [virtflow_host.h.id]
}

resource "virtflow_notice" "no" {
  title     = "tf notice ${local.v}"
  body      = "Planned work."
  audience  = "TENANT"
  tenant_id = local.tenant
}

resource "virtflow_service_mesh" "sm" {
  name        = "tf-mesh"
  description = "mesh ${local.v}"
  type        = "LINKERD"
}

data "virtflow_power_zone" "pz" { name = virtflow_power_zone.pz.name }
data "virtflow_cluster" "c" { name = virtflow_cluster.c.name }
data "virtflow_user" "u" { username = virtflow_user.u.username }
data "virtflow_maintainer_group" "mg" { name = virtflow_maintainer_group.mg.name }
data "virtflow_compute_node" "cn" { name = virtflow_compute_node.cn.name }

output "token" {
  value     = virtflow_api_token.tok.token
  sensitive = true
}
output "lookups" {
  value = join(",", [data.virtflow_power_zone.pz.id == virtflow_power_zone.pz.id, data.virtflow_cluster.c.id == virtflow_cluster.c.id,
    data.virtflow_user.u.id == virtflow_user.u.id, data.virtflow_maintainer_group.mg.id == virtflow_maintainer_group.mg.id,
    data.virtflow_compute_node.cn.id == virtflow_compute_node.cn.id])
}
`, dc, region, cluster, tenant, rack, floor, v, ends.Format(time.RFC3339), ends.Add(-time.Hour).Format(time.RFC3339))
}

// TestTerraformOperatorResources: every resource an operator edits beyond the site
// hierarchy (zones, clusters, nodes, providers, images, people, role bindings, API tokens,
// monitoring, maintenances, notices, meshes) is made, changed in place, removed from the
// state and imported (by name where names are unique, else by id) with a clean plan, and
// destroyed, by the real terraform CLI against a running stack. The API token's secret
// works once made and is gone (revoked) after destroy.
func TestTerraformOperatorResources(t *testing.T) {
	st := stacktest.Start(t, testdb.DSN(t), stacktest.Spec{Racks: 1, HostsPerRack: 1})
	r := newTF(t, st)
	c, err := apiclient.New(st.URL, st.AdminToken)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ends := time.Now().Add(48 * time.Hour).UTC().Truncate(time.Second)
	cfg := func(v string) string {
		return operatorConfig(st.Site.Datacenter, st.Site.Region, st.Site.Cluster, st.Site.Tenant, st.Site.Racks[0].ID, st.Site.Floor, v, ends)
	}
	r.write(cfg("one"))
	r.must("apply", "-input=false", "-no-color", "-auto-approve")
	r.planClean("after apply")
	if out := strings.TrimSpace(r.must("output", "-raw", "lookups")); out != "true,true,true,true,true" {
		t.Errorf("data sources found %s", out)
	}

	// The token answered once works, read-only.
	secret := strings.TrimSpace(r.must("output", "-raw", "token"))
	if secret == "" {
		t.Fatal("no token secret in the state")
	}
	tc, err := apiclient.New(st.URL, secret)
	if err != nil {
		t.Fatal(err)
	}
	if err := tc.Do(ctx, `{ tenants(first: 1) { totalCount } }`, nil, nil); err != nil {
		t.Errorf("the token made by terraform cannot read: %v", err)
	}

	// Changed in place: every resource whose text changed is updated, none replaced.
	r.write(cfg("two"))
	out := r.must("plan", "-input=false", "-no-color")
	if !strings.Contains(out, ", 0 to destroy") || strings.Contains(out, "must be replaced") {
		t.Errorf("plan of in-place changes:\n%s", out)
	}
	r.must("apply", "-input=false", "-no-color", "-auto-approve")
	r.planClean("after the change")
	var got struct {
		PowerZones struct {
			Edges []struct {
				Node struct {
					Description string
					Racks       struct{ TotalCount int }
				}
			}
		}
		ComputeNodes struct {
			Edges []struct {
				Node struct{ Labels map[string]string }
			}
		}
	}
	if err := c.Do(ctx, `{ powerZones(where: {name: "tf-pz"}) { edges { node { description racks { totalCount } } } }
		computeNodes(where: {name: "tf-node"}) { edges { node { labels } } } }`, nil, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.PowerZones.Edges) != 1 || got.PowerZones.Edges[0].Node.Description != "power two" || got.PowerZones.Edges[0].Node.Racks.TotalCount != 1 {
		t.Errorf("power zone after the change: %+v", got.PowerZones)
	}
	if len(got.ComputeNodes.Edges) != 1 || got.ComputeNodes.Edges[0].Node.Labels["v"] != "two" {
		t.Errorf("compute node after the change: %+v", got.ComputeNodes)
	}

	// Removed from the state and imported: by name where unique, else by id. The plan after
	// import only re-sends the write-only secrets (the API never answers them).
	state := r.must("show", "-json")
	for _, res := range operatorResources {
		id := resourceID(t, state, res.addr)
		r.must("state", "rm", "-no-color", res.addr)
		imp := id
		if res.byName != "" {
			imp = res.byName
		}
		r.must("import", "-input=false", "-no-color", res.addr, imp)
		if got := resourceID(t, r.must("show", "-json"), res.addr); got != id {
			t.Errorf("%s imported as %q: id %s, want %s", res.addr, imp, got, id)
		}
	}
	r.must("plan", "-input=false", "-no-color", "-out=import.plan")
	checkOnlyAttrs(t, r.must("show", "-json", "import.plan"), "webhook_secret", "hook_secret")
	r.must("apply", "-input=false", "-no-color", "-auto-approve")
	r.planClean("after import")

	// A bad value is an error on its attribute.
	bad := strings.Replace(cfg("two"), `weight        = 50`, `weight        = 20000`, 1)
	r.write(bad)
	if out, code := r.run("apply", "-input=false", "-no-color", "-auto-approve"); code == 0 || !strings.Contains(out, "Cannot update virtflow_cluster") || !strings.Contains(out, `"weight"`) {
		t.Errorf("apply of weight 20000: exit %d\n%s", code, out)
	}
	r.write(cfg("two"))

	r.must("destroy", "-input=false", "-no-color", "-auto-approve")
	var left struct {
		PowerZones, Clusters, Users, MaintainerGroups, EventRules, ServiceMeshes struct{ TotalCount int }
	}
	if err := c.Do(ctx, `{ powerZones(where: {name: "tf-pz"}) { totalCount } clusters(where: {name: "tf-cluster"}) { totalCount }
		users(where: {username: "tf-user"}) { totalCount } maintainerGroups(where: {name: "tf-team"}) { totalCount }
		eventRules(where: {name: "tf-rule"}) { totalCount } serviceMeshes(where: {name: "tf-mesh"}) { totalCount } }`, nil, &left); err != nil {
		t.Fatal(err)
	}
	if left.PowerZones.TotalCount+left.Clusters.TotalCount+left.Users.TotalCount+left.MaintainerGroups.TotalCount+left.EventRules.TotalCount+left.ServiceMeshes.TotalCount != 0 {
		t.Errorf("left after destroy: %+v", left)
	}
	if err := tc.Do(ctx, `{ tenants(first: 1) { totalCount } }`, nil, nil); err == nil {
		t.Error("the token still works after destroy (not revoked)")
	}
}

// checkOnlyAttrs asserts that a plan (`terraform show -json PLAN`) creates, replaces and
// deletes nothing and updates no attribute but those named.
func checkOnlyAttrs(t *testing.T, planJSON string, attrs ...string) {
	t.Helper()
	var p struct {
		ResourceChanges []struct {
			Address string `json:"address"`
			Change  struct {
				Actions []string       `json:"actions"`
				Before  map[string]any `json:"before"`
				After   map[string]any `json:"after"`
			} `json:"change"`
		} `json:"resource_changes"`
	}
	if err := json.Unmarshal([]byte(planJSON), &p); err != nil {
		t.Fatalf("terraform show -json: %v", err)
	}
	ok := map[string]bool{}
	for _, a := range attrs {
		ok[a] = true
	}
	for _, rc := range p.ResourceChanges {
		switch strings.Join(rc.Change.Actions, ",") {
		case "no-op", "read":
		case "update":
			for k, after := range rc.Change.After {
				if before := rc.Change.Before[k]; !ok[k] && fmt.Sprint(before) != fmt.Sprint(after) {
					t.Errorf("plan after import changes %s.%s: %v → %v", rc.Address, k, before, after)
				}
			}
		default:
			t.Errorf("plan after import: %s %v", rc.Address, rc.Change.Actions)
		}
	}
}
