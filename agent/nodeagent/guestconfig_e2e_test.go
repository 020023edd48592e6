package nodeagent_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kdomanski/iso9660"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/crypto/ssh"

	"github.com/virtflow/virtflow/agent/hostnet"
	"github.com/virtflow/virtflow/agent/hypervisor"
	"github.com/virtflow/virtflow/agent/nodeagent"
	"github.com/virtflow/virtflow/demo/fleet"
	"github.com/virtflow/virtflow/ent/ipaddress"
	"github.com/virtflow/virtflow/ent/network"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
)

// TestGuestConfigEndToEnd: a VM created through GraphQL on two networks, with an SSH key,
// user-data and bootDevice CDROM goes through the worker (which renders its config drive
// into the assignment) and the agent on libvirtd's test driver: the domain has both
// interfaces with the MACs of the VM's ports, the cidata CD-ROM (read-only, SATA) and boots
// from the CD-ROM; the ISO's files say what the VM is and Debian's cloud-init accepts its
// user-data and network-config. Each network has its own bridge (hostnet.BridgeName), which
// the agent creates (in a network namespace of the test's) before the domain starts and
// removes once the VM is gone; only the first NIC gets a default route. Deleting the VM
// releases its addresses and the drive.
func TestGuestConfigEndToEnd(t *testing.T) {
	st := startStack(t, 0)
	ctx, hv, site := gqltest.System(), st.hv, st.site
	const admin = gqltest.AdminToken
	driveDir := t.TempDir()
	tok, err := fleet.IssueAgentToken(ctx, st.env.Client, st.env.Identity, st.node)
	if err != nil {
		t.Fatal(err)
	}
	nsh := testNamespace(t)
	ag, err := nodeagent.New(nodeagent.Config{APIURL: st.base, Token: tok, Hypervisor: hv, Log: st.log,
		HeartbeatInterval: time.Second, ResyncInterval: time.Hour, RetryDelay: 10 * time.Millisecond, ConfigDriveDir: driveDir,
		Networks: hostnet.New(nsh, "")})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = ag.Run(st.runCtx) }()

	var nets []string
	var bridges []string
	for i, cidr := range []string{"10.61.0.0/24", "10.62.0.0/24"} {
		gw := strings.TrimSuffix(cidr, "0/24") + "1"
		n, err := st.env.Client.Network.Create().SetName(site.Prefix + "-net" + strconv.Itoa(i)).SetCidr(cidr).SetVrf(site.Prefix).
			SetGateway(gw).SetDNSServers([]string{"192.0.2.53"}).SetDatacenterID(site.Datacenter).Save(ctx)
		if err != nil {
			t.Fatal(err)
		}
		nets = append(nets, gqltest.ID(n.ID))
		bridges = append(bridges, hostnet.BridgeName(int64(n.ID)))
	}
	priv := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, ed25519.SeedSize))
	pub, _ := ssh.NewPublicKey(priv.Public())
	key := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pub))) + " ops@example"

	api := &nodeagent.Client{URL: st.base, Token: admin}
	var k struct {
		CreateSSHKey struct{ ID, Fingerprint string }
	}
	if err := api.Do(ctx, `mutation($in: CreateSSHKeyInput!) { createSSHKey(input: $in) { id fingerprint } }`,
		map[string]any{"in": map[string]any{"name": "ops", "publicKey": key, "tenantID": gqltest.ID(site.Tenant)}}, &k); err != nil {
		t.Fatal(err)
	}
	if k.CreateSSHKey.Fingerprint != ssh.FingerprintSHA256(pub) {
		t.Errorf("fingerprint %q, want %q", k.CreateSSHKey.Fingerprint, ssh.FingerprintSHA256(pub))
	}
	statuses := subscribeVMStatus(t, st.runCtx, st.base, admin)
	userData := "#cloud-config\npackages: [nginx]\nruncmd:\n  - [systemctl, enable, --now, nginx]\n"
	var created struct{ CreateVirtualMachine struct{ ID string } }
	if err := api.Do(ctx, `mutation($in: CreateVirtualMachineInput!) { createVirtualMachine(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"name": "guest-1", "tenantID": gqltest.ID(site.Tenant), "regionID": gqltest.ID(site.Region),
			"flavorID": gqltest.ID(st.flavor.ID), "networkIDs": nets, "sshKeyIDs": []string{k.CreateSSHKey.ID},
			"userData": userData, "bootDevice": "CDROM"}}, &created); err != nil {
		t.Fatal(err)
	}
	id := created.CreateVirtualMachine.ID
	vmID, _ := strconv.ParseInt(id, 10, 64)
	name := hypervisor.DomainName(vmID)
	t.Cleanup(func() { _ = hv.Undefine(context.Background(), name) })
	deadline := time.After(30 * time.Second)
	for active := false; !active; {
		select {
		case ev := <-statuses:
			active = ev.ID == id && ev.Status == "ACTIVE"
			if ev.ID == id && ev.Status == "ERROR" {
				t.Fatalf("VM in ERROR: %s", ev.StatusReason)
			}
		case <-deadline:
			t.Fatal("VM not ACTIVE within 30 s")
		}
	}

	var vm struct {
		Node struct {
			Ports struct {
				Edges []struct {
					Node struct {
						Name, MAC   string
						IPAddresses struct {
							Edges []struct{ Node struct{ Address string } }
						}
					}
				}
			}
		}
	}
	if err := api.Do(ctx, `query($id: ID!) { node(id: $id) { ... on VirtualMachine {
		ports { edges { node { name mac ipAddresses { edges { node { address } } } } } } } } }`,
		map[string]any{"id": id}, &vm); err != nil {
		t.Fatal(err)
	}
	ports := vm.Node.Ports.Edges
	if len(ports) != 2 {
		t.Fatalf("VM has %d ports, want 2", len(ports))
	}
	xml, err := hv.DomainXML(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ports {
		if !strings.Contains(xml, "<mac address='"+p.Node.MAC+"'/>") {
			t.Errorf("domain XML has no interface with MAC %s:\n%s", p.Node.MAC, xml)
		}
		if len(p.Node.IPAddresses.Edges) != 1 {
			t.Errorf("port %s has %d addresses, want 1", p.Node.Name, len(p.Node.IPAddresses.Edges))
		}
	}
	// Two networks, two bridges: each interface is in its network's own bridge, which the
	// agent created.
	if bridges[0] == bridges[1] {
		t.Fatalf("two networks share bridge %s", bridges[0])
	}
	for _, b := range bridges {
		if !strings.Contains(xml, "<source bridge='"+b+"'/>") {
			t.Errorf("domain XML has no interface in bridge %s:\n%s", b, xml)
		}
		if l, err := nsh.LinkByName(b); err != nil || l.Type() != "bridge" {
			t.Errorf("bridge %s not created: %v", b, err)
		}
	}
	if strings.Contains(xml, "br-vlan") {
		t.Errorf("domain XML names a br-vlan bridge:\n%s", xml)
	}
	iso := nodeagent.ConfigDrivePath(driveDir, name)
	for _, want := range []string{"<disk type='file' device='cdrom'>", "<source file='" + iso + "'", "<readonly/>", "bus='sata'", "<boot dev='cdrom'/>"} {
		if !strings.Contains(xml, want) {
			t.Errorf("domain XML lacks %s:\n%s", want, xml)
		}
	}

	files := readDrive(t, iso)
	if md := string(files["meta-data"]); !strings.Contains(md, "instance-id: vm-"+id) ||
		!strings.Contains(md, "virtflow_ready_url: "+strings.TrimSuffix(st.base, "/query")+"/guest/ready") ||
		!strings.Contains(md, "virtflow_guest_token: vfg_") {
		t.Errorf("meta-data lacks the instance-id, the readiness URL or the guest credential: %s", md)
	}
	if vd := string(files["vendor-data"]); !strings.Contains(vd, "phone_home:") || !strings.Contains(vd, "/guest/ready?token=vfg_") {
		t.Errorf("vendor-data lacks phone_home with the readiness URL: %s", vd)
	}
	if !strings.Contains(string(files["user-data"]), "nginx") || !strings.Contains(string(files["user-data"]), strings.Fields(key)[1]) {
		t.Errorf("user-data lacks the request's config or the SSH key: %s", files["user-data"])
	}
	for _, p := range ports {
		addr := p.Node.IPAddresses.Edges[0].Node.Address
		if nc := string(files["network-config"]); !strings.Contains(nc, p.Node.MAC) || !strings.Contains(nc, addr+"/24") {
			t.Errorf("network-config lacks %s with %s/24: %s", p.Node.MAC, addr, nc)
		}
	}
	cloudInitAccepts(t, files)
	if nc := string(files["network-config"]); strings.Count(nc, "0.0.0.0/0") != 1 {
		t.Errorf("network-config has %d default routes, want 1 (the first NIC's): %s", strings.Count(nc, "0.0.0.0/0"), nc)
	}

	if err := api.Do(ctx, `mutation($id: ID!) { deleteVirtualMachine(id: $id) }`, map[string]any{"id": id}, nil); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the VM's addresses released", func() bool {
		n, err := st.env.Client.IPAddress.Query().Where(ipaddress.HasNetworkWith(network.NameHasPrefix(site.Prefix + "-net"))).Count(ctx)
		return err == nil && n == 0
	})
	eventually(t, "the config drive removed", func() bool { _, err := os.Stat(iso); return os.IsNotExist(err) })
	eventually(t, "the networks' bridges removed", func() bool {
		for _, b := range bridges {
			if _, err := nsh.LinkByName(b); err == nil {
				return false
			}
		}
		return true
	})
}

// testNamespace returns a netlink handle in a new network namespace of the test's own (gone
// when the test ends), where the agent builds its bridges: the host's interfaces are never
// touched. It needs root (CAP_SYS_ADMIN); without it the test is skipped, naming that.
func testNamespace(t *testing.T) *netlink.Handle {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("creating a network namespace needs root")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	orig, err := netns.Get()
	if err != nil {
		t.Fatal(err)
	}
	defer orig.Close()
	ns, err := netns.New()
	if err != nil {
		t.Fatalf("new network namespace: %v", err)
	}
	if err := netns.Set(orig); err != nil {
		t.Fatalf("back to the original namespace: %v", err)
	}
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		ns.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(); ns.Close() })
	return h
}

// readDrive reads the files of a config drive image.
func readDrive(t *testing.T, path string) map[string][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := iso9660.OpenImage(f)
	if err != nil {
		t.Fatal(err)
	}
	if label, err := img.Label(); err != nil || label != "cidata" {
		t.Errorf("volume label %q (%v), want cidata", label, err)
	}
	root, err := img.RootDir()
	if err != nil {
		t.Fatal(err)
	}
	children, err := root.GetChildren()
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, c := range children {
		b, err := io.ReadAll(c.Reader())
		if err != nil {
			t.Fatal(err)
		}
		files[c.Name()] = b
	}
	return files
}

// cloudInitAccepts runs Debian's cloud-init over the drive's user-data (schema) and
// network-config (net-convert, and schema where this cloud-init validates network-config).
func cloudInitAccepts(t *testing.T, files map[string][]byte) {
	t.Helper()
	ci, err := exec.LookPath("cloud-init")
	if err != nil {
		t.Skip("cloud-init not installed (apt-get install cloud-init)")
	}
	dir := t.TempDir()
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	run := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(ci, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("cloud-init %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	for _, f := range []string{"user-data", "vendor-data"} {
		if _, ok := files[f]; !ok {
			continue
		}
		if out := run("schema", "--config-file", filepath.Join(dir, f)); !strings.Contains(out, "Valid cloud-config") {
			t.Errorf("cloud-init schema on %s: %s", f, out)
		}
	}
	if help, _ := exec.Command(ci, "schema", "--help").CombinedOutput(); strings.Contains(string(help), "--schema-type") {
		run("schema", "--schema-type", "network-config", "--config-file", filepath.Join(dir, "network-config"))
	}
	run("devel", "net-convert", "--network-data", filepath.Join(dir, "network-config"), "--kind", "yaml",
		"--distro", "debian", "--output-kind", "networkd", "--directory", filepath.Join(dir, "net"))
}
