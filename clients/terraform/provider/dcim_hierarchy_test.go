package provider_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/virtflow/virtflow/clients/apiclient"
	"github.com/virtflow/virtflow/internal/testkit/stacktest"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

// TestTerraformSiteHierarchy: a region, a datacenter in it and a floor in that, made, changed
// in place (a description, a floor's level), imported and destroyed by the real terraform CLI;
// the data sources find what exists by name (tenant, datacenter, floor, availability zone,
// host group, SSH key lookups share one implementation).
func TestTerraformSiteHierarchy(t *testing.T) {
	st := stacktest.Start(t, testdb.DSN(t), stacktest.Spec{Racks: 1, HostsPerRack: 1})
	r := newTF(t, st)
	c, err := apiclient.New(st.URL, st.AdminToken)
	if err != nil {
		t.Fatal(err)
	}
	tenantID := strconv.Itoa(st.Site.Tenant)
	var tn struct{ Node struct{ Name string } }
	if err := c.Do(context.Background(), `query($id: ID!) { node(id: $id) { ... on Tenant { name } } }`, map[string]any{"id": tenantID}, &tn); err != nil {
		t.Fatal(err)
	}
	config := func(desc string, level int) string {
		return header + `
resource "virtflow_region" "r" { name = "tf-region" }

resource "virtflow_datacenter" "dc" {
  name        = "tf-dc"
  description = "` + desc + `"
  address     = "1-1-1 Otemachi"
  region_id   = virtflow_region.r.id
}

resource "virtflow_floor" "f" {
  name          = "tf-floor"
  level         = ` + strconv.Itoa(level) + `
  datacenter_id = virtflow_datacenter.dc.id
}

data "virtflow_tenant" "t" { name = "` + tn.Node.Name + `" }

output "tenant" { value = data.virtflow_tenant.t.id }
`
	}
	r.write(config("first", 2))
	r.must("apply", "-input=false", "-no-color", "-auto-approve")
	r.planClean("after apply")
	if out := strings.TrimSpace(r.must("output", "-raw", "tenant")); out != tenantID {
		t.Errorf("data.virtflow_tenant id %q, want %s", out, tenantID)
	}

	// Changed in place: the plan updates, it does not replace.
	r.write(config("second", 3))
	out := r.must("plan", "-input=false", "-no-color")
	if !strings.Contains(out, "2 to change, 0 to destroy") {
		t.Errorf("plan of a description and a level change:\n%s", out)
	}
	r.must("apply", "-input=false", "-no-color", "-auto-approve")
	r.planClean("after the change")
	var got struct {
		Floors struct {
			Edges []struct {
				Node struct {
					Level      int
					Datacenter struct{ Description string }
				}
			}
		}
	}
	if err := c.Do(context.Background(), `{ floors(where: {name: "tf-floor"}) { edges { node { level datacenter { description } } } } }`, nil, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Floors.Edges) != 1 || got.Floors.Edges[0].Node.Level != 3 || got.Floors.Edges[0].Node.Datacenter.Description != "second" {
		t.Errorf("after the change: %+v", got)
	}

	state := r.must("show", "-json")
	for _, addr := range []string{"virtflow_region.r", "virtflow_datacenter.dc", "virtflow_floor.f"} {
		id := resourceID(t, state, addr)
		r.must("state", "rm", "-no-color", addr)
		r.must("import", "-input=false", "-no-color", addr, id)
	}
	r.planClean("after import")

	r.must("destroy", "-input=false", "-no-color", "-auto-approve")
	var left struct{ Datacenters struct{ TotalCount int } }
	if err := c.Do(context.Background(), `{ datacenters(where: {name: "tf-dc"}) { totalCount } }`, nil, &left); err != nil {
		t.Fatal(err)
	}
	if left.Datacenters.TotalCount != 0 {
		t.Errorf("%d datacenters named tf-dc after destroy", left.Datacenters.TotalCount)
	}
}
