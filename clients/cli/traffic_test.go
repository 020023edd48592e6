package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/virtflow/virtflow/clients/apiclient"
	"github.com/virtflow/virtflow/internal/testkit/stacktest"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

// TestCLILoadBalancersAndGlobalServices runs `virtflow lb` and `virtflow global-services`
// against a real server: a load balancer is listed with its listener, its listeners and
// health-check interval are replaced and read back through the API, a malformed listener is a
// usage error and one the API refuses exits 1 naming the field; a global service gets a second
// region service attached and the first detached (region closure), as the API then reads.
func TestCLILoadBalancersAndGlobalServices(t *testing.T) {
	st := stacktest.Start(t, testdb.DSN(t), stacktest.Spec{})
	r := runner{t: t, env: map[string]string{"XDG_CONFIG_HOME": t.TempDir()}}
	ctx := context.Background()
	r.must("login", "--endpoint", st.URL, "--token", st.AdminToken)
	c, err := apiclient.New(st.URL, st.AdminToken)
	if err != nil {
		t.Fatal(err)
	}
	tenant, region := fmt.Sprint(st.Site.Tenant), fmt.Sprint(st.Site.Region)
	zero := 0
	svc := func(name string) string {
		s, err := apiclient.CreateRegionService(ctx, c, apiclient.CreateRegionServiceInput{Name: name, TenantID: tenant, RegionID: region, Replicas: &zero})
		if err != nil {
			t.Fatal(err)
		}
		return s.CreateRegionService.Id
	}
	svcA, svcB := svc("cli-svc-a"), svc("cli-svc-b")
	lb, err := apiclient.CreateLoadBalancer(ctx, c, apiclient.CreateLoadBalancerInput{Name: "cli-lb", TenantID: tenant, RegionServiceID: &svcA,
		Listeners: []apiclient.LoadBalancerListenerInput{{Port: 80, Protocol: "TCP", TargetPort: 8080}}})
	if err != nil {
		t.Fatal(err)
	}
	lbID := lb.CreateLoadBalancer.Id

	if out := r.must("lb", "list"); !strings.Contains(out, "cli-lb") || !strings.Contains(out, "80/TCP:8080") || !strings.Contains(out, "NODES_ANNOUNCING") {
		t.Errorf("lb list:\n%s", out)
	}
	var got apiclient.LoadBalancerFields
	out := r.must("lb", "listeners", "set", lbID, "--listener", "80:8080", "--listener", "443/http:8443", "--interval-ms", "2500", "-o", "json")
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("lb listeners set -o json: %v\n%s", err, out)
	}
	api, err := apiclient.GetLoadBalancer(ctx, c, lbID)
	if err != nil {
		t.Fatal(err)
	}
	saved := (*api.Node).(*apiclient.GetLoadBalancerNodeLoadBalancer)
	if want := "80/TCP:8080,443/HTTP:8443"; listenersOf(saved.Listeners) != want || saved.HealthCheckIntervalMs != 2500 || listenersOf(got.Listeners) != want {
		t.Errorf("after lb listeners set: API %s every %d ms, printed %s; want %s every 2500 ms",
			listenersOf(saved.Listeners), saved.HealthCheckIntervalMs, listenersOf(got.Listeners), want)
	}
	if out := r.must("lb", "show", lbID); !strings.Contains(out, "443/HTTP:8443") || !strings.Contains(out, "MEMBER") || !strings.Contains(out, "ANNOUNCED") {
		t.Errorf("lb show:\n%s", out)
	}
	if _, _, code := r.run(ctx, "", "lb", "listeners", "set", lbID, "--listener", "eighty"); code != 2 {
		t.Errorf("lb listeners set --listener eighty: exit %d, want 2", code)
	}
	if _, errs, code := r.run(ctx, "", "lb", "listeners", "set", lbID, "--listener", "70000:80"); code != 1 || !strings.Contains(errs, "port") {
		t.Errorf("lb listeners set --listener 70000:80: exit %d, %q; want 1 naming the port", code, errs)
	}
	if _, _, code := r.run(ctx, "", "lb", "frobnicate"); code != 2 {
		t.Errorf("lb frobnicate: exit %d, want 2", code)
	}

	fqdn := "www.gslb.example.com"
	ttl := 20
	mode := apiclient.GlobalServiceModeGslb
	gs, err := apiclient.CreateGlobalService(ctx, c, apiclient.CreateGlobalServiceInput{Name: "cli-gs", TenantID: tenant, Mode: &mode, Fqdn: &fqdn, Ttl: &ttl,
		RegionServiceIDs: []string{svcA}})
	if err != nil {
		t.Fatal(err)
	}
	gsID := gs.CreateGlobalService.Id
	if out := r.must("global-services", "list"); !strings.Contains(out, "cli-gs") || !strings.Contains(out, fqdn) || !strings.Contains(out, "GSLB") {
		t.Errorf("global-services list:\n%s", out)
	}
	r.must("global-services", "attach", gsID, svcB)
	r.must("global-services", "detach", gsID, svcA)
	var shown apiclient.GlobalServiceFields
	if err := json.Unmarshal([]byte(r.must("global-services", "show", gsID, "-o", "json")), &shown); err != nil {
		t.Fatal(err)
	}
	if len(shown.RegionServices.Edges) != 1 || shown.RegionServices.Edges[0].Node.Id != svcB || shown.Ttl != 20 {
		t.Errorf("after attach B, detach A: %+v", shown.RegionServices.Edges)
	}
	if out := r.must("global-services", "show", gsID); !strings.Contains(out, "cli-svc-b") || strings.Contains(out, "cli-svc-a") {
		t.Errorf("global-services show:\n%s", out)
	}
	if _, _, code := r.run(ctx, "", "global-services", "attach", gsID); code != 2 {
		t.Errorf("global-services attach without a service: exit %d, want 2", code)
	}
}

func listenersOf(ls []apiclient.LoadBalancerFieldsListenersLoadBalancerListener) string {
	parts := make([]string, 0, len(ls))
	for _, l := range ls {
		parts = append(parts, fmt.Sprintf("%d/%s:%d", l.Port, l.Protocol, l.TargetPort))
	}
	return strings.Join(parts, ",")
}
