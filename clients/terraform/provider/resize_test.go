package provider_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/virtflow/virtflow/internal/testkit/stacktest"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

// TestTerraformResizeInPlace: a VM's flavor change is an in-place update (resizeVirtualMachine),
// not a replacement: the plan says "1 to change, 0 to destroy", the VM keeps its id and ends
// ACTIVE on the new flavor, and a plan after shows no change.
func TestTerraformResizeInPlace(t *testing.T) {
	st := stacktest.Start(t, testdb.DSN(t), stacktest.Spec{Racks: 1, HostsPerRack: 1})
	r := newTF(t, st)
	config := func(flavor string) string {
		return header + fmt.Sprintf(`
resource "virtflow_flavor" "big" {
  name      = "tf-big"
  vcpus     = 2
  memory_mb = 256
  disk_gb   = 1
}

resource "virtflow_virtual_machine" "vm" {
  name      = "tf-resized"
  tenant_id = %q
  region_id = %q
  flavor_id = %s
  timeouts  = { create = "5m" }
}
`, fmt.Sprint(st.Site.Tenant), fmt.Sprint(st.Site.Region), flavor)
	}
	r.write(config(fmt.Sprintf("%q", fmt.Sprint(st.Flavor.ID))))
	r.must("apply", "-input=false", "-no-color", "-auto-approve")
	before := resourceID(t, r.must("show", "-json"), "virtflow_virtual_machine.vm")

	r.write(config("virtflow_flavor.big.id"))
	plan := r.must("plan", "-input=false", "-no-color")
	if !strings.Contains(plan, "0 to add, 1 to change, 0 to destroy") {
		t.Fatalf("a flavor change does not plan as an in-place update:\n%s", plan)
	}
	r.must("apply", "-input=false", "-no-color", "-auto-approve")
	state := r.must("show", "-json")
	if after := resourceID(t, state, "virtflow_virtual_machine.vm"); after != before {
		t.Errorf("the VM was replaced: id %s, then %s", before, after)
	}
	r.planClean("after the resize")
	r.must("destroy", "-input=false", "-no-color", "-auto-approve")
}
