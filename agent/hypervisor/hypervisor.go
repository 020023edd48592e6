package hypervisor

import "context"

// Hypervisor realizes a node's assignments: it turns a [DomainSpec] into a domain and drives it
// through its lifecycle. Implementations are safe for concurrent use.
//
// Every operation is idempotent. Operations on a domain that does not exist return a
// [*NotFoundError] (errors.Is(err, ErrNotFound)), except Undefine, for which a missing domain is
// already the wanted result.
type Hypervisor interface {
	// Define creates the persistent domain of spec, or updates it when the spec changed
	// (including its generation). Defining an identical spec again changes nothing. A running
	// domain keeps running: a changed definition applies from its next cold start. Define never
	// starts a domain. It fails with ErrInvalidSpec for a spec that does not validate and with
	// ErrConflict when another domain holds the name or the UUID.
	Define(ctx context.Context, spec DomainSpec) error

	// Start boots a defined domain and returns once it runs. A running domain is left alone, a
	// paused one is resumed.
	Start(ctx context.Context, name string) error

	// Shutdown asks the guest to power off (ACPI) and waits until the domain is off, or until
	// ctx is done (then it returns ctx's error and the domain may still be running: follow up
	// with Stop). Give ctx a deadline: a guest may ignore the request. A domain that is already
	// off is left alone.
	Shutdown(ctx context.Context, name string) error

	// Stop powers the domain off at once, like pulling the plug. A domain that is already off
	// is left alone.
	Stop(ctx context.Context, name string) error

	// Suspend pauses a running domain (its vCPUs stop; memory is kept) until Start resumes
	// it: the disks do not change meanwhile, which is how a running VM's disks are copied.
	// A domain that is not running is left alone.
	Suspend(ctx context.Context, name string) error
	// Reboot asks a running guest to reboot (the guest may ignore it: Stop then Start is the
	// hard way) and starts a domain that is not running, so that afterwards it runs either way.
	Reboot(ctx context.Context, name string) error

	// Undefine removes the domain, powering it off first if it runs. Its disks are left alone:
	// they belong to volumes. A missing domain is not an error.
	Undefine(ctx context.Context, name string) error

	// State returns the domain's current state.
	State(ctx context.Context, name string) (DomainState, error)

	// GuestAgent asks the QEMU guest agent inside the running domain (on the channel
	// GuestAgentChannel every defined domain has) who the guest is: guest-ping, then its
	// host name and network interfaces. It fails with ErrNoGuestAgent when no agent answers
	// (none installed, not started yet, or a hypervisor without guest agents).
	GuestAgent(ctx context.Context, name string) (GuestInfo, error)

	// List returns the domains VirtFlow manages (those carrying VirtFlow metadata), sorted by
	// name, with the VM id and generation read back from the hypervisor. Other domains on the
	// host are not listed.
	List(ctx context.Context) ([]Domain, error)

	// Storage keeps the node's cached images, root disks and volumes.
	Storage
	// Disks returns the domain's disks as they are now: the running instance's while it
	// runs (hot-plugged ones included), its definition's otherwise. Only Path, Format, Bus
	// and Device are filled in.
	Disks(ctx context.Context, name string) ([]Disk, error)
	// AttachDisk plugs disk into the running domain (hot-plug) without changing its
	// definition (Define does that), on the first free target of its bus. A disk it has
	// already (same Path) or a domain that does not run is left alone. It fails with
	// ErrUnsupported when the hypervisor cannot hot-plug: the disk then comes with the
	// definition at the domain's next cold start.
	AttachDisk(ctx context.Context, name string, disk Disk) error
	// DetachDisk unplugs the disk with the given path from the running domain (hot-unplug),
	// like AttachDisk; a disk it does not have is not an error. With a real guest the unplug
	// completes when the guest releases the device.
	DetachDisk(ctx context.Context, name, path string) error

	// Capacity returns what the host has: logical CPUs, memory and NUMA nodes.
	Capacity(ctx context.Context) (Capacity, error)

	// SetCPUAffinity confines the domain's vCPUs and emulator threads to the host CPUs
	// cpus, on the running instance at once and in its definition (empty: every CPU). The
	// agent moves running shared VMs off the CPUs a dedicated VM is pinned to with it.
	SetCPUAffinity(ctx context.Context, name string, cpus []int) error

	// Close releases the connection. Domains keep running. Calls after Close fail with
	// ErrClosed.
	Close() error
}
