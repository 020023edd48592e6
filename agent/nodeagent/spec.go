package nodeagent

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/virtflow/virtflow/agent/hostnet"
	"github.com/virtflow/virtflow/agent/hypervisor"
)

// specFor builds the domain spec of a's VM at a's generation. cpus lists, for a dedicated
// flavor, the host CPUs its vCPUs are pinned to; for an exclusive NUMA_NODE flavor, the CPUs
// of its NUMA node (pinned one per vCPU when it has that many, else floated over); for a
// shared flavor, the host CPUs it may float over (the shared set: neither reserved for the
// host nor pinned to a dedicated VM; nil for all). A shared flavor's CPU-time limit becomes a
// CPU quota, the flavor's IO limits the root disk's, its network limit each NIC's
// bandwidth; an exclusive flavor has none of these limits (it has no neighbour). A port of
// a network goes to the network's bridge (hostnet.BridgeName), one without a network to
// the libvirt network DefaultNetwork.
func (ag *Agent) specFor(ctx context.Context, a Assignment, cpus []int) (hypervisor.DomainSpec, error) {
	vm := a.VirtualMachine
	if vm == nil {
		return hypervisor.DomainSpec{}, fmt.Errorf("assignment %s asks for %s but its VM is not on this node: %w",
			a.Id, a.DesiredState, hypervisor.ErrInvalidSpec)
	}
	id, err := vmID(vm.Id)
	if err != nil {
		return hypervisor.DomainSpec{}, err
	}
	spec := hypervisor.DomainSpec{
		VMID:       id,
		Generation: a.Generation,
		VCPUs:      vm.Flavor.Vcpus,
		MemoryMiB:  vm.Flavor.MemoryMB,
	}
	excl := exclusive(a)
	switch {
	case dedicated(a):
		spec.PinnedCPUs = cpus
	case vm.Flavor.Exclusive == FlavorExclusiveNumaNode:
		if vm.NumaNode == nil {
			return spec, fmt.Errorf("VM %s has a NUMA_NODE flavor but no NUMA node: %w", vm.Id, hypervisor.ErrInvalidSpec)
		}
		n := *vm.NumaNode
		spec.NUMANode = &n
		if len(cpus) == spec.VCPUs {
			spec.PinnedCPUs = cpus
		} else {
			spec.SharedCPUs = cpus
		}
	default:
		spec.SharedCPUs = cpus
		if !excl {
			spec.CPUQuotaPercent = vm.Flavor.CpuLimitPercent
		}
	}
	if ag.cfg.DiskDir != "" && vm.Flavor.DiskGB > 0 && vm.Image == nil {
		// A VM without an image: its root disk is prepared on the host by whoever provides
		// it; the agent only attaches it. A VM with an image gets its disks from imageDisks.
		d := hypervisor.Disk{Path: filepath.Join(ag.cfg.DiskDir, hypervisor.DomainName(id)+".qcow2")}
		if !excl {
			d.IOPS, d.MBps = deref(vm.Flavor.DiskIopsLimit), deref(vm.Flavor.DiskMbpsLimit)
		}
		spec.Disks = append(spec.Disks, d)
	}
	var taps map[string]string // routed mode: the NICs' taps by MAC
	if ag.routed() {
		var err error
		if taps, err = ag.routedNICs(ctx, a); err != nil {
			return hypervisor.DomainSpec{}, err
		}
	}
	for _, p := range ports(a) {
		nic := hypervisor.NIC{MAC: *p.Mac, Network: ag.cfg.DefaultNetwork}
		if p.Driver != nil {
			nic.Model = *p.Driver
		}
		if n, ok := portNetwork(p); ok {
			nic.Network, nic.Bridge = "", hostnet.BridgeName(n.ID)
		}
		if tap, ok := taps[strings.ToLower(*p.Mac)]; ok {
			nic.Network, nic.Bridge, nic.Tap = "", "", tap
		}
		if !excl {
			nic.BandwidthMbps = deref(vm.Flavor.NetworkMbpsLimit)
		}
		spec.NICs = append(spec.NICs, nic)
	}
	if err := ag.addGuestConfig(ctx, &spec, a); err != nil {
		return spec, err
	}
	if err := spec.Validate(); err != nil {
		return spec, err
	}
	return spec, nil
}

// ports are the plugged-in ports of a's VM (those with a MAC address), in order.
func ports(a Assignment) []*VMPort {
	if a.VirtualMachine == nil {
		return nil
	}
	var out []*VMPort
	for _, e := range a.VirtualMachine.Ports.Edges {
		if e == nil || e.Node == nil || e.Node.Mac == nil || *e.Node.Mac == "" {
			continue // a port without an address is not plugged in yet
		}
		out = append(out, e.Node)
	}
	return out
}

// portNetwork is the host network a port needs: its network's id and VLAN. ok is false for
// a port of no network (or one the agent cannot name), which uses DefaultNetwork.
func portNetwork(p *VMPort) (hostnet.Network, bool) {
	if p.NetworkID == nil {
		return hostnet.Network{}, false
	}
	id, err := strconv.ParseInt(*p.NetworkID, 10, 64)
	if err != nil || id <= 0 {
		return hostnet.Network{}, false
	}
	return hostnet.Network{ID: id, VLAN: deref(p.Vlan)}, true
}

// exclusive reports whether a's VM has an exclusive flavor (HOST or NUMA_NODE): alone on its
// host or NUMA node, without CPU, IO or network limits.
func exclusive(a Assignment) bool {
	return a.VirtualMachine != nil && a.VirtualMachine.Flavor.Exclusive != "" &&
		a.VirtualMachine.Flavor.Exclusive != FlavorExclusiveNone
}

// dedicated reports whether a's VM has a dedicated CPU policy (its vCPUs are pinned).
func dedicated(a Assignment) bool {
	return a.VirtualMachine != nil && a.VirtualMachine.Flavor.CpuPolicy == FlavorCPUPolicyDedicated
}

// deref is *p, 0 for nil (an unset limit).
func deref(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

// sharedCPUs are the host CPUs (0..hostCPUs-1) neither reserved for the host (below
// reserved) nor pinned to a dedicated VM: where shared VMs run, so they never compete with
// pinned vCPUs or the host. Nil (every CPU) when nothing is reserved or pinned.
func sharedCPUs(pins map[string][]int, hostCPUs, reserved int) []int {
	if len(pins) == 0 && reserved <= 0 {
		return nil
	}
	taken := make([]bool, hostCPUs)
	for c := 0; c < reserved && c < hostCPUs; c++ {
		taken[c] = true
	}
	for _, cpus := range pins {
		for _, c := range cpus {
			if c >= 0 && c < hostCPUs {
				taken[c] = true
			}
		}
	}
	var out []int
	for c, t := range taken {
		if !t {
			out = append(out, c)
		}
	}
	return out
}

// pinCPUs hands out host CPUs to the dedicated VMs among as, in VM id order so that the
// answer is the same on every resync while the set of VMs stays the same. CPUs below
// reserved are kept for the host. A VM that does not fit gets an error instead. A VM of an
// exclusive NUMA_NODE flavor gets its NUMA node's CPUs (less the reserved ones): one per
// vCPU when the node has enough, else all of them to float over.
func pinCPUs(as []Assignment, hostCPUs, reserved int, numa []hypervisor.NUMANode) (map[string][]int, map[string]error) {
	pins, errs := map[string][]int{}, map[string]error{}
	next := reserved
	for _, a := range sortedByVM(as) {
		if a.DesiredState == "ABSENT" {
			continue
		}
		vm := a.VirtualMachine
		if vm.Flavor.Exclusive == FlavorExclusiveNumaNode && vm.NumaNode != nil {
			i := slices.IndexFunc(numa, func(n hypervisor.NUMANode) bool { return n.ID == *vm.NumaNode })
			if i < 0 {
				errs[a.Id] = fmt.Errorf("NUMA node %d of the VM is not one of the host's %d", *vm.NumaNode, len(numa))
				continue
			}
			cpus := slices.DeleteFunc(slices.Clone(numa[i].CPUs), func(c int) bool { return c < reserved })
			if len(cpus) > vm.Flavor.Vcpus {
				cpus = cpus[:vm.Flavor.Vcpus]
			}
			if len(cpus) == 0 {
				errs[a.Id] = fmt.Errorf("NUMA node %d has no CPU that is not reserved for the host", *vm.NumaNode)
				continue
			}
			pins[a.Id] = cpus
			continue
		}
		if !dedicated(a) {
			continue
		}
		n := vm.Flavor.Vcpus
		if next+n > hostCPUs {
			errs[a.Id] = fmt.Errorf("no free host CPUs to pin %d dedicated vCPUs (host has %d, %d reserved, %d pinned already)",
				n, hostCPUs, reserved, next-reserved)
			continue
		}
		cpus := make([]int, n)
		for i := range cpus {
			cpus[i] = next + i
		}
		next += n
		pins[a.Id] = cpus
	}
	return pins, errs
}
