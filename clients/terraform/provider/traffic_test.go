package provider_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/virtflow/virtflow/clients/apiclient"
	"github.com/virtflow/virtflow/internal/testkit/stacktest"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

// trafficConfig: the region services are made through the API (no replica: the test is about
// the load balancer and the global service, not placement).
func trafficConfig(tenant, svcA, listeners string, interval int, members string) string {
	return header + fmt.Sprintf(`
resource "virtflow_load_balancer" "lb" {
  name                     = "tf-lb"
  tenant_id                = %[1]q
  region_service_id        = %[2]q
  listeners                = %[3]s
  health_check_interval_ms = %[4]d
}

resource "virtflow_global_service" "g" {
  name               = "tf-gs"
  tenant_id          = %[1]q
  mode               = "GSLB"
  fqdn               = "www.gslb.example.com"
  ttl                = 20
  region_service_ids = %[5]s
}
`, tenant, svcA, listeners, interval, members)
}

// TestTerraformLoadBalancerGlobalService: the real terraform CLI creates a load balancer with
// a listener and a GSLB global service of two region services; the API reads what was
// configured and a plan right after is clean; changing the listeners, the check interval and
// dropping a region service from the global service (region closure) is an in-place update
// the API then reads; both import by id to a clean plan; destroy removes them.
func TestTerraformLoadBalancerGlobalService(t *testing.T) {
	st := stacktest.Start(t, testdb.DSN(t), stacktest.Spec{Racks: 1, HostsPerRack: 1})
	r := newTF(t, st)
	tenant, region := fmt.Sprint(st.Site.Tenant), fmt.Sprint(st.Site.Region)
	c, err := apiclient.New(st.URL, st.AdminToken)
	if err != nil {
		t.Fatal(err)
	}
	zero := 0
	svc := func(name string) string {
		s, err := apiclient.CreateRegionService(context.Background(), c, apiclient.CreateRegionServiceInput{Name: name, TenantID: tenant, RegionID: region, Replicas: &zero})
		if err != nil {
			t.Fatal(err)
		}
		return s.CreateRegionService.Id
	}
	svcA, svcB := svc("tf-svc-a"), svc("tf-svc-b")
	r.write(trafficConfig(tenant, svcA, `[{ port = 80, protocol = "TCP", target_port = 8080 }]`, 1000, fmt.Sprintf("[%q, %q]", svcA, svcB)))
	r.must("apply", "-input=false", "-no-color", "-auto-approve")
	r.planClean("after apply")

	state := r.must("show", "-json")
	lbID, gsID := resourceID(t, state, "virtflow_load_balancer.lb"), resourceID(t, state, "virtflow_global_service.g")
	check := func(when, wantListeners string, wantInterval int, wantMembers []string) {
		t.Helper()
		lr, err := apiclient.GetLoadBalancer(context.Background(), c, lbID)
		if err != nil {
			t.Fatal(err)
		}
		lb := (*lr.Node).(*apiclient.GetLoadBalancerNodeLoadBalancer)
		var ls []string
		for _, l := range lb.Listeners {
			ls = append(ls, fmt.Sprintf("%d/%s:%d", l.Port, l.Protocol, l.TargetPort))
		}
		if got := strings.Join(ls, ","); got != wantListeners || lb.HealthCheckIntervalMs != wantInterval {
			t.Errorf("%s: listeners %s every %d ms, want %s every %d ms", when, got, lb.HealthCheckIntervalMs, wantListeners, wantInterval)
		}
		gr, err := apiclient.GetGlobalService(context.Background(), c, gsID)
		if err != nil {
			t.Fatal(err)
		}
		g := (*gr.Node).(*apiclient.GetGlobalServiceNodeGlobalService)
		var ids []string
		for _, e := range g.RegionServices.Edges {
			ids = append(ids, e.Node.Id)
		}
		if len(ids) != len(wantMembers) || (len(wantMembers) == 1 && ids[0] != wantMembers[0]) || g.Ttl != 20 || g.Mode != apiclient.GlobalServiceModeGslb {
			t.Errorf("%s: global service members %v ttl %d mode %s, want %v ttl 20 GSLB", when, ids, g.Ttl, g.Mode, wantMembers)
		}
	}
	check("after apply", "80/TCP:8080", 1000, []string{svcA, svcB})

	r.write(trafficConfig(tenant, svcA, `[{ port = 80, protocol = "TCP", target_port = 8080 }, { port = 443, protocol = "HTTP", target_port = 8443 }]`,
		2500, fmt.Sprintf("[%q]", svcB)))
	out := r.must("apply", "-input=false", "-no-color", "-auto-approve")
	if strings.Contains(out, "destroyed") && !strings.Contains(out, "0 destroyed") {
		t.Errorf("the update replaced something:\n%s", out)
	}
	check("after the update", "80/TCP:8080,443/HTTP:8443", 2500, []string{svcB})
	r.planClean("after the update")

	for _, addr := range []string{"virtflow_load_balancer.lb", "virtflow_global_service.g"} {
		id := resourceID(t, state, addr)
		r.must("state", "rm", "-no-color", addr)
		r.must("import", "-input=false", "-no-color", addr, id)
	}
	r.planClean("after import")
	r.must("destroy", "-input=false", "-no-color", "-auto-approve")
	if _, err := apiclient.GetLoadBalancer(context.Background(), c, lbID); err == nil {
		lr, _ := apiclient.GetLoadBalancer(context.Background(), c, lbID)
		if lr != nil && lr.Node != nil {
			t.Errorf("load balancer %s still there after destroy", lbID)
		}
	}
}
