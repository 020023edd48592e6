package provider_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/virtflow/virtflow/clients/apiclient"
	"github.com/virtflow/virtflow/ent/backup"
	"github.com/virtflow/virtflow/ent/image"
	"github.com/virtflow/virtflow/ent/snapshot"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
	"github.com/virtflow/virtflow/internal/testkit/stacktest"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

// TestTerraformSnapshotAndBackup: the real terraform CLI takes a snapshot and a backup of a
// VM (made through the API from an uploaded image, on a region with a backup target); apply
// returns once both are AVAILABLE, as the API reads, and the backup data source finds it by
// name; a plan right after is clean; both import
// by id to a clean plan; destroy deletes them and their rows go.
func TestTerraformSnapshotAndBackup(t *testing.T) {
	st := stacktest.Start(t, testdb.DSN(t), stacktest.Spec{Racks: 1, HostsPerRack: 1})
	r := newTF(t, st)
	ctx, sys := context.Background(), gqltest.System()
	c, err := apiclient.New(st.URL, st.AdminToken)
	if err != nil {
		t.Fatal(err)
	}
	st.Client.Region.UpdateOneID(st.Site.Region).SetBackupTarget("/var/lib/virtflow/backups/tf").ExecX(sys)
	fl := st.Client.Flavor.Create().SetName(st.Site.Prefix + "-disk").SetVcpus(1).SetMemoryMB(512).SetDiskGB(2).SaveX(sys)
	img := uploadImage(t, st)
	tenant, region := fmt.Sprint(st.Site.Tenant), fmt.Sprint(st.Site.Region)
	imgID, flID := fmt.Sprint(img), fmt.Sprint(fl.ID)
	vm, err := apiclient.CreateVM(ctx, c, apiclient.CreateVirtualMachineInput{Name: "tf-copied", TenantID: tenant, RegionID: region,
		FlavorID: flID, ImageID: &imgID})
	if err != nil {
		t.Fatal(err)
	}
	vmID := vm.CreateVirtualMachine.Id
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		g, err := apiclient.GetVM(ctx, c, vmID)
		if err != nil {
			t.Fatal(err)
		}
		if s := g.VirtualMachines.Edges[0].Node.Status; s == apiclient.VirtualMachineStatusActive {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("VM still %s", s)
		}
	}

	r.write(header + fmt.Sprintf(`
resource "virtflow_snapshot" "s" {
  name               = "tf-before-upgrade"
  description        = "taken by terraform"
  virtual_machine_id = %[1]q
}

resource "virtflow_backup" "b" {
  name               = "tf-nightly"
  virtual_machine_id = %[1]q
}

data "virtflow_backup" "by_name" {
  name = virtflow_backup.b.name
}
`, vmID))
	r.must("apply", "-input=false", "-no-color", "-auto-approve")
	r.planClean("after apply")
	state := r.must("show", "-json")
	snapID, backupID := resourceID(t, state, "virtflow_snapshot.s"), resourceID(t, state, "virtflow_backup.b")
	if s, err := apiclient.GetSnapshot(ctx, c, snapID); err != nil || len(s.Snapshots.Edges) != 1 ||
		s.Snapshots.Edges[0].Node.Status != apiclient.SnapshotStatusAvailable || s.Snapshots.Edges[0].Node.SizeGB != 2 {
		t.Errorf("after apply the snapshot reads %+v (%v), want AVAILABLE of 2 GiB", s, err)
	}
	if b, err := apiclient.GetBackup(ctx, c, backupID); err != nil || len(b.Backups.Edges) != 1 ||
		b.Backups.Edges[0].Node.Status != apiclient.BackupStatusAvailable || b.Backups.Edges[0].Node.Tenant.Id != tenant {
		t.Errorf("after apply the backup reads %+v (%v), want AVAILABLE in tenant %s", b, err, tenant)
	}

	if got := resourceID(t, state, "data.virtflow_backup.by_name"); got != backupID {
		t.Errorf("data.virtflow_backup by name reads id %q, want %q", got, backupID)
	}
	for addr, id := range map[string]string{"virtflow_snapshot.s": snapID, "virtflow_backup.b": backupID} {
		r.must("state", "rm", "-no-color", addr)
		r.must("import", "-input=false", "-no-color", addr, id)
	}
	r.planClean("after import")
	r.must("destroy", "-input=false", "-no-color", "-auto-approve")
	if n := st.Client.Snapshot.Query().Where(snapshot.Name("tf-before-upgrade")).CountX(sys); n != 0 {
		t.Errorf("%d snapshots left after destroy", n)
	}
	if n := st.Client.Backup.Query().Where(backup.Name("tf-nightly")).CountX(sys); n != 0 {
		t.Errorf("%d backups left after destroy", n)
	}
}

// uploadImage makes an upload image and PUTs a blank 1 MiB raw disk to the server's image
// store (as the demo does), so that the simulated agents fetch a real image; it returns the
// image's id once it is ACTIVE.
func uploadImage(t *testing.T, st *stacktest.Stack) int {
	t.Helper()
	sys := gqltest.System()
	img := st.Client.Image.Create().SetName(st.Site.Prefix + "-blank").SetSource("upload").SetFormat(image.FormatRaw).SaveX(sys)
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
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if st.Client.Image.GetX(sys, img.ID).Status == image.StatusActive {
			return img.ID
		}
		if time.Now().After(deadline) {
			t.Fatalf("image %d not ACTIVE after its upload", img.ID)
		}
	}
}
