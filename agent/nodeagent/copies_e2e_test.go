package nodeagent_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/virtflow/virtflow/agent/hypervisor"
	"github.com/virtflow/virtflow/agent/nodeagent"
	"github.com/virtflow/virtflow/demo/fleet"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
)

// TestSnapshotsAndBackupsEndToEnd (issue 29), on PostgreSQL + Redis with the worker and the
// agent on libvirtd's test driver, through GraphQL: a running VM's snapshot is copied into
// the node's pool (AVAILABLE only once it is there), reverted onto the stopped VM
// (REVERTING, then AVAILABLE with one revert), deleted (gone from the pool); a backup is
// copied to the region's backup target (a pool over that directory) and restored into a
// NEW VM whose root disk is a standalone copy (no backing image), which runs; a clone runs
// too. The real-guest counterpart is the storage contract on qemu:///system (qemu-img
// compare of the copies).
func TestSnapshotsAndBackupsEndToEnd(t *testing.T) {
	st := startStack(t, 0)
	ctx, hv, site := gqltest.System(), st.hv, st.site
	api := &nodeagent.Client{URL: st.base, Token: gqltest.AdminToken}
	imageID := uploadImage(t, api, st.base, "RAW", make([]byte, 1<<20))
	tok, err := fleet.IssueAgentToken(ctx, st.env.Client, st.env.Identity, st.node)
	if err != nil {
		t.Fatal(err)
	}
	pool := fmt.Sprintf("vf-copy-e2e-%d", rand.Int64N(1<<40))
	t.Cleanup(func() { _ = hv.DeletePool(context.Background(), pool) })
	ag, err := nodeagent.New(nodeagent.Config{APIURL: st.base, Token: tok, Hypervisor: hv, Log: st.log,
		HeartbeatInterval: time.Second, ResyncInterval: 2 * time.Second, RetryDelay: 10 * time.Millisecond,
		Pool: pool, PoolPath: t.TempDir() + "/pool", CacheDir: t.TempDir(), ConfigDriveDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = ag.Run(st.runCtx) }()
	fl, err := site.Flavor(ctx, 1, 512, 2, false)
	if err != nil {
		t.Fatal(err)
	}
	vmInput := func(name string) map[string]any {
		return map[string]any{"name": name, "tenantID": gqltest.ID(site.Tenant), "regionID": gqltest.ID(site.Region),
			"flavorID": gqltest.ID(fl.ID), "imageID": imageID}
	}
	var created struct{ CreateVirtualMachine struct{ ID string } }
	if err := api.Do(ctx, `mutation($in: CreateVirtualMachineInput!) { createVirtualMachine(input: $in) { id } }`,
		map[string]any{"in": vmInput("to-copy")}, &created); err != nil {
		t.Fatal(err)
	}
	id := created.CreateVirtualMachine.ID
	vmID, _ := strconv.ParseInt(id, 10, 64)
	t.Cleanup(func() { _ = hv.Undefine(context.Background(), hypervisor.DomainName(vmID)) })
	status := func(id string) (string, string) {
		var q struct {
			Node struct {
				VM           string `json:"vm"`
				Snapshot     string `json:"snapshot"`
				Backup       string `json:"backup"`
				Status       string
				StatusReason string
			}
		}
		if err := api.Do(ctx, `query($id: ID!) { node(id: $id) { ... on VirtualMachine { vm: status statusReason } ... on Snapshot { snapshot: status statusReason } ... on Backup { backup: status statusReason } } }`,
			map[string]any{"id": id}, &q); err != nil {
			t.Fatal(err)
		}
		q.Node.Status = q.Node.VM + q.Node.Snapshot + q.Node.Backup
		if q.Node.Status == "ERROR" {
			t.Fatalf("%s in ERROR: %s", id, q.Node.StatusReason)
		}
		return q.Node.Status, q.Node.StatusReason
	}
	is := func(id, want string) func() bool {
		return func() bool { s, _ := status(id); return s == want }
	}
	eventually(t, "the VM ACTIVE", is(id, "ACTIVE"))

	var cs struct{ CreateSnapshot struct{ ID, Status string } }
	if err := api.Do(ctx, `mutation($vm: ID!) { createSnapshot(input: {virtualMachineID: $vm, name: "first"}) { id status } }`,
		map[string]any{"vm": id}, &cs); err != nil {
		t.Fatal(err)
	}
	snap := cs.CreateSnapshot.ID
	if cs.CreateSnapshot.Status != "PENDING" {
		t.Fatalf("new snapshot %s; want PENDING", cs.CreateSnapshot.Status)
	}
	eventually(t, "the snapshot AVAILABLE and in the pool", func() bool {
		_, err := hv.Volume(ctx, pool, "vf-snap-"+snap)
		return err == nil && func() bool { s, _ := status(snap); return s == "AVAILABLE" }()
	})
	if err := api.Do(ctx, `mutation($id: ID!) { stopVirtualMachine(id: $id) { id } }`, map[string]any{"id": id}, nil); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the VM STOPPED", is(id, "STOPPED"))
	if err := api.Do(ctx, `mutation($id: ID!) { revertSnapshot(id: $id) { id } }`, map[string]any{"id": snap}, nil); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the revert done", func() bool {
		var q struct {
			Node struct {
				Status  string
				Reverts int
			}
		}
		if err := api.Do(ctx, `query($id: ID!) { node(id: $id) { ... on Snapshot { status reverts } } }`, map[string]any{"id": snap}, &q); err != nil {
			t.Fatal(err)
		}
		return q.Node.Status == "AVAILABLE" && q.Node.Reverts == 1
	})
	if err := api.Do(ctx, `mutation($id: ID!) { startVirtualMachine(id: $id) { id } }`, map[string]any{"id": id}, nil); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the reverted VM ACTIVE", is(id, "ACTIVE"))

	target := t.TempDir()
	if err := api.Do(ctx, `mutation($id: ID!, $dir: String!) { updateRegion(id: $id, input: {backupTarget: $dir}) { id } }`,
		map[string]any{"id": gqltest.ID(site.Region), "dir": target}, nil); err != nil {
		t.Fatal(err)
	}
	var cb struct{ CreateBackup struct{ ID string } }
	if err := api.Do(ctx, `mutation($vm: ID!) { createBackup(input: {virtualMachineID: $vm, name: "nightly"}) { id } }`,
		map[string]any{"vm": id}, &cb); err != nil {
		t.Fatal(err)
	}
	bk := cb.CreateBackup.ID
	eventually(t, "the backup AVAILABLE", is(bk, "AVAILABLE"))
	var rb struct{ RestoreBackup struct{ ID string } }
	if err := api.Do(ctx, `mutation($id: ID!, $in: CreateVirtualMachineInput!) { restoreBackup(id: $id, input: $in) { id } }`,
		map[string]any{"id": bk, "in": vmInput("restored")}, &rb); err != nil {
		t.Fatal(err)
	}
	restored := rb.RestoreBackup.ID
	rID, _ := strconv.ParseInt(restored, 10, 64)
	t.Cleanup(func() { _ = hv.Undefine(context.Background(), hypervisor.DomainName(rID)) })
	eventually(t, "the restored VM ACTIVE", is(restored, "ACTIVE"))
	xml, err := hv.DomainXML(ctx, hypervisor.DomainName(rID))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(xml, hypervisor.DomainName(rID)+"-root") || strings.Contains(xml, "<backingStore type='file'") {
		t.Errorf("restored domain's root disk is not a standalone copy:\n%s", xml)
	}

	var cl struct{ CloneVirtualMachine struct{ ID string } }
	if err := api.Do(ctx, `mutation($id: ID!, $in: CreateVirtualMachineInput!) { cloneVirtualMachine(id: $id, input: $in) { id } }`,
		map[string]any{"id": id, "in": vmInput("cloned")}, &cl); err != nil {
		t.Fatal(err)
	}
	cID, _ := strconv.ParseInt(cl.CloneVirtualMachine.ID, 10, 64)
	t.Cleanup(func() { _ = hv.Undefine(context.Background(), hypervisor.DomainName(cID)) })
	eventually(t, "the clone ACTIVE", is(cl.CloneVirtualMachine.ID, "ACTIVE"))

	if err := api.Do(ctx, `mutation($id: ID!) { deleteSnapshot(id: $id) }`, map[string]any{"id": snap}, nil); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the snapshot gone from the pool and the API", func() bool {
		_, perr := hv.Volume(ctx, pool, "vf-snap-"+snap)
		var q struct{ Node *struct{ ID string } }
		err := api.Do(ctx, `query($id: ID!) { node(id: $id) { ... on Snapshot { id } } }`, map[string]any{"id": snap}, &q)
		return perr != nil && (err != nil || q.Node == nil)
	})
}
