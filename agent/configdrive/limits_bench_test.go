package configdrive

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// aliasBomb is a "billion laughs" cloud-config: levels anchored lists of nine aliases of
// the level below, so the last one expands to 9^levels strings.
func aliasBomb(levels int) string {
	var b strings.Builder
	b.WriteString("#cloud-config\na0: &a0 [lol,lol,lol,lol,lol,lol,lol,lol,lol]\n")
	for i := 1; i < levels; i++ {
		p := fmt.Sprintf("*a%d", i-1)
		fmt.Fprintf(&b, "a%d: &a%d [%s]\n", i, i, strings.Repeat(p+",", 8)+p)
	}
	return b.String()
}

// deepFlow is a 64 KiB cloud-config of nested flow sequences.
func deepFlow() string {
	n := (MaxUserData - len("#cloud-config\nx: \n")) / 2
	return "#cloud-config\nx: " + strings.Repeat("[", n) + strings.Repeat("]", n) + "\n"
}

// deepBlock is a cloud-config of block mappings nested as deep as 64 KiB allows.
func deepBlock() string {
	var b strings.Builder
	b.WriteString("#cloud-config\n")
	for i := 0; ; i++ {
		line := strings.Repeat(" ", i) + "k:\n"
		if b.Len()+len(line)+len(strings.Repeat(" ", i+1))+2 > MaxUserData {
			b.WriteString(strings.Repeat(" ", i) + "k: v\n")
			break
		}
		b.WriteString(line)
	}
	return b.String()
}

// BenchmarkRenderHostile measures Render (what the worker and the node agent run) on
// hostile user-data with an SSH key to merge: time per call and the bytes allocated
// (B/op), and the peak heap seen while it runs (peak-heap-MB).
func BenchmarkRenderHostile(b *testing.B) {
	key := benchKey()
	for _, tc := range []struct {
		name, userData string
	}{
		{"alias-9^6", aliasBomb(6)},
		{"alias-9^9", aliasBomb(9)},
		{"deep-flow-64KiB", deepFlow()},
		{"deep-block-64KiB", deepBlock()},
	} {
		b.Run(tc.name, func(b *testing.B) {
			spec := Spec{InstanceID: "vm-1", Hostname: "vm-1", UserData: tc.userData, SSHKeys: []string{key}}
			b.ReportAllocs()
			peak := peakHeap(func() {
				for b.Loop() {
					_, _ = Render(spec)
				}
			})
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
		})
	}
}

// peakHeap runs f while sampling the heap every millisecond and returns the largest
// HeapAlloc seen above the heap before f.
func peakHeap(f func()) uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	var peak uint64
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		var s runtime.MemStats
		for {
			select {
			case <-done:
				return
			case <-t.C:
				runtime.ReadMemStats(&s)
				if s.HeapAlloc > base && s.HeapAlloc-base > peak {
					peak = s.HeapAlloc - base
				}
			}
		}
	}()
	f()
	close(done)
	<-stopped
	runtime.ReadMemStats(&ms)
	if ms.HeapAlloc > base && ms.HeapAlloc-base > peak {
		peak = ms.HeapAlloc - base
	}
	return peak
}

// benchKey is a fixed ed25519 public key as an authorized_keys line.
func benchKey() string {
	return "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOpKbGPinFIKvvVQexMuxfmVR3auvr57kkIe6mkURtIs bench@virtflow"
}

// BenchmarkValidateHostile measures the API's check (ValidateUserData) on the same inputs.
func BenchmarkValidateHostile(b *testing.B) {
	for _, tc := range []struct{ name, userData string }{
		{"alias-9^6", aliasBomb(6)},
		{"alias-9^9", aliasBomb(9)},
		{"deep-flow-64KiB", deepFlow()},
		{"deep-block-64KiB", deepBlock()},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = ValidateUserData(tc.userData)
			}
		})
	}
}
