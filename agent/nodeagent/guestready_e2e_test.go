package nodeagent_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/digitalocean/go-libvirt"
	"github.com/digitalocean/go-libvirt/socket/dialers"

	"github.com/virtflow/virtflow/agent/hostnet"
	"github.com/virtflow/virtflow/agent/hypervisor"
	"github.com/virtflow/virtflow/agent/nodeagent"
	"github.com/virtflow/virtflow/demo/fleet"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
	"github.com/virtflow/virtflow/internal/testkit/guestimage"
)

// guestReadyTimeout bounds create → READY under software emulation on a loaded machine.
const guestReadyTimeout = 5 * time.Minute

// TestGuestReadyEndToEnd: a real guest says it is up. The test builds a bootable disk image
// (internal/guestimage: the host's kernel and a busybox initramfs behind ISOLINUX), uploads
// it through the API, and creates a VM from it through GraphQL on a network whose gateway
// is a bridge the test makes on this host (named as the agent names a NIC's bridge). The
// server listens on that gateway; the agent runs on qemu:///system with domain type qemu
// (software emulation). The guest boots from its overlay root disk, reads its config drive,
// applies the address IPAM gave it, and calls POST /guest/ready with busybox wget and the
// credential from the drive: the VM goes ACTIVE, BOOTING, then READY with its host name and
// that address, seen by a subscriber too. Logs create → ACTIVE and create → READY.
//
// It skips only when a part is missing (qemu-system-x86_64, the kernel, busybox, xorriso or
// ISOLINUX, ip, libvirtd or its qemu driver), naming it. Everything it creates on the host
// (bridge or its address, domain, storage pool) is removed at the end; the bridge has no
// uplink, so no packet leaves the machine.
func TestGuestReadyEndToEnd(t *testing.T) {
	kernel, busybox := realGuestParts(t, true)
	hv := qemuSystemQEMU(t)

	// The VMs' network: a /24 nobody on this host uses, on a VLAN whose bridge the agent
	// plugs the NIC into, with the gateway address on the bridge.
	third := 200 + rand.IntN(50)
	cidr := fmt.Sprintf("10.%d.%d.0/24", 213, third)
	for used(t, fmt.Sprintf("10.213.%d.", third)) {
		third++
		cidr = fmt.Sprintf("10.%d.%d.0/24", 213, third)
	}
	gw := fmt.Sprintf("10.213.%d.1", third)
	vlan := 3000 + rand.IntN(900)
	// The bridge holds the gateway address the server listens on before the network (whose
	// id names the bridge, hostnet.BridgeName) exists: it starts under a name of the test's
	// and takes the network's once that is created.
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
	imageID := uploadImage(t, api, st.base, "RAW", data)
	fl, err := site.Flavor(ctx, 1, 512, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	n, err := st.env.Client.Network.Create().SetName(site.Prefix + "-guestnet").SetCidr(cidr).SetVrf(site.Prefix).
		SetGateway(gw).SetVlan(vlan).SetDatacenterID(site.Datacenter).Save(ctx)
	if err != nil {
		t.Fatal(err)
	}
	bridge.rename(t, hostnet.BridgeName(int64(n.ID)))

	// The agent: its pool and drives in the test's directories; the readiness URL its
	// default, the API's URL (on the gateway) with the path /guest/ready.
	pool := "vftest-" + site.Prefix
	t.Cleanup(func() { removePool(t, pool) })
	tok, err := fleet.IssueAgentToken(ctx, st.env.Client, st.env.Identity, st.node)
	if err != nil {
		t.Fatal(err)
	}
	ag, err := nodeagent.New(nodeagent.Config{APIURL: st.base, Token: tok, Hypervisor: hv, Log: st.log,
		HeartbeatInterval: time.Second, ResyncInterval: 5 * time.Second, RetryDelay: 100 * time.Millisecond,
		Pool: pool, PoolPath: t.TempDir(), CacheDir: t.TempDir(), ConfigDriveDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = ag.Run(st.runCtx) }()

	statuses := subscribeVMStatus(t, st.runCtx, st.base, gqltest.AdminToken)
	name := site.Prefix + "-guest"
	start := time.Now()
	var created struct{ CreateVirtualMachine struct{ ID string } }
	if err := api.Do(ctx, `mutation($in: CreateVirtualMachineInput!) { createVirtualMachine(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"name": name, "tenantID": gqltest.ID(site.Tenant), "regionID": gqltest.ID(site.Region),
			"flavorID": gqltest.ID(fl.ID), "imageID": imageID, "networkIDs": []string{gqltest.ID(n.ID)}}}, &created); err != nil {
		t.Fatal(err)
	}
	id := created.CreateVirtualMachine.ID
	vmID, _ := strconv.ParseInt(id, 10, 64)
	domain := hypervisor.DomainName(vmID)
	t.Cleanup(func() { _ = hv.Undefine(context.Background(), domain) })

	var console *consoleReader
	var active, ready time.Duration
	seen := map[string]bool{}
	deadline := time.After(guestReadyTimeout)
	for ready == 0 {
		select {
		case ev := <-statuses:
			if ev.ID != id {
				continue
			}
			seen[ev.GuestState] = true
			if ev.Status == "ERROR" {
				t.Fatalf("VM in ERROR: %s", ev.StatusReason)
			}
			if ev.Status == "ACTIVE" && active == 0 {
				active = time.Since(start)
				console = readConsole(t, hv, domain)
			}
			if ev.GuestState == "READY" {
				ready = time.Since(start)
			}
		case <-deadline:
			t.Fatalf("guest not READY within %s (ACTIVE after %s; guest states seen %v); console:\n%s",
				guestReadyTimeout, active, seen, console.tail())
		}
	}
	t.Logf("create → ACTIVE %.1f s, create → READY %.1f s (domain type qemu, software emulation; guest states seen %v)",
		active.Seconds(), ready.Seconds(), slices.Sorted(func(yield func(string) bool) {
			for k := range seen {
				if !yield(k) {
					return
				}
			}
		}))

	var vm struct {
		Node struct {
			Name, GuestState, GuestHostname string
			GuestReadyAt                    *time.Time
			GuestAddresses                  []string
			Ports                           struct {
				Edges []struct {
					Node struct {
						IPAddresses struct {
							Edges []struct{ Node struct{ Address string } }
						}
					}
				}
			}
		}
	}
	if err := api.Do(ctx, `query($id: ID!) { node(id: $id) { ... on VirtualMachine { name guestState guestHostname guestReadyAt guestAddresses
		ports { edges { node { ipAddresses { edges { node { address } } } } } } } } }`, map[string]any{"id": id}, &vm); err != nil {
		t.Fatal(err)
	}
	var ipam []string
	for _, p := range vm.Node.Ports.Edges {
		for _, a := range p.Node.IPAddresses.Edges {
			ipam = append(ipam, a.Node.Address)
		}
	}
	slices.Sort(ipam)
	if vm.Node.GuestState != "READY" || vm.Node.GuestReadyAt == nil || vm.Node.GuestHostname != vm.Node.Name ||
		len(ipam) != 1 || !slices.Equal(vm.Node.GuestAddresses, ipam) {
		t.Fatalf("VM after the guest's call: state %s readyAt %v hostname %q (want %q) addresses %v (IPAM gave %v); console:\n%s",
			vm.Node.GuestState, vm.Node.GuestReadyAt, vm.Node.GuestHostname, vm.Node.Name, vm.Node.GuestAddresses, ipam, console.tail())
	}
	if !seen["BOOTING"] {
		t.Errorf("the subscriber never saw BOOTING (saw %v)", seen)
	}
	// The domain has the QEMU guest agent's channel; this guest runs no agent, and the
	// hypervisor says so rather than inventing an answer.
	if xml, err := hv.DomainXML(ctx, domain); err != nil || !strings.Contains(xml, "name='"+hypervisor.GuestAgentChannel+"'") {
		t.Errorf("domain XML lacks the guest agent channel %s (%v):\n%s", hypervisor.GuestAgentChannel, err, xml)
	}
	if info, err := hv.GuestAgent(ctx, domain); !errors.Is(err, hypervisor.ErrNoGuestAgent) {
		t.Errorf("GuestAgent of a guest without qemu-ga: %+v, %v; want ErrNoGuestAgent", info, err)
	}

	if err := api.Do(ctx, `mutation($id: ID!) { deleteVirtualMachine(id: $id) }`, map[string]any{"id": id}, nil); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the domain removed", func() bool {
		_, err := hv.State(context.Background(), domain)
		return errors.Is(err, hypervisor.ErrNotFound)
	})
}

// qemuSystemQEMU connects to qemu:///system with domain type qemu, or skips naming what is
// missing.
func qemuSystemQEMU(t *testing.T) *hypervisor.Libvirt {
	t.Helper()
	socket := os.Getenv("VIRTFLOW_TEST_LIBVIRT_SOCKET")
	if socket == "" {
		socket = hypervisor.DefaultSocket
		if _, err := os.Stat(socket); err != nil {
			t.Skipf("no libvirtd: VIRTFLOW_TEST_LIBVIRT_SOCKET is unset and %s does not exist", socket)
		}
	}
	h, err := hypervisor.NewLibvirt(context.Background(), hypervisor.LibvirtConfig{Socket: socket, URI: "qemu:///system",
		DomainType: hypervisor.DomainTypeQEMU, PollInterval: 100 * time.Millisecond})
	if err != nil {
		t.Skipf("libvirtd at %s has no qemu driver (qemu:///system: %v; apt-get install libvirt-daemon-driver-qemu)", socket, err)
	}
	t.Cleanup(func() { _ = h.Close() })
	return h
}

// used reports whether an address of this host starts with prefix.
func used(t *testing.T, prefix string) bool {
	t.Helper()
	out, err := exec.Command("ip", "-o", "-4", "addr", "show").Output()
	if err != nil {
		t.Fatalf("ip addr show: %v", err)
	}
	return bytes.Contains(out, []byte(" "+prefix))
}

// testBridge is a bridge the test made or lent its address to; cleanup follows its name.
type testBridge struct{ name, addr string }

// makeBridge makes (or adopts) bridge name with address addr, up, and removes it (or only
// the address, on a bridge it did not make) when the test ends.
func makeBridge(t *testing.T, name, addr string) *testBridge {
	t.Helper()
	b := &testBridge{name: name, addr: addr}
	if err := ipCmd("link", "show", name); err != nil {
		if err := ipCmd("link", "add", "name", name, "type", "bridge"); err != nil {
			t.Skipf("cannot make bridge %s (needs root and the bridge module): %v", name, err)
		}
		t.Cleanup(func() {
			if err := ipCmd("link", "del", b.name); err != nil {
				t.Errorf("remove the test's bridge: %v", err)
			}
		})
	} else {
		t.Cleanup(func() { _ = ipCmd("addr", "del", addr, "dev", b.name) })
	}
	if err := ipCmd("addr", "add", addr, "dev", name); err != nil {
		t.Fatal(err)
	}
	if err := ipCmd("link", "set", name, "up"); err != nil {
		t.Fatal(err)
	}
	return b
}

// rename gives the bridge its new name; its addresses stay.
func (b *testBridge) rename(t *testing.T, name string) {
	t.Helper()
	for _, args := range [][]string{{"link", "set", b.name, "down"}, {"link", "set", b.name, "name", name}, {"link", "set", name, "up"}} {
		if err := ipCmd(args...); err != nil {
			t.Fatal(err)
		}
	}
	b.name = name
}

// ipCmd runs ip(8) with args.
func ipCmd(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return nil
}

// removePool stops and undefines the libvirt storage pool name, if it exists.
func removePool(t *testing.T, name string) {
	t.Helper()
	socket := os.Getenv("VIRTFLOW_TEST_LIBVIRT_SOCKET")
	if socket == "" {
		socket = hypervisor.DefaultSocket
	}
	c := libvirt.NewWithDialer(dialers.NewLocal(dialers.WithSocket(socket), dialers.WithLocalTimeout(10*time.Second)))
	if err := c.ConnectToURI(libvirt.QEMUSystem); err != nil {
		t.Errorf("remove pool %s: %v", name, err)
		return
	}
	defer func() { _ = c.Disconnect() }()
	p, err := c.StoragePoolLookupByName(name)
	if err != nil {
		return
	}
	vols, _, _ := c.StoragePoolListAllVolumes(p, 1, 0)
	for _, v := range vols {
		_ = c.StorageVolDelete(v, 0)
	}
	_ = c.StoragePoolDestroy(p)
	if err := c.StoragePoolUndefine(p); err != nil {
		t.Errorf("undefine pool %s: %v", name, err)
	}
}

// consoleReader keeps what the guest writes on its serial console (a pty libvirt made).
type consoleReader struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (c *consoleReader) tail() string {
	if c == nil {
		return "(no console)"
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	b := c.buf.Bytes()
	if len(b) > 6000 {
		b = b[len(b)-6000:]
	}
	return string(b)
}

var ptyRe = regexp.MustCompile(`<serial type='pty'>\s*<source path='([^']+)'`)

// readConsole reads the running domain's serial console into a consoleReader until the
// test ends; nil when its pty cannot be found.
func readConsole(t *testing.T, hv *hypervisor.Libvirt, domain string) *consoleReader {
	xml, err := hv.DomainXML(context.Background(), domain)
	if err != nil {
		return nil
	}
	m := ptyRe.FindStringSubmatch(xml)
	if m == nil {
		return nil
	}
	f, err := os.Open(m[1])
	if err != nil {
		return nil
	}
	t.Cleanup(func() { _ = f.Close() })
	c := &consoleReader{}
	go func() {
		b := make([]byte, 4096)
		for {
			n, err := f.Read(b)
			c.mu.Lock()
			c.buf.Write(b[:n])
			c.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return c
}

// realGuestParts skips t, naming what is missing, unless this machine can boot the test's
// real guest: QEMU, a kernel for it and a static busybox; with disk, also the tools that
// build its bootable disk image and ip for its bridge. It returns the kernel and busybox.
func realGuestParts(t *testing.T, disk bool) (guestimage.Kernel, string) {
	t.Helper()
	if _, err := exec.LookPath("qemu-system-x86_64"); err != nil {
		t.Skip("qemu-system-x86_64 is not installed (apt-get install qemu-system-x86; .ci/run does it)")
	}
	kernel, err := guestimage.FindKernel()
	if err != nil {
		t.Skipf("no guest kernel: %v", err)
	}
	const busybox = "/bin/busybox"
	if _, err := os.Stat(busybox); err != nil {
		t.Skip("no /bin/busybox (apt-get install busybox-static; .ci/run does it)")
	}
	if !disk {
		return kernel, busybox
	}
	if err := guestimage.BootableImageTools(); err != nil {
		t.Skipf("cannot build the guest's disk image: %v", err)
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("no ip command (apt-get install iproute2) to make the test's bridge")
	}
	return kernel, busybox
}
