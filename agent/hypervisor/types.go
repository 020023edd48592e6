package hypervisor

// DomainSpec is everything the hypervisor needs to create the domain of one VM, derived by the
// agent from the VM's flavor, image, volumes and ports. The domain's name is DomainName(VMID).
type DomainSpec struct {
	// VMID is the VirtualMachine's id in the API (required, positive).
	VMID int64
	// Generation is the assignment's generation, stored in the domain's metadata so that the
	// agent can tell after a restart which version of the assignment the domain realizes.
	Generation int64
	// UUID is the domain's (and the guest's SMBIOS) UUID; empty means one derived from the
	// domain name ([DomainUUID]), stable across redefinitions.
	UUID string

	// VCPUs is the number of virtual CPUs (at least 1).
	VCPUs int
	// MemoryMiB is the guest memory in MiB (at least 1).
	MemoryMiB int64
	// PinnedCPUs, for a dedicated flavor, lists the host CPUs the vCPUs are pinned to, one per
	// vCPU (vCPU i runs on PinnedCPUs[i]); the CPUs must be distinct. Empty means the vCPUs
	// float over the host's CPUs.
	PinnedCPUs []int
	// SharedCPUs, for a domain without PinnedCPUs, lists the host CPUs its vCPUs may float
	// over (<vcpu cpuset>): the node's CPUs not pinned to a dedicated VM, so shared VMs
	// stay off them. Empty means every host CPU. Ignored with PinnedCPUs.
	SharedCPUs []int
	// NUMANode, when set, binds the guest's memory to that host NUMA node
	// (<numatune><memory mode='strict'>): an exclusive NUMA_NODE flavor, whose vCPUs are
	// pinned to the node's CPUs too.
	NUMANode *int
	// CPUQuotaPercent, between 1 and 99, caps each vCPU at that share of a host CPU's time
	// (a shared flavor's CPU-time limit): <cputune> period 100000 µs and quota
	// percent × 1000 µs. 0 or 100 means no limit.
	CPUQuotaPercent int

	// Disks in order; none makes a diskless domain (network boot, or a test).
	Disks []Disk
	// NICs in order.
	NICs []NIC
	// Boot lists the boot devices in order. Empty means the first disk if there is one, else
	// the network if there is a NIC, else the disk.
	Boot []BootDevice
}

// Name returns the domain name of the spec's VM.
func (s DomainSpec) Name() string { return DomainName(s.VMID) }

// Disk is one disk or CD-ROM of a domain, backed by a file or block device on the host.
type Disk struct {
	// Path of the image file or block device on the host (absolute, required).
	Path string
	// Format of the image: "qcow2" (the default) or "raw".
	Format string
	// Bus the guest sees the disk on: "virtio" (the default), "scsi", "sata" or "ide".
	Bus string
	// Device is "disk" (the default) or "cdrom".
	Device string
	// ReadOnly attaches the disk read-only (a CD-ROM always is).
	ReadOnly bool
	// Backing, for a qcow2 overlay, names its backing file, written into the domain XML as
	// the disk's backingStore (a root disk over a cached image).
	Backing *Backing
	// IOPS and MBps limit the disk's total I/O operations and megabytes (10^6 bytes) per
	// second (<iotune>, the flavor's IO limits); 0 means unlimited.
	IOPS, MBps int
}

// NIC is one network interface of a domain, plugged into either a host bridge or a libvirt
// network (exactly one of Bridge and Network).
type NIC struct {
	// MAC is the interface's unicast MAC address, e.g. "52:54:00:12:34:56" (required: the
	// address is the port's, allocated by the API).
	MAC string
	// Model is the device model the guest sees; "virtio" by default.
	Model string
	// Bridge names a host bridge (e.g. "br-vlan100").
	Bridge string
	// Network names a libvirt network (e.g. "default").
	Network string
	// Tap names a tap device the NIC uses instead of a bridge or network (libvirt interface
	// type "ethernet" with that target dev): the routed VM network (package vmnet) moves it
	// into the namespace of the VM's address once the domain runs.
	Tap string
	// BandwidthMbps limits the interface in each direction to that many megabits per second
	// (<bandwidth> inbound and outbound average, the flavor's network limit); 0: no limit.
	BandwidthMbps int
}

// BootDevice is a device class the firmware boots from.
type BootDevice string

// Boot devices, as libvirt names them.
const (
	BootDisk    BootDevice = "hd"
	BootCDROM   BootDevice = "cdrom"
	BootNetwork BootDevice = "network"
	BootFloppy  BootDevice = "fd"
)

// DomainState is the state of a domain as the hypervisor reports it.
type DomainState string

// Domain states. Running covers a vCPU blocked on a host resource too.
const (
	StateRunning      DomainState = "running"
	StatePaused       DomainState = "paused"
	StateShuttingDown DomainState = "shutting-down"
	StateShutOff      DomainState = "shut-off"
	StateCrashed      DomainState = "crashed"
	StateSuspended    DomainState = "suspended" // suspended by guest power management
	StateUnknown      DomainState = "unknown"
)

// Active reports whether the domain has a running instance (running, paused, shutting down,
// suspended): one that Stop would power off.
func (s DomainState) Active() bool {
	switch s {
	case StateRunning, StatePaused, StateShuttingDown, StateSuspended:
		return true
	}
	return false
}

// Domain is a VirtFlow-managed domain as read back from the hypervisor.
type Domain struct {
	// Name is the domain's name, DomainName(VMID).
	Name string
	// UUID is the domain's UUID in its canonical lower-case form.
	UUID string
	// VMID and Generation come from the domain's VirtFlow metadata (of its persistent
	// definition, when it has one). A domain named by DomainName whose metadata cannot be read
	// is listed with Generation 0 (unknown), so that it is redefined rather than overlooked.
	VMID       int64
	Generation int64
	// State is the domain's current state.
	State DomainState
}

// Capacity is what a host offers to its VMs.
type Capacity struct {
	// VCPUs is the number of logical CPUs of the host.
	VCPUs int
	// MemoryMiB is the host's memory in MiB.
	MemoryMiB int64
	// NUMANodes are the host's NUMA nodes (cells) with their CPUs and memory, as libvirt's
	// capabilities list them; empty when the hypervisor does not say.
	NUMANodes []NUMANode
}

// NUMANode is one NUMA node (cell) of the host.
type NUMANode struct {
	ID        int
	CPUs      []int
	MemoryMiB int64
}
