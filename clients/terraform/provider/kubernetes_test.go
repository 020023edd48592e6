package provider_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/virtflow/virtflow/ent/network"
	"github.com/virtflow/virtflow/internal/testkit/stacktest"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

// TestTerraformKubernetesCluster: virtflow_kubernetes_cluster is created (waiting for ACTIVE,
// with its kubeconfig), plans clean, scales its workers in place and is destroyed, against a
// stack whose simulated guests report their bootstrap.
func TestTerraformKubernetesCluster(t *testing.T) {
	st := stacktest.Start(t, testdb.DSN(t), stacktest.Spec{Racks: 3, HostsPerRack: 1, Guests: true, GuestBoot: 50 * time.Millisecond})
	st.Client.Network.Create().SetName(st.Site.Prefix + "-svc").SetCidr("10.81.0.0/24").SetVrf(st.Site.Prefix).
		SetPurpose(network.PurposeService).SetDatacenterID(st.Site.Datacenter).SaveX(ctxSys())
	r := newTF(t, st)
	config := func(workers int) string {
		return header + fmt.Sprintf(`
resource "virtflow_kubernetes_cluster" "k" {
  name           = "tf-k8s"
  tenant_id      = %q
  region_id      = %q
  flavor_id      = %q
  version        = "v1.31.2"
  control_planes = 1
  workers        = %d
  plugins        = ["flannel"]
  timeouts       = { create = "2m", update = "2m" }
}

output "endpoint" { value = virtflow_kubernetes_cluster.k.api_endpoint }
`, fmt.Sprint(st.Site.Tenant), fmt.Sprint(st.Site.Region), fmt.Sprint(st.Flavor.ID), workers)
	}
	r.write(config(1))
	r.must("apply", "-input=false", "-no-color", "-auto-approve")
	if out := r.must("output", "-raw", "endpoint"); !strings.HasPrefix(out, "https://10.81.0.") || !strings.HasSuffix(out, ":6443") {
		t.Errorf("endpoint %q", out)
	}
	show := r.must("show", "-json")
	if !strings.Contains(show, `"status":"ACTIVE"`) || !strings.Contains(show, "certificate-authority-data") {
		t.Errorf("state lacks ACTIVE or the kubeconfig")
	}
	r.planClean("after create")
	r.write(config(2))
	r.must("apply", "-input=false", "-no-color", "-auto-approve")
	if show = r.must("show", "-json"); !strings.Contains(show, `"workers":2`) {
		t.Errorf("workers not scaled to 2")
	}
	r.must("destroy", "-input=false", "-no-color", "-auto-approve")
}
