package cli_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/virtflow/virtflow/ent/network"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
	"github.com/virtflow/virtflow/internal/testkit/stacktest"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

// TestClusters: clusters create, list, kubeconfig (which kubectl reads), scale and upgrade
// against a real server, worker and fleet whose guests report their bootstrap.
func TestClusters(t *testing.T) {
	st := stacktest.Start(t, testdb.DSN(t), stacktest.Spec{Racks: 3, HostsPerRack: 1, Guests: true, GuestBoot: 50 * time.Millisecond})
	st.Client.Network.Create().SetName(st.Site.Prefix + "-svc").SetCidr("10.79.0.0/24").SetVrf(st.Site.Prefix).
		SetPurpose(network.PurposeService).SetDatacenterID(st.Site.Datacenter).SaveX(gqltest.System())
	r := runner{t: t, env: map[string]string{"XDG_CONFIG_HOME": t.TempDir()}}
	r.must("login", "--endpoint", st.URL, "--token", st.AdminToken)
	out := r.must("clusters", "create", "--name", "cli-k8s", "--tenant", fmt.Sprint(st.Site.Tenant), "--region", fmt.Sprint(st.Site.Region),
		"--flavor", fmt.Sprint(st.Flavor.ID), "--control-planes", "1", "--workers", "1", "--plugins", "flannel")
	if !strings.Contains(out, "cli-k8s") {
		t.Fatalf("create said %q", out)
	}
	id := strings.Fields(strings.Split(out, "\n")[1])[0]
	waitActive := func(workers string) {
		t.Helper()
		for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			out = r.must("clusters", "list")
			for _, line := range strings.Split(out, "\n") {
				f := strings.Fields(line)
				if len(f) > 5 && f[0] == id && f[3] == "ACTIVE" && f[5] == workers &&
					strings.Contains(line, workers+"/"+workers+" workers ready") {
					return
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("cluster never ACTIVE with %s workers:\n%s", workers, out)
			}
		}
	}
	waitActive("1")
	kc := r.must("clusters", "kubeconfig", id)
	if kubectl, err := exec.LookPath("kubectl"); err == nil {
		path := filepath.Join(t.TempDir(), "kubeconfig")
		if err := os.WriteFile(path, []byte(kc), 0o600); err != nil {
			t.Fatal(err)
		}
		if b, err := exec.Command(kubectl, "config", "view", "--kubeconfig", path).CombinedOutput(); err != nil || !strings.Contains(string(b), ":6443") {
			t.Errorf("kubectl config view: %v\n%s", err, b)
		}
	} else if !strings.Contains(kc, "client-certificate-data") {
		t.Errorf("kubeconfig %q", kc)
	}
	r.must("clusters", "scale", id, "--workers", "2")
	waitActive("2")
	out = r.must("clusters", "upgrade", id, "--version", "v1.32.0")
	if !strings.Contains(out, "v1.32.0") {
		t.Errorf("upgrade said %q", out)
	}
	_, errs, code := r.run(context.Background(), "", "clusters", "scale", id, "--workers", "-3")
	if code == 0 {
		t.Errorf("scale to -3 succeeded: %s", errs)
	}
}
