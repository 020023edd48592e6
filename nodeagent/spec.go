package nodeagent

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/virtflow/virtflow/hypervisor"
)

// specFor builds the domain spec of a's VM at a's generation. cpus lists, for a dedicated
// flavor, the host CPUs its vCPUs are pinned to; for a shared flavor, the host CPUs it may
// float over (those no dedicated VM of the node is pinned to; nil for all). A shared
// flavor's CPU-time limit becomes a CPU quota, the flavor's IO limits the root disk's.
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
	if dedicated(a) {
		spec.PinnedCPUs = cpus
	} else {
		spec.SharedCPUs = cpus
		spec.CPUQuotaPercent = vm.Flavor.CpuLimitPercent
	}
	if ag.cfg.DiskDir != "" && vm.Flavor.DiskGB > 0 && vm.Image == nil {
		// A VM without an image: its root disk is prepared on the host by whoever provides
		// it; the agent only attaches it. A VM with an image gets its disks from imageDisks.
		d := hypervisor.Disk{Path: filepath.Join(ag.cfg.DiskDir, hypervisor.DomainName(id)+".qcow2")}
		d.IOPS, d.MBps = deref(vm.Flavor.DiskIopsLimit), deref(vm.Flavor.DiskMbpsLimit)
		spec.Disks = append(spec.Disks, d)
	}
	for _, e := range vm.Ports.Edges {
		if e == nil || e.Node == nil {
			continue
		}
		p := e.Node
		if p.Mac == nil || *p.Mac == "" {
			continue // a port without an address is not plugged in yet
		}
		nic := hypervisor.NIC{MAC: *p.Mac, Network: ag.cfg.DefaultNetwork}
		if p.Driver != nil {
			nic.Model = *p.Driver
		}
		if p.Vlan != nil && ag.cfg.BridgeFormat != "" {
			nic.Network, nic.Bridge = "", BridgeName(ag.cfg.BridgeFormat, *p.Vlan)
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

// BridgeName is the host bridge a NIC on VLAN vlan is plugged into, for the agent's
// --bridge-format format (DefaultBridgeFormat when empty). Everything that names such a
// bridge (the agent, tests that build one) goes through here.
func BridgeName(format string, vlan int) string {
	if format == "" {
		format = DefaultBridgeFormat
	}
	return fmt.Sprintf(format, vlan)
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

// sharedCPUs are the host CPUs (0..hostCPUs-1) no dedicated VM is pinned to: where shared
// VMs run, so they never compete with pinned vCPUs. Nil when nothing is pinned.
func sharedCPUs(pins map[string][]int, hostCPUs int) []int {
	if len(pins) == 0 {
		return nil
	}
	taken := make([]bool, hostCPUs)
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
// reserved are kept for the host. A VM that does not fit gets an error instead.
func pinCPUs(as []Assignment, hostCPUs, reserved int) (map[string][]int, map[string]error) {
	pins, errs := map[string][]int{}, map[string]error{}
	next := reserved
	for _, a := range sortedByVM(as) {
		if !dedicated(a) || a.DesiredState == "ABSENT" {
			continue
		}
		n := a.VirtualMachine.Flavor.Vcpus
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
