package hypervisor

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// vmSeq hands out VM ids unique within the test binary and unlikely to meet those of another
// run sharing the same libvirtd test driver.
var vmSeq atomic.Int64

func init() { vmSeq.Store(rand.Int64N(1<<40) * 1000) }

// newVMID returns a fresh VM id.
func newVMID() int64 { return vmSeq.Add(1) }

// testCtx returns a context that ends with the test or after a minute.
func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// smallSpec is a diskless one-NIC domain of a fresh VM.
func smallSpec() DomainSpec {
	id := newVMID()
	return DomainSpec{
		VMID: id, Generation: 1, VCPUs: 1, MemoryMiB: 64,
		NICs: []NIC{{MAC: macFor(id, 0), Network: "default"}},
	}
}

// macFor returns a locally administered MAC for NIC i of VM id.
func macFor(id int64, i int) string {
	b := []byte{0x52, 0x54, 0x00, byte(id >> 16), byte(id >> 8), byte(id)}
	b[3] ^= byte(i << 4)
	const hexd = "0123456789abcdef"
	out := make([]byte, 0, 17)
	for j, x := range b {
		if j > 0 {
			out = append(out, ':')
		}
		out = append(out, hexd[x>>4], hexd[x&15])
	}
	return string(out)
}

// mustState fails the test unless the domain is in state want.
func mustState(t *testing.T, h Hypervisor, name string, want DomainState) {
	t.Helper()
	got, err := h.State(testCtx(t), name)
	if err != nil {
		t.Fatalf("State(%s): %v", name, err)
	}
	if got != want {
		t.Fatalf("State(%s) = %s, want %s", name, got, want)
	}
}

// must fails the test on err.
func must(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// findDomain returns the listed domain of VM id.
func findDomain(t *testing.T, h Hypervisor, id int64) (Domain, bool) {
	t.Helper()
	doms, err := h.List(testCtx(t))
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	for _, d := range doms {
		if d.VMID == id {
			return d, true
		}
	}
	return Domain{}, false
}

// cleanupDomain undefines the domain of spec when the test ends, whatever happened.
func cleanupDomain(t *testing.T, h Hypervisor, name string) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := h.Undefine(ctx, name); err != nil && !errors.Is(err, ErrClosed) {
			t.Errorf("cleanup: Undefine(%s): %v", name, err)
		}
	})
}

// runContract checks the behaviour every Hypervisor promises. open returns a hypervisor that
// is closed when the test ends.
func runContract(t *testing.T, open func(t *testing.T) Hypervisor) {
	t.Run("Lifecycle", func(t *testing.T) {
		h := open(t)
		ctx := testCtx(t)
		spec := smallSpec()
		name := spec.Name()
		cleanupDomain(t, h, name)

		must(t, "Define", h.Define(ctx, spec))
		mustState(t, h, name, StateShutOff)
		must(t, "Start", h.Start(ctx, name))
		mustState(t, h, name, StateRunning)
		must(t, "Reboot", h.Reboot(ctx, name))
		mustState(t, h, name, StateRunning)
		must(t, "Shutdown", h.Shutdown(ctx, name))
		mustState(t, h, name, StateShutOff)
		must(t, "Start again", h.Start(ctx, name))
		mustState(t, h, name, StateRunning)
		must(t, "Suspend", h.Suspend(ctx, name))
		mustState(t, h, name, StatePaused)
		must(t, "Start resumes a paused domain", h.Start(ctx, name))
		mustState(t, h, name, StateRunning)
		must(t, "Stop", h.Stop(ctx, name))
		mustState(t, h, name, StateShutOff)
		must(t, "Suspend a stopped domain", h.Suspend(ctx, name))
		mustState(t, h, name, StateShutOff)
		must(t, "Start a third time", h.Start(ctx, name))
		must(t, "Undefine a running domain", h.Undefine(ctx, name))
		if _, err := h.State(ctx, name); !errors.Is(err, ErrNotFound) {
			t.Fatalf("State after Undefine: err = %v, want ErrNotFound", err)
		}
		if d, ok := findDomain(t, h, spec.VMID); ok {
			t.Fatalf("List after Undefine still has %+v", d)
		}
	})

	t.Run("Idempotent", func(t *testing.T) {
		h := open(t)
		ctx := testCtx(t)
		spec := smallSpec()
		name := spec.Name()
		cleanupDomain(t, h, name)

		for i := range 2 {
			must(t, "Define", h.Define(ctx, spec))
			if i == 0 {
				must(t, "Start", h.Start(ctx, name))
			}
		}
		mustState(t, h, name, StateRunning) // an identical Define leaves a running domain alone
		for range 2 {
			must(t, "Start", h.Start(ctx, name))
			mustState(t, h, name, StateRunning)
		}
		for range 2 {
			must(t, "Shutdown", h.Shutdown(ctx, name))
			mustState(t, h, name, StateShutOff)
		}
		for range 2 {
			must(t, "Stop", h.Stop(ctx, name))
			mustState(t, h, name, StateShutOff)
		}
		must(t, "Reboot a stopped domain", h.Reboot(ctx, name))
		mustState(t, h, name, StateRunning)
		for range 2 {
			must(t, "Reboot", h.Reboot(ctx, name))
			mustState(t, h, name, StateRunning)
		}

		// A changed spec is redefined: the new generation is what List reads back.
		changed := spec
		changed.Generation = 2
		changed.MemoryMiB = 128
		must(t, "Define changed", h.Define(ctx, changed))
		mustState(t, h, name, StateRunning)
		d, ok := findDomain(t, h, spec.VMID)
		if !ok || d.Generation != 2 {
			t.Fatalf("after redefining generation 2: listed %+v (found %v)", d, ok)
		}
		must(t, "Define changed again", h.Define(ctx, changed))

		for range 2 {
			must(t, "Undefine", h.Undefine(ctx, name))
		}
		must(t, "Undefine a domain that never existed", h.Undefine(ctx, DomainName(newVMID())))
	})

	t.Run("NotFound", func(t *testing.T) {
		h := open(t)
		ctx := testCtx(t)
		name := DomainName(newVMID())
		ops := map[string]func() error{
			"Start":    func() error { return h.Start(ctx, name) },
			"Shutdown": func() error { return h.Shutdown(ctx, name) },
			"Stop":     func() error { return h.Stop(ctx, name) },
			"Reboot":   func() error { return h.Reboot(ctx, name) },
			"State":    func() error { _, err := h.State(ctx, name); return err },
		}
		for op, call := range ops {
			err := call()
			var nf *NotFoundError
			if !errors.Is(err, ErrNotFound) || !errors.As(err, &nf) || nf.Name != name {
				t.Errorf("%s of a missing domain: err = %v, want *NotFoundError{%s}", op, err, name)
			}
		}
	})

	t.Run("InvalidSpec", func(t *testing.T) {
		h := open(t)
		ctx := testCtx(t)
		bad := smallSpec()
		bad.VCPUs = 2
		bad.PinnedCPUs = []int{1}
		if err := h.Define(ctx, bad); !errors.Is(err, ErrInvalidSpec) {
			t.Fatalf("Define with 1 pinned CPU for 2 vCPUs: err = %v, want ErrInvalidSpec", err)
		}
		if _, err := h.State(ctx, bad.Name()); !errors.Is(err, ErrNotFound) {
			t.Fatalf("an invalid spec left a domain behind: State err = %v", err)
		}
	})

	t.Run("Conflict", func(t *testing.T) {
		h := open(t)
		ctx := testCtx(t)
		a := smallSpec()
		a.UUID = DomainUUID(a.Name() + "-explicit")
		cleanupDomain(t, h, a.Name())
		must(t, "Define", h.Define(ctx, a))

		otherUUID := a
		otherUUID.UUID = DomainUUID(a.Name() + "-other")
		if err := h.Define(ctx, otherUUID); !errors.Is(err, ErrConflict) {
			t.Errorf("Define of the same name with another UUID: err = %v, want ErrConflict", err)
		}
		b := smallSpec()
		b.UUID = a.UUID
		cleanupDomain(t, h, b.Name())
		if err := h.Define(ctx, b); !errors.Is(err, ErrConflict) {
			t.Errorf("Define of another name with the same UUID: err = %v, want ErrConflict", err)
		}
	})

	t.Run("List", func(t *testing.T) {
		h := open(t)
		ctx := testCtx(t)
		var ids []int64
		for i := range 3 {
			spec := smallSpec()
			spec.Generation = int64(10 + i)
			ids = append(ids, spec.VMID)
			cleanupDomain(t, h, spec.Name())
			must(t, "Define", h.Define(ctx, spec))
			if i == 1 {
				must(t, "Start", h.Start(ctx, spec.Name()))
			}
		}
		doms, err := h.List(ctx)
		must(t, "List", err)
		if !slices.IsSortedFunc(doms, func(a, b Domain) int { return strings.Compare(a.Name, b.Name) }) {
			t.Errorf("List is not sorted by name: %+v", doms)
		}
		for i, id := range ids {
			d, ok := findDomain(t, h, id)
			if !ok {
				t.Fatalf("List lacks VM %d", id)
			}
			wantState := StateShutOff
			if i == 1 {
				wantState = StateRunning
			}
			if d.Name != DomainName(id) || d.Generation != int64(10+i) || d.State != wantState || d.UUID != DomainUUID(d.Name) {
				t.Errorf("listed %+v, want name %s, generation %d, state %s, UUID %s",
					d, DomainName(id), 10+i, wantState, DomainUUID(DomainName(id)))
			}
		}
	})

	t.Run("Capacity", func(t *testing.T) {
		h := open(t)
		c, err := h.Capacity(testCtx(t))
		must(t, "Capacity", err)
		if c.VCPUs <= 0 || c.MemoryMiB <= 0 {
			t.Fatalf("Capacity = %+v, want positive CPUs and memory", c)
		}
	})

	t.Run("Storage", func(t *testing.T) {
		runStorageContract(t, open, func(h Hypervisor, name string) (string, error) {
			if l, ok := h.(*Libvirt); ok {
				return l.DomainXML(testCtx(t), name)
			}
			return "", nil
		})
	})

	t.Run("Closed", func(t *testing.T) {
		h := open(t)
		must(t, "Close", h.Close())
		must(t, "Close again", h.Close())
		if _, err := h.List(testCtx(t)); !errors.Is(err, ErrClosed) {
			t.Fatalf("List after Close: err = %v, want ErrClosed", err)
		}
		if err := h.Start(testCtx(t), "vf-1"); !errors.Is(err, ErrClosed) {
			t.Fatalf("Start after Close: err = %v, want ErrClosed", err)
		}
	})
}
