package nodeagent

import (
	"context"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/virtflow/virtflow/agent/hypervisor"
)

// TestConfineSharedOnLibvirt: on libvirt's test driver, when a dedicated VM is pinned to
// CPUs 2-3 of an 8-CPU host with 2 reserved, the running shared domain is re-pinned live to
// the shared set 4-7 (confineShared, as Resync does before the dedicated VM starts), once.
func TestConfineSharedOnLibvirt(t *testing.T) {
	socket := os.Getenv("VIRTFLOW_TEST_LIBVIRT_SOCKET")
	if socket == "" {
		socket = hypervisor.DefaultSocket
		if _, err := os.Stat(socket); err != nil {
			t.Skipf("no libvirtd: VIRTFLOW_TEST_LIBVIRT_SOCKET is unset and %s does not exist", socket)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	hv, err := hypervisor.NewLibvirt(ctx, hypervisor.LibvirtConfig{Socket: socket, URI: "test:///default"})
	if err != nil {
		t.Fatal(err)
	}
	defer hv.Close()
	id := time.Now().UnixNano() % 1_000_000_000
	spec := hypervisor.DomainSpec{VMID: id, Generation: 3, VCPUs: 2, MemoryMiB: 64}
	name := spec.Name()
	t.Cleanup(func() { _ = hv.Undefine(context.Background(), name) })
	if err := hv.Define(ctx, spec); err != nil {
		t.Fatal(err)
	}
	if err := hv.Start(ctx, name); err != nil {
		t.Fatal(err)
	}
	as := []Assignment{
		vmAssignment("a1", strconv.FormatInt(id, 10), 2, "SHARED", "RUNNING"),
		vmAssignment("a2", strconv.FormatInt(id+1, 10), 2, "DEDICATED", "RUNNING"),
	}
	pins, errs := pinCPUs(as, 8, 2, nil)
	shared := sharedCPUs(pins, 8, 2)
	if len(errs) != 0 || !slices.Equal(pins["a2"], []int{2, 3}) || !slices.Equal(shared, []int{4, 5, 6, 7}) {
		t.Fatalf("pins %v, shared %v, errs %v", pins, shared, errs)
	}
	doms, err := hv.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	byVM := map[int64]hypervisor.Domain{}
	for _, d := range doms {
		byVM[d.VMID] = d
	}
	ag := &Agent{hv: hv, log: slog.New(slog.DiscardHandler), affinity: map[string]string{}}
	ag.confineShared(ctx, as, byVM, shared)
	aff, err := hv.CPUAffinity(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if len(aff) != 2 || !slices.Equal(aff[0], shared) || !slices.Equal(aff[1], shared) {
		t.Fatalf("shared domain affinity %v, want %v on both vCPUs", aff, shared)
	}
	if ag.affinity[name] == "" {
		t.Error("the applied set was not recorded: every resync would pin again")
	}
}
