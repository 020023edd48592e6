package kubecluster_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/virtflow/virtflow/ent/kubernetescluster"
	"github.com/virtflow/virtflow/ent/network"
	"github.com/virtflow/virtflow/ent/virtualmachine"
	"github.com/virtflow/virtflow/internal/gqltest"
	"github.com/virtflow/virtflow/internal/stacktest"
	"github.com/virtflow/virtflow/internal/testdb"
)

// TestClusterEndToEnd: the whole platform (server, standalone worker, simulated fleet whose
// guests report like the bootstrap script does): createKubernetesCluster through GraphQL
// becomes ACTIVE with its VMs ACTIVE and their guests READY, and its kubeconfig is served.
// It logs create → ACTIVE. The stack's site has one power zone, so the cluster has one
// control plane (three need three power zones; TestClusterLifecycle covers that).
func TestClusterEndToEnd(t *testing.T) {
	st := stacktest.Start(t, testdb.DSN(t), stacktest.Spec{Racks: 3, HostsPerRack: 1, Guests: true, GuestBoot: 100 * time.Millisecond})
	ctx := gqltest.System()
	st.Client.Network.Create().SetName(st.Site.Prefix + "-svc").SetCidr("10.78.0.0/24").SetVrf(st.Site.Prefix).
		SetPurpose(network.PurposeService).SetDatacenterID(st.Site.Datacenter).SaveX(ctx)
	do := func(query string, vars map[string]any) map[string]json.RawMessage {
		t.Helper()
		body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
		req, _ := http.NewRequest(http.MethodPost, st.URL+"/query", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+st.AdminToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out struct {
			Data   map[string]json.RawMessage `json:"data"`
			Errors []json.RawMessage          `json:"errors"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || len(out.Errors) > 0 {
			t.Fatalf("%v %s", err, out.Errors)
		}
		return out.Data
	}
	start := time.Now()
	data := do(`mutation($in: CreateKubernetesClusterInput!) { createKubernetesCluster(input: $in) { id status } }`,
		map[string]any{"in": map[string]any{"name": "e2e", "version": "v1.31.2", "tenantID": fmt.Sprint(st.Site.Tenant),
			"regionID": fmt.Sprint(st.Site.Region), "flavorID": fmt.Sprint(st.Flavor.ID),
			"controlPlaneCount": 1, "workerCount": 2, "bastionEnabled": true}})
	var created struct{ ID string }
	_ = json.Unmarshal(data["createKubernetesCluster"], &created)
	var k struct {
		Status, StatusReason, Kubeconfig string
		Nodes                            []struct{ Name, Role, State string }
	}
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		data = do(`query($id: ID!) { node(id: $id) { ... on KubernetesCluster { status statusReason nodes { name role state } } } }`,
			map[string]any{"id": created.ID})
		_ = json.Unmarshal(data["node"], &k)
		ready := 0
		for _, n := range k.Nodes {
			if n.State == "READY" {
				ready++
			}
		}
		if k.Status == "ACTIVE" && ready == 4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("cluster %s (%s) %+v", k.Status, k.StatusReason, k.Nodes)
		}
	}
	t.Logf("create → ACTIVE with all 4 nodes READY (1 + 2 + bastion) on the simulated fleet: %v", time.Since(start))
	vms := st.Client.VirtualMachine.Query().Where(virtualmachine.HasKubernetesClusterWith(kubernetescluster.Name("e2e"))).AllX(ctx)
	if len(vms) != 4 {
		t.Fatalf("%d VMs", len(vms))
	}
	for _, vm := range vms {
		if vm.Status != virtualmachine.StatusActive || vm.GuestState != virtualmachine.GuestStateReady {
			t.Errorf("%s: %s (%s), guest %s", vm.Name, vm.Status, vm.StatusReason, vm.GuestState)
		}
	}
	data = do(`query($id: ID!) { node(id: $id) { ... on KubernetesCluster { kubeconfig } } }`, map[string]any{"id": created.ID})
	_ = json.Unmarshal(data["node"], &k)
	if !strings.Contains(k.Kubeconfig, "certificate-authority-data") {
		t.Errorf("kubeconfig %q", k.Kubeconfig)
	}
}
