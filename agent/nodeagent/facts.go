package nodeagent

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/virtflow/virtflow/agent/hypervisor"
)

// HostFacts is what the agent tells about its host besides capacity: read once at start
// (they change only with a reboot) and sent at registration and in every heartbeat, where
// the server writes them only when they differ from its record. An empty fact is not sent
// (the record keeps its value): a simulated fleet passes empty facts so that its nodes keep
// theirs.
type HostFacts struct {
	// OSName and OSVersion are os-release's NAME and VERSION (VERSION_ID when VERSION is
	// missing), e.g. "Debian GNU/Linux", "12 (bookworm)".
	OSName, OSVersion string
	// KernelVersion is the kernel release (uname -r).
	KernelVersion string
}

// ReadHostFacts reads the host's facts from the os-release file at osRelease
// (/etc/os-release when empty, /usr/lib/os-release as its fallback) and uname. What cannot
// be read stays empty.
func ReadHostFacts(osRelease string) HostFacts {
	var f HostFacts
	paths := []string{"/etc/os-release", "/usr/lib/os-release"}
	if osRelease != "" {
		paths = []string{osRelease}
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		kv := parseOSRelease(b)
		f.OSName = kv["NAME"]
		if f.OSVersion = kv["VERSION"]; f.OSVersion == "" {
			f.OSVersion = kv["VERSION_ID"]
		}
		break
	}
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		f.KernelVersion = unix.ByteSliceToString(u.Release[:])
	}
	f.OSName, f.OSVersion = clip(f.OSName, 64), clip(f.OSVersion, 64)
	f.KernelVersion = clip(f.KernelVersion, 128)
	return f
}

// parseOSRelease parses os-release(5): KEY=value lines, values optionally quoted.
func parseOSRelease(b []byte) map[string]string {
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		k, v, ok := strings.Cut(line, "=")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
			v = strings.NewReplacer(`\"`, `"`, `\\`, `\`, `\$`, `$`, "\\`", "`").Replace(v)
		}
		out[k] = v
	}
	return out
}

// clip cuts s to at most n bytes on a rune boundary (the server's column sizes).
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !isRuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// hostReport is what the agent reports about its host at registration and in each
// heartbeat, besides health.
type hostReport struct {
	CPUs, MemoryMB int
	// DiskGB is nil when the pool's size could not be read: the last recorded one stays.
	DiskGB     *int
	DomainType *string
	Providers  []ProviderOfferInput
	Facts      HostFacts
	// Reserved is how many CPUs are kept for the host; NUMA the host's NUMA nodes.
	Reserved int
	NUMA     []NUMANodeInput
}

// readHostReport reads the host's capacity from hv: CPUs (less reserved) and memory, and
// the disk capacity: diskOverride when positive, else the size of the storage pool (in GiB,
// rounded down; the pool is created first when missing). It fails only when the hypervisor
// cannot tell its CPUs and memory.
func readHostReport(ctx context.Context, hv hypervisor.Hypervisor, ensurePool func(context.Context) error, pool string,
	reserved, diskOverride int, facts HostFacts) (hostReport, error) {
	c, err := hv.Capacity(ctx)
	if err != nil {
		return hostReport{}, err
	}
	r := hostReport{CPUs: max(c.VCPUs-reserved, 0), MemoryMB: int(c.MemoryMiB), Facts: facts, Reserved: reserved,
		// Both hypervisors realize VMs as libvirt would: the simulated one stands in for it.
		Providers: []ProviderOfferInput{{Kind: ProviderKindVirtualMachine, Driver: ProviderDriverLibvirt}}}
	for _, n := range c.NUMANodes {
		r.NUMA = append(r.NUMA, NUMANodeInput{Id: n.ID, Cpus: n.CPUs, MemoryMB: int(n.MemoryMiB)})
	}
	if d, ok := hv.(interface{ DomainType() string }); ok {
		t := d.DomainType()
		r.DomainType = &t
	}
	switch {
	case diskOverride > 0:
		r.DiskGB = &diskOverride
	default:
		if ensurePool == nil || ensurePool(ctx) == nil {
			if info, err := hv.PoolInfo(ctx, pool); err == nil {
				gb := int(info.CapacityBytes >> 30)
				r.DiskGB = &gb
			}
		}
	}
	return r, nil
}

// fill copies r into a heartbeat.
func (r hostReport) fill(s *NodeStatusInput) {
	s.CpuCapacity, s.MemoryCapacityMB, s.DiskCapacityGB = &r.CPUs, &r.MemoryMB, r.DiskGB
	s.DomainType, s.Providers = r.DomainType, r.Providers
	s.ReservedCPUs = &r.Reserved
	s.OsName, s.OsVersion, s.KernelVersion = r.Facts.pointers()
}

// pointers returns the facts for the API: an empty one (not read, or not to be reported)
// is nil, which leaves the server's record as it is.
func (f HostFacts) pointers() (osName, osVersion, kernel *string) {
	p := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	return p(f.OSName), p(f.OSVersion), p(f.KernelVersion)
}
