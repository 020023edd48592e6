package nodeagent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/virtflow/virtflow/agent/hypervisor"
	"github.com/virtflow/virtflow/agent/nodeagent"
	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/clients/cli"
	"github.com/virtflow/virtflow/demo/fleet"
	"github.com/virtflow/virtflow/gateway/usagegraph"
	"github.com/virtflow/virtflow/internal/platform/config"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
)

// TestUsageGraphsFromARealPrometheus: a real agent on libvirt's test driver serves
// /metrics (--metrics-addr) and tells the server its address; a real Prometheus (Debian's
// prometheus, started here with deploy/prometheus/usage-rules.yml) finds it through the
// server's HTTP service discovery, authorized by an admin token, and scrapes it; the
// server's GET /api/usage answers a tenant member the CPU and memory series of their VM
// from Prometheus. Another tenant's member gets not found for that VM, and a tenant member
// gets not found for the node. It logs the graph request's time.
//
// It skips only when the prometheus binary is missing.
func TestUsageGraphsFromARealPrometheus(t *testing.T) {
	promBin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Skip("prometheus is not installed (apt-get install prometheus; .ci/run does it)")
	}
	promAddr := freeAddr(t)
	st := startStackWith(t, 0, "127.0.0.1:0", libvirtTestDriver(t), func(c *config.Config) {
		c.PrometheusURL = "http://" + promAddr
	})
	ctx := gqltest.System()

	// The agent with its metrics listener.
	tok, err := fleet.IssueAgentToken(ctx, st.env.Client, st.env.Identity, st.node)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ag, err := nodeagent.New(nodeagent.Config{APIURL: st.base, Token: tok, Hypervisor: st.hv, Log: st.log,
		HeartbeatInterval: time.Second, ResyncInterval: time.Hour, RetryDelay: 10 * time.Millisecond, MetricsAddr: ln.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: ag.MetricsHandler(), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	go func() { _ = ag.Run(st.runCtx) }()

	api := &nodeagent.Client{URL: st.base, Token: gqltest.AdminToken}
	var created struct{ CreateVirtualMachine struct{ ID string } }
	if err := api.Do(ctx, `mutation($in: CreateVirtualMachineInput!) { createVirtualMachine(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"name": "graph-vm", "tenantID": gqltest.ID(st.site.Tenant), "regionID": gqltest.ID(st.site.Region),
			"flavorID": gqltest.ID(st.flavor.ID)}}, &created); err != nil {
		t.Fatal(err)
	}
	vmID, _ := strconv.Atoi(created.CreateVirtualMachine.ID)
	t.Cleanup(func() { _ = st.hv.Undefine(context.Background(), hypervisor.DomainName(int64(vmID))) })

	// Prometheus, discovering the agent through the server.
	root := strings.TrimSuffix(st.base, "/query")
	dir := t.TempDir()
	rules, err := filepath.Abs("../../deploy/prometheus/usage-rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`global: {scrape_interval: 1s, evaluation_interval: 1s}
rule_files: [%q]
scrape_configs:
  - job_name: virtflow-agent
    http_sd_configs:
      - url: %s/api/prometheus/targets
        refresh_interval: 1s
        authorization: {type: Bearer, credentials: %q}
`, rules, root, gqltest.AdminToken)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	pctx, stopProm := context.WithCancel(context.Background())
	prom := exec.CommandContext(pctx, promBin, "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+promAddr, "--storage.tsdb.retention.time=1d")
	promLog, _ := os.Create(filepath.Join(dir, "prometheus.log"))
	prom.Stdout, prom.Stderr = promLog, promLog
	if err := prom.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopProm(); _ = prom.Wait() })

	member := tenantToken(t, st.env.Client, st.site.Tenant, authz.RoleTenantMember, "graph-member")
	get := func(token, query string) (int, []byte) {
		req, _ := http.NewRequest(http.MethodGet, root+"/api/usage?"+query, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}

	// The discovery document lists the agent (once its control connection is up).
	sdDeadline := time.Now().Add(30 * time.Second)
	for {
		req, _ := http.NewRequest(http.MethodGet, root+"/api/prometheus/targets", nil)
		req.Header.Set("Authorization", "Bearer "+gqltest.AdminToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK && strings.Contains(string(b), ln.Addr().String()) {
			break
		}
		if time.Now().After(sdDeadline) {
			t.Fatalf("service discovery: %d %s, want the agent's %s", resp.StatusCode, b, ln.Addr())
		}
		time.Sleep(200 * time.Millisecond)
	}

	// Wait until Prometheus has scraped the running VM a few times.
	deadline := time.Now().Add(90 * time.Second)
	var g usagegraph.Graph
	for {
		code, body := get(member, "vm="+strconv.Itoa(vmID)+"&range=hour")
		if code == http.StatusOK {
			if err := json.Unmarshal(body, &g); err != nil {
				t.Fatal(err)
			}
			if series(g, "memory") > 0 && series(g, "cpu") > 0 {
				break
			}
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "prometheus.log"))
			t.Fatalf("no CPU and memory points for VM %d within 90 s: last answer %d %s\nprometheus log tail:\n%s", vmID, code, body, tail(string(log), 3000))
		}
		time.Sleep(time.Second)
	}
	if len(g.Series) != 6 || g.Kind != "vm" || g.ID != vmID {
		t.Fatalf("graph %+v: want the VM's 6 series", g)
	}

	// The graph request's time, once data is there (what the graph page waits for).
	var total time.Duration
	const n = 10
	for range n {
		start := time.Now()
		if code, body := get(member, "vm="+strconv.Itoa(vmID)+"&range=day"); code != http.StatusOK {
			t.Fatalf("day graph: %d %s", code, body)
		}
		total += time.Since(start)
	}
	t.Logf("GET /api/usage (6 query_range calls to Prometheus): mean %s over %d requests", (total / n).Round(10*time.Microsecond), n)

	// The CLI prints the same series.
	var cliOut, cliErr strings.Builder
	sys := cli.IO{Stdin: strings.NewReader(""), Stdout: &cliOut, Stderr: &cliErr, Getenv: func(string) string { return "" }}
	if code := cli.Run(context.Background(), []string{"--endpoint", st.base, "--token", member, "graph", "--vm", strconv.Itoa(vmID)}, sys); code != 0 ||
		!strings.Contains(cliOut.String(), "memory") || !strings.Contains(cliOut.String(), "cpu") {
		t.Errorf("virtflow graph --vm: exit %d, out %q, err %q", code, cliOut.String(), cliErr.String())
	}

	// Isolation: another tenant's member cannot read the VM's series, nor a tenant the node's.
	other, err := st.env.Client.Tenant.Create().SetName(st.site.Prefix + "-graph-other").Save(ctx)
	if err != nil {
		t.Fatal(err)
	}
	otherTok := tenantToken(t, st.env.Client, other.ID, authz.RoleTenantMember, "graph-other")
	if code, body := get(otherTok, "vm="+strconv.Itoa(vmID)); code != http.StatusNotFound || !strings.Contains(string(body), "NOT_FOUND") {
		t.Errorf("another tenant's member reading the VM's graph: %d %s, want 404 NOT_FOUND", code, body)
	}
	if code, body := get(member, "node="+strconv.Itoa(st.node)); code != http.StatusNotFound {
		t.Errorf("a tenant member reading the node's graph: %d %s, want 404", code, body)
	}
	if code, body := get(member, "vm="+strconv.Itoa(vmID)+"&range=year"); code != http.StatusBadRequest || !strings.Contains(string(body), `"field":"range"`) {
		t.Errorf("range=year: %d %s, want 400 VALIDATION on range", code, body)
	}
	code, body := get(gqltest.AdminToken, "node="+strconv.Itoa(st.node)+"&range=hour")
	if code != http.StatusOK {
		t.Fatalf("admin reading the node's graph: %d %s", code, body)
	}
	var ng usagegraph.Graph
	if err := json.Unmarshal(body, &ng); err != nil || series(ng, "memory") == 0 {
		t.Errorf("node graph %s: want memory points (err %v)", body, err)
	}
}

// series returns the number of points of the series named name.
func series(g usagegraph.Graph, name string) int {
	for _, s := range g.Series {
		if s.Name == name {
			return len(s.Points)
		}
	}
	return 0
}

// freeAddr returns a loopback address with a port free right now.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// tail is the last n bytes of s.
func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
