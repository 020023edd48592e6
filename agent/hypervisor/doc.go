// Package hypervisor is the node agent's narrow view of the hypervisor on its host: define,
// start, shut down, stop, reboot and undefine the domain (virtual machine) of a VirtFlow VM,
// read its state, list the domains VirtFlow manages and read the host's capacity.
//
// Two implementations share one contract ([Hypervisor]):
//
//   - [Libvirt] talks to libvirtd over its UNIX socket with go-libvirt (qemu:///system on a
//     real host, test:///default in tests), builds the domain XML with libvirtxml and
//     reconnects when the connection drops.
//   - [Simulated] keeps domains in memory, with configurable delays and a deterministic failure
//     rate, for --demo, development and benchmarks of a simulated fleet.
//
// Every operation is idempotent, so an agent that retries after a crash or a timeout converges
// instead of failing: defining an identical domain again, starting a running one, stopping a
// stopped one and undefining a missing one all succeed. A domain is named after its VM
// ([DomainName]: "vf-<vm id>") and carries the VM id and the assignment generation in its own
// <metadata> element (namespace [MetadataNamespace]), so that after a restart the agent rebuilds
// its whole view from the hypervisor alone with [Hypervisor.List]. The agent keeps no database.
package hypervisor
