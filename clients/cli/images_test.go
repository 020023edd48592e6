package cli_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/virtflow/virtflow/ent/image"
	"github.com/virtflow/virtflow/ent/virtualmachine"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
	"github.com/virtflow/virtflow/internal/testkit/stacktest"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

// TestCLIImageFromVM runs `virtflow image create-from-vm` against a real server, worker and
// simulated fleet, naming the VM by name: a running VM exits 1 (stop it first); once it is
// stopped the image is in the catalog, PENDING, made from it (source vm:<id>, QCOW2). Without --name it is a usage error. (The simulated nodes keep no
// disk bytes to upload: the upload is nodeagent's TestRestoredBackupBootsARealGuest's.)
func TestCLIImageFromVM(t *testing.T) {
	st := stacktest.Start(t, testdb.DSN(t), stacktest.Spec{})
	r := runner{t: t, env: map[string]string{"XDG_CONFIG_HOME": t.TempDir()}}
	ctx := context.Background()
	sys := gqltest.System()
	r.must("login", "--endpoint", st.URL, "--token", st.AdminToken)
	tenant := st.Client.Tenant.GetX(sys, st.Site.Tenant).Name
	region := st.Client.Region.GetX(sys, st.Site.Region)
	flavor := st.Client.Flavor.Create().SetName(st.Site.Prefix + "-img").SetVcpus(1).SetMemoryMB(512).SetDiskGB(2).SaveX(sys)
	img := uploadedImage(t, st)
	r.must("vm", "create", "--name", "cli-image-src", "--tenant", tenant, "--region", region.Name,
		"--flavor", flavor.Name, "--image", img, "--wait")
	vm := st.Client.VirtualMachine.Query().Where(virtualmachine.Name("cli-image-src")).OnlyX(sys)

	if _, _, code := r.run(ctx, "", "image", "create-from-vm", "cli-image-src"); code != 2 {
		t.Errorf("image create-from-vm without --name: exit %d, want 2", code)
	}
	if _, errs, code := r.run(ctx, "", "image", "create-from-vm", "cli-image-src", "--name", "cli-golden"); code != 1 || !strings.Contains(errs, "stop it first") {
		t.Errorf("image of a running VM: exit %d, %q; want 1 asking to stop it", code, errs)
	}
	r.must("vm", "stop", "cli-image-src", "--wait")
	var got struct{ ID, Name, Status, Format, Source string }
	out := r.must("image", "create-from-vm", "cli-image-src", "--name", "cli-golden", "-o", "json")
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("image create-from-vm -o json: %v\n%s", err, out)
	}
	if got.Name != "cli-golden" || got.Status != "PENDING" || got.Format != "QCOW2" || got.Source != "vm:"+strconv.Itoa(vm.ID) {
		t.Fatalf("image create-from-vm: %+v; want cli-golden PENDING QCOW2 from vm:%d", got, vm.ID)
	}
	if n := st.Client.Image.Query().Where(image.Name("cli-golden"), image.Source("vm:"+strconv.Itoa(vm.ID))).CountX(sys); n != 1 {
		t.Fatalf("%d catalog images cli-golden made from the VM; want 1", n)
	}
}
