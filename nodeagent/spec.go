package nodeagent

import (
	"fmt"
	"path/filepath"

	"github.com/virtflow/virtflow/hypervisor"
)

// specFor builds the domain spec of a's VM at a's generation. pinned lists the host CPUs of a
// dedicated flavor's vCPUs (nil for a shared flavor).
func (ag *Agent) specFor(a Assignment, pinned []int) (hypervisor.DomainSpec, error) {
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
		PinnedCPUs: pinned,
	}
	if ag.cfg.DiskDir != "" && (vm.Flavor.DiskGB > 0 || vm.Image != nil) {
		// The root disk is prepared on the host (from the image) by what provisions volumes;
		// the agent only attaches it.
		d := hypervisor.Disk{Path: filepath.Join(ag.cfg.DiskDir, hypervisor.DomainName(id)+".qcow2")}
		if vm.Image != nil && vm.Image.Format == ImageFormatIso {
			d = hypervisor.Disk{Path: filepath.Join(ag.cfg.DiskDir, hypervisor.DomainName(id)+".iso"), Format: "raw", Bus: "sata", Device: "cdrom"}
		}
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
			nic.Network, nic.Bridge = "", fmt.Sprintf(ag.cfg.BridgeFormat, *p.Vlan)
		}
		spec.NICs = append(spec.NICs, nic)
	}
	if err := spec.Validate(); err != nil {
		return spec, err
	}
	return spec, nil
}

// dedicated reports whether a's VM has a dedicated CPU policy (its vCPUs are pinned).
func dedicated(a Assignment) bool {
	return a.VirtualMachine != nil && a.VirtualMachine.Flavor.CpuPolicy == FlavorCPUPolicyDedicated
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
