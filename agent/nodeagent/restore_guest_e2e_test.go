package nodeagent_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/virtflow/virtflow/agent/hostnet"
	"github.com/virtflow/virtflow/agent/hypervisor"
	"github.com/virtflow/virtflow/agent/nodeagent"
	"github.com/virtflow/virtflow/demo/fleet"
	"github.com/virtflow/virtflow/ent/auditlog"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
	"github.com/virtflow/virtflow/internal/testkit/guestimage"
)

// TestRestoredBackupBootsARealGuest (issue 29: "a backup restored into a VM that boots"): a
// real guest (internal/testkit/guestimage's, booted from its image by QEMU under
// qemu:///system with software emulation) writes a marker with its instance-id onto its
// root disk and flushes it, then says it is READY; the running VM is backed up through
// GraphQL (createBackup: the agent pauses the domain and copies the disk, which its QEMU
// holds open, to the region's backup target) and the backup restored into a NEW VM
// (restoreBackup). The restored VM boots from the copy under QEMU, its guest finds the
// original's marker on its disk (its console says so), and it calls the readiness URL:
// READY, with its own host name. Then the original VM is stopped (an image of a running
// one is refused) and an image made from it (createImageFromVirtualMachine: the node's
// agent copies the disk and uploads it as the image's bytes): a third VM created from that
// image boots and its guest finds the same marker. Logs createBackup → AVAILABLE,
// restoreBackup → READY, createImageFromVirtualMachine → ACTIVE and create → READY.
//
// It skips only when a part is missing (qemu-system-x86_64, the kernel, busybox, xorriso or
// ISOLINUX, ip, libvirtd or its qemu driver), naming it.
func TestRestoredBackupBootsARealGuest(t *testing.T) {
	kernel, busybox := realGuestParts(t, true)
	hv := qemuSystemQEMU(t)

	// The VMs' network, as in TestGuestReadyEndToEnd: a /24 nobody on this host uses, with
	// the gateway (where the server listens) on a bridge without uplink.
	third := 150 + rand.IntN(50)
	for used(t, fmt.Sprintf("10.214.%d.", third)) {
		third++
	}
	cidr := fmt.Sprintf("10.214.%d.0/24", third)
	gw := fmt.Sprintf("10.214.%d.1", third)
	vlan := 3000 + rand.IntN(900)
	bridge := makeBridge(t, fmt.Sprintf("vftest%d", vlan), gw+"/24")

	st := startStackOn(t, 0, net.JoinHostPort(gw, "0"), hv)
	ctx, site := gqltest.System(), st.site
	api := &nodeagent.Client{URL: st.base, Token: gqltest.AdminToken}

	img := filepath.Join(t.TempDir(), "guest.img")
	if err := guestimage.WriteBootableImage(img, kernel, busybox); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(img)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) >= guestimage.DiskMarkerOffset {
		t.Fatalf("the guest's image (%d bytes) reaches the disk marker at %d", len(data), guestimage.DiskMarkerOffset)
	}
	imageID := uploadImage(t, api, st.base, "RAW", data)
	fl, err := site.Flavor(ctx, 1, 512, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	n, err := st.env.Client.Network.Create().SetName(site.Prefix + "-restorenet").SetCidr(cidr).SetVrf(site.Prefix).
		SetGateway(gw).SetVlan(vlan).SetDatacenterID(site.Datacenter).Save(ctx)
	if err != nil {
		t.Fatal(err)
	}
	bridge.rename(t, hostnet.BridgeName(int64(n.ID)))

	pool := "vftest-" + site.Prefix
	t.Cleanup(func() { removePool(t, pool) })
	target := t.TempDir()
	t.Cleanup(func() { removeBackupPools(t, target) })
	tok, err := fleet.IssueAgentToken(ctx, st.env.Client, st.env.Identity, st.node)
	if err != nil {
		t.Fatal(err)
	}
	ag, err := nodeagent.New(nodeagent.Config{APIURL: st.base, Token: tok, Hypervisor: hv, Log: st.log,
		HeartbeatInterval: time.Second, ResyncInterval: 5 * time.Second, RetryDelay: 100 * time.Millisecond,
		ShutdownTimeout: 2 * time.Second, // the guest has no ACPI daemon: powered off at once
		Pool:            pool, PoolPath: t.TempDir(), CacheDir: t.TempDir(), ConfigDriveDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = ag.Run(st.runCtx) }()

	vmInput := func(name string) map[string]any {
		return map[string]any{"name": name, "tenantID": gqltest.ID(site.Tenant), "regionID": gqltest.ID(site.Region),
			"flavorID": gqltest.ID(fl.ID), "imageID": imageID, "networkIDs": []string{gqltest.ID(n.ID)}}
	}
	// state polls a node's status (ERROR fails the test, with the console so far) and,
	// for a VM, its guest state.
	state := func(id string, console *consoleReader) (status, guest string) {
		var q struct {
			Node struct {
				VM, Backup, GuestState, StatusReason string
			}
		}
		if err := api.Do(ctx, `query($id: ID!) { node(id: $id) { ... on VirtualMachine { vm: status guestState statusReason } ... on Backup { backup: status statusReason } } }`,
			map[string]any{"id": id}, &q); err != nil {
			t.Fatal(err)
		}
		status = q.Node.VM + q.Node.Backup
		if status == "ERROR" {
			t.Fatalf("%s in ERROR: %s; console:\n%s", id, q.Node.StatusReason, console.tail())
		}
		return status, q.Node.GuestState
	}
	// bootToReady waits until VM id's guest is READY and returns its console.
	bootToReady := func(id string) *consoleReader {
		t.Helper()
		vmID, _ := strconv.ParseInt(id, 10, 64)
		domain := hypervisor.DomainName(vmID)
		t.Cleanup(func() { _ = hv.Undefine(context.Background(), domain) })
		var console *consoleReader
		eventuallyWithin(t, guestReadyTimeout, "VM "+id+"'s guest READY", func() bool {
			status, guest := state(id, console)
			if status == "ACTIVE" && console == nil {
				console = readConsole(t, hv, domain)
			}
			return guest == "READY" && console != nil
		})
		return console
	}

	var created struct{ CreateVirtualMachine struct{ ID string } }
	if err := api.Do(ctx, `mutation($in: CreateVirtualMachineInput!) { createVirtualMachine(input: $in) { id } }`,
		map[string]any{"in": vmInput(site.Prefix + "-orig")}, &created); err != nil {
		t.Fatal(err)
	}
	orig := created.CreateVirtualMachine.ID
	origConsole := bootToReady(orig)
	// The guest wrote its marker before its readiness call; the console may have been opened
	// after it printed that, so the marker is read back after the restore instead.
	wantMarker := "vm-" + orig

	if err := api.Do(ctx, `mutation($id: ID!, $dir: String!) { updateRegion(id: $id, input: {backupTarget: $dir}) { id } }`,
		map[string]any{"id": gqltest.ID(site.Region), "dir": target}, nil); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	var cb struct{ CreateBackup struct{ ID string } }
	if err := api.Do(ctx, `mutation($vm: ID!) { createBackup(input: {virtualMachineID: $vm, name: "before-restore"}) { id } }`,
		map[string]any{"vm": orig}, &cb); err != nil {
		t.Fatal(err)
	}
	bk := cb.CreateBackup.ID
	eventuallyWithin(t, 2*time.Minute, "the backup AVAILABLE", func() bool {
		s, _ := state(bk, origConsole)
		return s == "AVAILABLE"
	})
	backedUp := time.Since(start)

	start = time.Now()
	var rb struct{ RestoreBackup struct{ ID string } }
	if err := api.Do(ctx, `mutation($id: ID!, $in: CreateVirtualMachineInput!) { restoreBackup(id: $id, input: $in) { id } }`,
		map[string]any{"id": bk, "in": vmInput(site.Prefix + "-restored")}, &rb); err != nil {
		t.Fatal(err)
	}
	restored := rb.RestoreBackup.ID
	console := bootToReady(restored)
	ready := time.Since(start)
	if want := guestimage.DiskMarkerFound + wantMarker; !strings.Contains(console.tail(), want) {
		t.Fatalf("the restored guest's console lacks %q (the original's disk marker); console:\n%s", want, console.tail())
	}
	var vm struct {
		Node struct{ Name, GuestHostname string }
	}
	if err := api.Do(ctx, `query($id: ID!) { node(id: $id) { ... on VirtualMachine { name guestHostname } } }`,
		map[string]any{"id": restored}, &vm); err != nil {
		t.Fatal(err)
	}
	if vm.Node.GuestHostname != vm.Node.Name {
		t.Errorf("restored guest's host name %q, want its VM's name %q", vm.Node.GuestHostname, vm.Node.Name)
	}
	t.Logf("createBackup → AVAILABLE %.1f s (running VM, paused for the copy), restoreBackup → READY %.1f s (domain type qemu, software emulation)",
		backedUp.Seconds(), ready.Seconds())

	// An image made from the restored VM once it is stopped (createImageFromVirtualMachine:
	// its node's agent copies the disk and uploads it) boots a third VM whose guest finds
	// the same marker. A running VM is refused.
	imageFrom := func(vm, name string) (string, error) {
		var ci struct{ CreateImageFromVirtualMachine struct{ ID, Status string } }
		err := api.Do(ctx, `mutation($id: ID!, $name: String!) { createImageFromVirtualMachine(id: $id, input: {name: $name}) { id status } }`,
			map[string]any{"id": vm, "name": name}, &ci)
		return ci.CreateImageFromVirtualMachine.ID, err
	}
	if _, err := imageFrom(orig, site.Prefix+"-from-running"); err == nil || !strings.Contains(err.Error(), "stop it first") {
		t.Fatalf("an image from a running VM: %v; want a VALIDATION error", err)
	}
	if err := api.Do(ctx, `mutation($id: ID!) { stopVirtualMachine(id: $id) { id } }`, map[string]any{"id": orig}, nil); err != nil {
		t.Fatal(err)
	}
	eventuallyWithin(t, time.Minute, "the original VM STOPPED", func() bool { s, _ := state(orig, origConsole); return s == "STOPPED" })
	start = time.Now()
	golden, err := imageFrom(orig, site.Prefix+"-golden")
	if err != nil {
		t.Fatal(err)
	}
	eventuallyWithin(t, 3*time.Minute, "the image made from the VM ACTIVE", func() bool {
		var q struct {
			Node struct{ Status, StatusReason string }
		}
		if err := api.Do(ctx, `query($id: ID!) { node(id: $id) { ... on Image { status statusReason } } }`, map[string]any{"id": golden}, &q); err != nil {
			t.Fatal(err)
		}
		if q.Node.Status == "ERROR" {
			t.Fatalf("the image made from the VM is in ERROR: %s", q.Node.StatusReason)
		}
		return q.Node.Status == "ACTIVE"
	})
	imaged := time.Since(start)
	if n := st.env.Client.AuditLog.Query().Where(auditlog.Action("createImageFromVirtualMachine"), auditlog.ObjectType("Image")).CountX(ctx); n != 1 {
		t.Errorf("%d audit rows of createImageFromVirtualMachine on an Image; want 1", n)
	}
	// The node has room for two of these VMs: the restored one goes.
	if err := api.Do(ctx, `mutation($id: ID!) { deleteVirtualMachine(id: $id) }`, map[string]any{"id": restored}, nil); err != nil {
		t.Fatal(err)
	}
	eventuallyWithin(t, time.Minute, "the restored VM deleted", func() bool {
		var q struct{ Node *struct{ ID string } }
		err := api.Do(ctx, `query($id: ID!) { node(id: $id) { ... on VirtualMachine { id } } }`, map[string]any{"id": restored}, &q)
		return err != nil || q.Node == nil
	})
	fromImage := vmInput(site.Prefix + "-from-image")
	fromImage["imageID"] = golden
	if err := api.Do(ctx, `mutation($in: CreateVirtualMachineInput!) { createVirtualMachine(input: $in) { id } }`,
		map[string]any{"in": fromImage}, &created); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	console = bootToReady(created.CreateVirtualMachine.ID)
	if want := guestimage.DiskMarkerFound + wantMarker; !strings.Contains(console.tail(), want) {
		t.Fatalf("the guest of a VM made from the image lacks %q (the disk marker of the VM the image was made from); console:\n%s", want, console.tail())
	}
	t.Logf("createImageFromVirtualMachine → ACTIVE %.1f s, createVirtualMachine from it → READY %.1f s", imaged.Seconds(), time.Since(start).Seconds())
}

// removeBackupPools removes the pool the agent made over backup target dir (named as
// the agent names it: vf-backups- and the first 6 bytes of the directory's sha256) with
// its volumes: the directory is the test's.
func removeBackupPools(t *testing.T, dir string) {
	t.Helper()
	sum := sha256.Sum256([]byte(dir))
	removePool(t, "vf-backups-"+hex.EncodeToString(sum[:6]))
}
