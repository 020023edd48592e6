package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/virtflow/virtflow/ent/backup"
	"github.com/virtflow/virtflow/ent/image"
	"github.com/virtflow/virtflow/ent/snapshot"
	"github.com/virtflow/virtflow/ent/virtualmachine"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
	"github.com/virtflow/virtflow/internal/testkit/stacktest"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

// TestCLISnapshotsBackupsAndClones runs `virtflow snapshot`, `backup` and `clone` against a
// real server, worker and simulated fleet, naming everything by name: a snapshot is taken
// and waited for, a revert of a running VM exits 1 (stop it first) and after a stop reverts
// the disk (the API counts the revert); a backup is taken, restored into a new VM that
// becomes ACTIVE with restoredFrom naming it; a clone makes another; snapshot and backup are
// deleted and their rows go. A snapshot named without its VM is a usage error.
func TestCLISnapshotsBackupsAndClones(t *testing.T) {
	st := stacktest.Start(t, testdb.DSN(t), stacktest.Spec{})
	r := runner{t: t, env: map[string]string{"XDG_CONFIG_HOME": t.TempDir()}}
	ctx := context.Background()
	sys := gqltest.System()
	r.must("login", "--endpoint", st.URL, "--token", st.AdminToken)
	tenant := st.Client.Tenant.GetX(sys, st.Site.Tenant).Name
	region := st.Client.Region.GetX(sys, st.Site.Region)
	st.Client.Region.UpdateOne(region).SetBackupTarget("/var/lib/virtflow/backups/cli").ExecX(sys)
	flavor := st.Client.Flavor.Create().SetName(st.Site.Prefix + "-disk").SetVcpus(1).SetMemoryMB(512).SetDiskGB(2).SaveX(sys)

	img := uploadedImage(t, st)
	r.must("vm", "create", "--name", "cli-copy-src", "--tenant", tenant, "--region", region.Name,
		"--flavor", flavor.Name, "--image", img, "--wait")
	vm := st.Client.VirtualMachine.Query().Where(virtualmachine.Name("cli-copy-src")).OnlyX(sys)

	var snap struct{ ID, Name, Status string }
	out := r.must("snapshot", "create", "cli-copy-src", "--name", "before-upgrade", "--wait", "-o", "json")
	if err := json.Unmarshal([]byte(out), &snap); err != nil || snap.Status != "AVAILABLE" || snap.Name != "before-upgrade" {
		t.Fatalf("snapshot create --wait: %+v %v\n%s", snap, err, out)
	}
	if out := r.must("snapshot", "list", "--vm", "cli-copy-src"); !strings.Contains(out, "before-upgrade") || !strings.Contains(out, "AVAILABLE") {
		t.Errorf("snapshot list:\n%s", out)
	}
	if _, _, code := r.run(ctx, "", "snapshot", "revert", "before-upgrade"); code != 2 {
		t.Errorf("snapshot revert by name without --vm: exit %d, want 2", code)
	}
	if _, errs, code := r.run(ctx, "", "snapshot", "revert", "before-upgrade", "--vm", "cli-copy-src"); code != 1 || !strings.Contains(errs, "stop it") {
		t.Errorf("revert of a running VM: exit %d, %q; want 1 asking to stop it", code, errs)
	}
	r.must("vm", "stop", "cli-copy-src", "--wait")
	if out := r.must("snapshot", "revert", "before-upgrade", "--vm", "cli-copy-src", "--wait", "-o", "json"); !strings.Contains(out, `"AVAILABLE"`) {
		t.Errorf("snapshot revert --wait:\n%s", out)
	}
	if s := st.Client.Snapshot.Query().Where(snapshot.Name("before-upgrade"), snapshot.HasVirtualMachineWith(virtualmachine.ID(vm.ID))).OnlyX(sys); s.Reverts != 1 {
		t.Errorf("after the revert the snapshot counts %d reverts, want 1", s.Reverts)
	}

	var bk struct{ ID, Status string }
	out = r.must("backup", "create", "cli-copy-src", "--name", "cli-nightly", "--wait", "-o", "json")
	if err := json.Unmarshal([]byte(out), &bk); err != nil || bk.Status != "AVAILABLE" {
		t.Fatalf("backup create --wait: %+v %v\n%s", bk, err, out)
	}
	if out := r.must("backup", "list", "--vm", "cli-copy-src"); !strings.Contains(out, "cli-nightly") {
		t.Errorf("backup list --vm:\n%s", out)
	}
	if out := r.must("backup", "list", "--tenant", tenant, "-o", "yaml"); !strings.Contains(out, "name: cli-nightly") || !strings.Contains(out, "sizeGB: 2\n") {
		t.Errorf("backup list --tenant -o yaml:\n%s", out)
	}
	var restored struct{ ID, Name, Status string }
	out = r.must("backup", "restore", "cli-nightly", "--tenant", tenant, "--name", "cli-restored", "--wait", "-o", "json")
	if err := json.Unmarshal([]byte(out), &restored); err != nil || restored.Status != "ACTIVE" {
		t.Fatalf("backup restore --wait: %+v %v\n%s", restored, err, out)
	}
	if from := st.Client.VirtualMachine.Query().Where(virtualmachine.Name("cli-restored")).QueryRestoredFrom().OnlyX(sys); from.Name != "cli-nightly" {
		t.Errorf("the restored VM names backup %s, want cli-nightly", from.Name)
	}
	if _, errs, code := r.run(ctx, "", "backup", "restore", "no-such-backup", "--name", "x"); code != 1 || !strings.Contains(errs, "no-such-backup") {
		t.Errorf("restore of a missing backup: exit %d, %q", code, errs)
	}

	var clone struct{ ID, Status string }
	out = r.must("clone", "cli-copy-src", "--name", "cli-clone", "--wait", "-o", "json")
	if err := json.Unmarshal([]byte(out), &clone); err != nil || clone.Status != "ACTIVE" {
		t.Fatalf("clone --wait: %+v %v\n%s", clone, err, out)
	}
	if from := st.Client.VirtualMachine.Query().Where(virtualmachine.Name("cli-clone")).QueryRestoredFrom().OnlyX(sys); from.Name != "clone-cli-clone" {
		t.Errorf("the clone was restored from %s, want clone-cli-clone", from.Name)
	}

	r.must("snapshot", "delete", "before-upgrade", "--vm", "cli-copy-src")
	r.must("backup", "delete", "cli-nightly")
	deadline := time.Now().Add(time.Minute)
	for {
		s := st.Client.Snapshot.Query().Where(snapshot.HasVirtualMachineWith(virtualmachine.ID(vm.ID))).CountX(sys)
		b := st.Client.Backup.Query().Where(backup.Name("cli-nightly")).CountX(sys)
		if s == 0 && b == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after delete: %d snapshots, %d backups remain", s, b)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// uploadedImage makes an upload image and PUTs a blank 1 MiB raw disk to the server's image
// store (as the demo does), so that the simulated agents fetch a real image with its
// checksum; it returns the image's name once it is ACTIVE.
func uploadedImage(t *testing.T, st *stacktest.Stack) string {
	t.Helper()
	sys := gqltest.System()
	name := st.Site.Prefix + "-blank"
	img := st.Client.Image.Create().SetName(name).SetSource("upload").SetFormat(image.FormatRaw).SaveX(sys)
	req, err := http.NewRequest(http.MethodPut, fmt.Sprintf("%s/images/%d/data", st.URL, img.ID), bytes.NewReader(make([]byte, 1<<20)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+st.AdminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("upload image: %s", resp.Status)
	}
	for deadline := time.Now().Add(30 * time.Second); ; {
		if st.Client.Image.GetX(sys, img.ID).Status == image.StatusActive {
			return name
		}
		if time.Now().After(deadline) {
			t.Fatalf("image %s not ACTIVE after its upload", name)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
