package placement

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/domain/placement/placementtest"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/ipaddress"
	"github.com/virtflow/virtflow/ent/network"
	"github.com/virtflow/virtflow/ent/port"
	"github.com/virtflow/virtflow/ent/virtualmachine"
)

// vmNetwork creates a VM network of the site's datacenter.
func vmNetwork(tb testing.TB, s *placementtest.Site, c *ent.Client, name, cidr, gateway string) *ent.Network {
	tb.Helper()
	n, err := c.Network.Create().SetName(s.Prefix + "-" + name).SetCidr(cidr).SetVrf(s.Prefix).SetGateway(gateway).
		SetDatacenterID(s.Datacenter).SetDNSServers([]string{"192.0.2.53"}).Save(placementtest.Ctx())
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

// TestCreateVMGetsAddresses: a VM created on two networks has a NIC on each, with a unique
// locally administered MAC and an address from IPAM; without networkIDs it goes on the
// tenant's default VM network; delete releases the addresses.
func TestCreateVMGetsAddresses(t *testing.T) {
	db := openPostgres(t)
	ctx, c := placementtest.Ctx(), db.Client
	s := build(t, c, placementtest.Spec{Racks: 1, HostsPerRack: 2, CPU: 16, MemoryMB: 65536, DiskGB: 1000})
	f, err := s.Flavor(ctx, 1, 512, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	a := vmNetwork(t, s, c, "front", "10.20.0.0/24", "10.20.0.1")
	b := vmNetwork(t, s, c, "back", "10.30.0.0/24", "10.30.0.1")
	p := New(Config{})
	in := vmInput(s, f, "two-nics")
	in.NetworkIDs = []int{b.ID, a.ID}
	vm, err := p.CreateVM(ctx, c, in)
	if err != nil {
		t.Fatal(err)
	}
	ports := c.Port.Query().Where(port.HasVirtualMachineWith(virtualmachine.ID(vm.ID))).
		Order(port.ByName()).WithNetwork().WithIPAddresses().AllX(ctx)
	if len(ports) != 2 {
		t.Fatalf("VM has %d ports, want 2", len(ports))
	}
	for i, want := range []*ent.Network{b, a} {
		pt := ports[i]
		if pt.Name != fmt.Sprintf("eth%d", i) || pt.Edges.Network == nil || pt.Edges.Network.ID != want.ID {
			t.Errorf("port %d: %s on %v, want eth%d on %s", i, pt.Name, pt.Edges.Network, i, want.Name)
		}
		if len(pt.Edges.IPAddresses) != 1 || !strings.HasPrefix(pt.Edges.IPAddresses[0].Address, strings.TrimSuffix(want.Cidr, "0/24")) {
			t.Errorf("port %s addresses %v, want one in %s", pt.Name, pt.Edges.IPAddresses, want.Cidr)
		}
		if pt.MAC != nicMAC(vm.ID, i) || pt.MAC[1] != '2' && pt.MAC[1] != '6' && pt.MAC[1] != 'a' && pt.MAC[1] != 'e' {
			t.Errorf("port %s MAC %s: want the locally administered %s", pt.Name, pt.MAC, nicMAC(vm.ID, i))
		}
	}
	if n := c.VirtualMachine.QueryNetworks(vm).CountX(ctx); n != 2 {
		t.Errorf("VM lists %d networks, want 2", n)
	}

	// Default network of the tenant.
	c.Tenant.UpdateOneID(s.Tenant).SetDefaultVMNetworkID(a.ID).ExecX(ctx)
	def, err := p.CreateVM(ctx, c, vmInput(s, f, "default-net"))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Port.Query().Where(port.HasVirtualMachineWith(virtualmachine.ID(def.ID)), port.HasNetworkWith(network.ID(a.ID))).CountX(ctx); got != 1 {
		t.Errorf("VM without networkIDs has %d NICs on the tenant's default network, want 1", got)
	}

	// A network of another purpose is refused, naming the field.
	mgmt, err := c.Network.Create().SetName(s.Prefix + "-mgmt").SetCidr("10.40.0.0/24").SetPurpose(network.PurposeManagement).Save(ctx)
	if err != nil {
		t.Fatal(err)
	}
	bad := vmInput(s, f, "bad-net")
	bad.NetworkIDs = []int{mgmt.ID}
	_, err = p.CreateVM(ctx, c, bad)
	if e := expectCode(t, err, apierr.CodeValidation); e.Field != "networkIDs" {
		t.Errorf("field %q, want networkIDs", e.Field)
	}

	if err := p.DeleteVM(ctx, c, vm.ID); err != nil {
		t.Fatal(err)
	}
	if n := c.IPAddress.Query().Where(ipaddress.HasNetworkWith(network.IDIn(a.ID, b.ID))).CountX(ctx); n != 1 {
		t.Errorf("%d addresses left after delete, want 1 (the default-network VM's)", n)
	}
	checkBooks(t, s)
}

// TestConcurrentCreatesOnSmallNetwork: 100 concurrent creates on a /27 (30 usable addresses,
// one of them the gateway: 29 free) → exactly 29 VMs, each with its own address; the rest
// fail RESOURCE_EXHAUSTED naming the network, and leave nothing behind: no VM without its
// address, no port without one, node and quota usage exactly what the VMs hold.
func TestConcurrentCreatesOnSmallNetwork(t *testing.T) {
	db := openPostgres(t)
	ctx, c := placementtest.Ctx(), db.Client
	s := build(t, c, placementtest.Spec{Racks: 2, HostsPerRack: 2, CPU: 256, MemoryMB: 1 << 20, DiskGB: 10000})
	if _, err := s.Quota(ctx, s.Tenant, 1000, 0); err != nil {
		t.Fatal(err)
	}
	f, err := s.Flavor(ctx, 1, 256, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	n := vmNetwork(t, s, c, "small", "10.50.0.0/27", "10.50.0.1")
	const tries, free = 100, 29
	p := New(Config{})
	var (
		wg                    sync.WaitGroup
		mu                    sync.Mutex
		ok, exhausted, others int
		otherErrs             []error
	)
	for i := range tries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			in := vmInput(s, f, fmt.Sprintf("burst-%d", i))
			in.NetworkIDs = []int{n.ID}
			_, err := p.CreateVM(ctx, c, in)
			mu.Lock()
			defer mu.Unlock()
			e, isAPI := apierr.As(err)
			switch {
			case err == nil:
				ok++
			case isAPI && e.Code == apierr.CodeExhausted && e.Field == "networkIDs" && strings.Contains(e.Message, n.Name):
				exhausted++
			default:
				others++
				otherErrs = append(otherErrs, err)
			}
		}()
	}
	wg.Wait()
	if ok != free || exhausted != tries-free {
		t.Errorf("%d created, %d RESOURCE_EXHAUSTED naming %s, %d other errors %v; want %d and %d",
			ok, exhausted, n.Name, others, otherErrs, free, tries-free)
	}
	addrs := c.IPAddress.Query().Where(ipaddress.HasNetworkWith(network.ID(n.ID))).WithPort().AllX(ctx)
	seen := map[string]bool{}
	for _, a := range addrs {
		if seen[a.Address] {
			t.Errorf("address %s handed out twice", a.Address)
		}
		seen[a.Address] = true
		if a.Edges.Port == nil {
			t.Errorf("address %s bound to no port", a.Address)
		}
	}
	vms := c.VirtualMachine.Query().Where(virtualmachine.NameHasPrefix("burst-")).
		WithPorts(func(q *ent.PortQuery) { q.WithIPAddresses() }).AllX(ctx)
	if len(vms) != ok || len(addrs) != ok {
		t.Errorf("%d VMs and %d addresses for %d successful creates", len(vms), len(addrs), ok)
	}
	for _, vm := range vms {
		if len(vm.Edges.Ports) != 1 || len(vm.Edges.Ports[0].Edges.IPAddresses) != 1 {
			t.Errorf("VM %s without exactly one NIC with one address", vm.Name)
		}
	}
	if n := c.Port.Query().Where(port.HasNetworkWith(network.ID(n.ID)), port.Not(port.HasIPAddresses())).CountX(ctx); n != 0 {
		t.Errorf("%d ports without an address", n)
	}
	checkBooks(t, s)
}
