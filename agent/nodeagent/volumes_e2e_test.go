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
	"github.com/virtflow/virtflow/ent/ipaddress"
	"github.com/virtflow/virtflow/ent/network"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
)

// TestVolumesEndToEnd: a VM from an image (a qcow2 overlay root disk in the agent's pool), on
// two networks, with an SSH key and user-data (its cidata CD-ROM), gets a volume through
// GraphQL while it runs, on PostgreSQL + Redis with the worker and the agent
// on libvirtd's test driver, which cannot hot-plug: the volume is created in the node's pool
// and stays ATTACHING, its reason saying it takes effect at the next start; stopping the VM
// puts it in the domain's definition (ATTACHED), starting it again runs the domain with it.
// Detached and deleted, its data leaves the pool and the tenant's storage is given back.
func TestVolumesEndToEnd(t *testing.T) {
	st := startStack(t, 0)
	ctx, hv, site := gqltest.System(), st.hv, st.site
	api := &nodeagent.Client{URL: st.base, Token: gqltest.AdminToken}
	imageID := uploadImage(t, api, st.base, "RAW", make([]byte, 1<<20))
	tok, err := fleet.IssueAgentToken(ctx, st.env.Client, st.env.Identity, st.node)
	if err != nil {
		t.Fatal(err)
	}
	pool := fmt.Sprintf("vf-vol-e2e-%d", rand.Int64N(1<<40))
	t.Cleanup(func() { _ = hv.DeletePool(context.Background(), pool) })
	ag, err := nodeagent.New(nodeagent.Config{APIURL: st.base, Token: tok, Hypervisor: hv, Log: st.log,
		HeartbeatInterval: time.Second, ResyncInterval: time.Hour, RetryDelay: 10 * time.Millisecond,
		Pool: pool, PoolPath: t.TempDir() + "/pool", CacheDir: t.TempDir(), ConfigDriveDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = ag.Run(st.runCtx) }()
	fl, err := site.Flavor(ctx, 1, 512, 2, false)
	if err != nil {
		t.Fatal(err)
	}

	// Two networks, an SSH key and user-data: everything a VM can be given at once.
	var nets []string
	for i, cidr := range []string{"10.63.0.0/24", "10.64.0.0/24"} {
		n, err := st.env.Client.Network.Create().SetName(site.Prefix + "-vnet" + strconv.Itoa(i)).SetCidr(cidr).SetVrf(site.Prefix).
			SetGateway(strings.TrimSuffix(cidr, "0/24") + "1").SetDatacenterID(site.Datacenter).Save(ctx)
		if err != nil {
			t.Fatal(err)
		}
		nets = append(nets, gqltest.ID(n.ID))
	}
	var k struct{ CreateSSHKey struct{ ID string } }
	if err := api.Do(ctx, `mutation($in: CreateSSHKeyInput!) { createSSHKey(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"name": "vol-ops", "tenantID": gqltest.ID(site.Tenant),
			"publicKey": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl ops@example"}}, &k); err != nil {
		t.Fatal(err)
	}
	var created struct{ CreateVirtualMachine struct{ ID string } }
	if err := api.Do(ctx, `mutation($in: CreateVirtualMachineInput!) { createVirtualMachine(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"name": "with-volume", "tenantID": gqltest.ID(site.Tenant), "regionID": gqltest.ID(site.Region),
			"flavorID": gqltest.ID(fl.ID), "imageID": imageID, "networkIDs": nets, "sshKeyIDs": []string{k.CreateSSHKey.ID},
			"userData": "#cloud-config\npackages: [nginx]\n"}}, &created); err != nil {
		t.Fatal(err)
	}
	id := created.CreateVirtualMachine.ID
	vmID, _ := strconv.ParseInt(id, 10, 64)
	name := hypervisor.DomainName(vmID)
	t.Cleanup(func() { _ = hv.Undefine(context.Background(), name) })
	vmStatus := func() string {
		var q struct {
			Node struct{ Status, StatusReason string }
		}
		if err := api.Do(ctx, `query($id: ID!) { node(id: $id) { ... on VirtualMachine { status statusReason } } }`, map[string]any{"id": id}, &q); err != nil {
			t.Fatal(err)
		}
		if q.Node.Status == "ERROR" {
			t.Fatalf("VM in ERROR: %s", q.Node.StatusReason)
		}
		return q.Node.Status
	}
	eventually(t, "the VM ACTIVE", func() bool { return vmStatus() == "ACTIVE" })

	type vol struct{ ID, Status, StatusReason string }
	var cv struct{ CreateVolume vol }
	if err := api.Do(ctx, `mutation($in: CreateVolumeInput!) { createVolume(input: $in) { id status statusReason } }`,
		map[string]any{"in": map[string]any{"name": "data", "sizeGB": 1, "type": "SSD", "tenantID": gqltest.ID(site.Tenant), "virtualMachineID": id}}, &cv); err != nil {
		t.Fatal(err)
	}
	volID := cv.CreateVolume.ID
	volume := func() vol {
		var q struct{ Node vol }
		if err := api.Do(ctx, `query($id: ID!) { node(id: $id) { ... on Volume { id status statusReason } } }`, map[string]any{"id": volID}, &q); err != nil {
			t.Fatal(err)
		}
		return q.Node
	}
	inPool := func() bool {
		_, err := hv.Volume(ctx, pool, "vf-vol-"+volID)
		return err == nil
	}
	eventually(t, "the volume created in the pool, waiting for the next start", func() bool {
		v := volume()
		return inPool() && v.Status == "ATTACHING" && strings.Contains(v.StatusReason, "next start")
	})

	do := func(m string) {
		t.Helper()
		if err := api.Do(ctx, `mutation($id: ID!) { `+m+`(id: $id) { id } }`, map[string]any{"id": id}, nil); err != nil {
			t.Fatalf("%s: %v", m, err)
		}
	}
	do("stopVirtualMachine")
	eventually(t, "the VM STOPPED with its volume ATTACHED", func() bool { return vmStatus() == "STOPPED" && volume().Status == "ATTACHED" })
	do("startVirtualMachine")
	eventually(t, "the VM ACTIVE again", func() bool { return vmStatus() == "ACTIVE" })
	xml, err := hv.DomainXML(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{name + "-root", "<backingStore type='file'", "vf-vol-" + volID, "dev='vdb'", "device='cdrom'", "cidata"} {
		if !strings.Contains(xml, want) {
			t.Errorf("running domain lacks %s:\n%s", want, xml)
		}
	}
	var ports struct {
		Node struct {
			Ports struct {
				Edges []struct{ Node struct{ MAC string } }
			}
		}
	}
	if err := api.Do(ctx, `query($id: ID!) { node(id: $id) { ... on VirtualMachine { ports { edges { node { mac } } } } } }`,
		map[string]any{"id": id}, &ports); err != nil {
		t.Fatal(err)
	}
	if len(ports.Node.Ports.Edges) != 2 {
		t.Fatalf("VM has %d ports, want one per network (2)", len(ports.Node.Ports.Edges))
	}
	for _, p := range ports.Node.Ports.Edges {
		if !strings.Contains(xml, "<mac address='"+p.Node.MAC+"'/>") {
			t.Errorf("running domain has no interface with MAC %s", p.Node.MAC)
		}
	}

	// Detached from the running VM: DETACHING until the domain lets it go (next stop here).
	if err := api.Do(ctx, `mutation($id: ID!) { detachVolume(id: $id) { id } }`, map[string]any{"id": volID}, nil); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the volume DETACHING, the agent saying it goes at the next stop", func() bool {
		v := volume()
		return v.Status == "DETACHING" && strings.Contains(v.StatusReason, "next start")
	})
	do("stopVirtualMachine")
	eventually(t, "the volume AVAILABLE after the stop", func() bool { return volume().Status == "AVAILABLE" })
	if err := api.Do(ctx, `mutation($id: ID!) { deleteVolume(id: $id) }`, map[string]any{"id": volID}, nil); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the volume's data deleted from the pool and its row gone", func() bool {
		var q struct{ Node *vol }
		err := api.Do(ctx, `query($id: ID!) { node(id: $id) { ... on Volume { id } } }`, map[string]any{"id": volID}, &q)
		return !inPool() && (err != nil || q.Node == nil)
	})
	if v, err := site.Check(ctx); err != nil || len(v) > 0 {
		t.Fatalf("books after the volume went: %v %v", v, err)
	}
	// The VM deleted: its addresses released, its root disk gone from the pool.
	if err := api.Do(ctx, `mutation($id: ID!) { deleteVirtualMachine(id: $id) }`, map[string]any{"id": id}, nil); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the VM's addresses released and its root disk deleted", func() bool {
		n, err := st.env.Client.IPAddress.Query().Where(ipaddress.HasNetworkWith(network.NameHasPrefix(site.Prefix + "-vnet"))).Count(ctx)
		_, rootErr := hv.Volume(ctx, pool, name+"-root")
		return err == nil && n == 0 && rootErr != nil
	})
}
