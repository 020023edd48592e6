package nodeagent

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/virtflow/virtflow/agent/hypervisor"
)

// imageServer serves data as /images/{id}/data the way the API does (http.ServeContent,
// Range support), checking the bearer token.
func imageServer(tb testing.TB, data []byte) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer agent-token" || !strings.HasSuffix(r.URL.Path, "/data") {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		http.ServeContent(w, r, "", time.Unix(0, 0), bytes.NewReader(data))
	}))
	tb.Cleanup(srv.Close)
	return srv
}

// randomImage returns n random bytes, their Image record (id, RAW, ACTIVE) and server.
func randomImage(tb testing.TB, id string, n int) ([]byte, *Image, *httptest.Server) {
	data := make([]byte, n)
	r := rand.New(rand.NewPCG(uint64(n), 3))
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	sum := sha256.Sum256(data)
	checksum := "sha256:" + hex.EncodeToString(sum[:])
	return data, &Image{Id: id, Format: ImageFormatRaw, Status: ImageStatusActive, Checksum: &checksum, SizeBytes: int64(n)}, imageServer(tb, data)
}

// newTestCache is an image cache on hv with its own pool and directory.
func newTestCache(tb testing.TB, hv hypervisor.Hypervisor, srv *httptest.Server) *imageCache {
	c, err := newImageCache(Config{APIURL: srv.URL + "/query", Token: "agent-token", Hypervisor: hv, HTTPClient: srv.Client(),
		Pool: fmt.Sprintf("vf-bench-%d", rand.Int64N(1<<40)), PoolPath: tb.TempDir() + "/pool", CacheDir: tb.TempDir()})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if d, ok := hv.(interface {
			DeletePool(context.Context, string) error
		}); ok {
			_ = d.DeletePool(context.Background(), c.pool.Name)
		}
	})
	return c
}

// qemuSystem connects to qemu:///system, or skips when there is no libvirtd.
func qemuSystem(tb testing.TB) *hypervisor.Libvirt {
	socket := os.Getenv("VIRTFLOW_TEST_LIBVIRT_SOCKET")
	if socket == "" {
		socket = hypervisor.DefaultSocket
		if _, err := os.Stat(socket); err != nil {
			tb.Skipf("no libvirtd: VIRTFLOW_TEST_LIBVIRT_SOCKET is unset and %s does not exist", socket)
		}
	}
	h, err := hypervisor.NewLibvirt(context.Background(), hypervisor.LibvirtConfig{Socket: socket, URI: "qemu:///system", DomainType: hypervisor.DomainTypeQEMU})
	if err != nil {
		tb.Fatalf("connect to qemu:///system: %v", err)
	}
	tb.Cleanup(func() { _ = h.Close() })
	return h
}

// TestImageCacheQEMUPool caches an image in a real directory pool of qemu:///system: the
// bytes in the pool's file are the image's, a second ensure reuses them, a corrupted
// download is refused, and an overlay root disk backed by the cache is a real qcow2 file.
func TestImageCacheQEMUPool(t *testing.T) {
	hv := qemuSystem(t)
	data, img, srv := randomImage(t, "77", 2<<20)
	c := newTestCache(t, hv, srv)
	ctx := context.Background()
	ci, hit, err := c.ensure(ctx, img)
	if err != nil || hit {
		t.Fatalf("first ensure: hit %v, %v", hit, err)
	}
	got, err := os.ReadFile(ci.Volume.Path)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("the pool's file %s does not hold the image (%v)", ci.Volume.Path, err)
	}
	if _, hit, err := c.ensure(ctx, img); err != nil || !hit {
		t.Fatalf("second ensure: hit %v, %v; want the cached copy", hit, err)
	}

	ag := &Agent{hv: hv, images: c}
	disks, _, err := ag.rootDisks(ctx, 12345, img, 1)
	if err != nil {
		t.Fatal(err)
	}
	head := make([]byte, 4)
	f, err := os.Open(disks[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.Read(head)
	f.Close()
	if string(head) != "QFI\xfb" || disks[0].Backing == nil || disks[0].Backing.Path != ci.Volume.Path {
		t.Fatalf("root disk %+v is not a qcow2 overlay of %s", disks[0], ci.Volume.Path)
	}
	if err := ag.removeDisks(ctx, 12345); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(disks[0].Path); !os.IsNotExist(err) {
		t.Fatalf("root disk file left after removeDisks: %v", err)
	}

	bad := *img
	wrong := "sha256:" + strings.Repeat("00", 32)
	bad.Id, bad.Checksum = "78", &wrong
	if _, _, err := c.ensure(ctx, &bad); err == nil || !strings.Contains(err.Error(), "sha256") {
		t.Fatalf("ensure of bytes that do not match the checksum: %v", err)
	}
}

// BenchmarkImageTransfer measures server → agent image transfer into the node's pool:
// download over HTTP, sha256 check, upload into a pool volume. Reports MB/s.
func BenchmarkImageTransfer(b *testing.B) {
	const size = 64 << 20
	for _, tc := range []struct {
		name string
		open func(b *testing.B) hypervisor.Hypervisor
	}{
		{"simulated", func(b *testing.B) hypervisor.Hypervisor {
			h, err := hypervisor.NewSimulated(hypervisor.SimulatedConfig{})
			if err != nil {
				b.Fatal(err)
			}
			return h
		}},
		{"qemu-system-dir-pool", func(b *testing.B) hypervisor.Hypervisor { return qemuSystem(b) }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			hv := tc.open(b)
			_, img, srv := randomImage(b, "1", size)
			c := newTestCache(b, hv, srv)
			ctx := context.Background()
			b.SetBytes(size)
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				im := *img
				im.Id = strconv.Itoa(i + 1) // a new volume each time: nothing cached
				if _, hit, err := c.ensure(ctx, &im); err != nil || hit {
					b.Fatalf("ensure: hit %v, %v", hit, err)
				}
			}
		})
	}
}
