package app_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/virtflow/virtflow/internal/testkit/poll"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

// TestComposeTopology runs docker-compose.yml's topology as processes, since CI has no
// container engine: the binaries the image holds, built with the Dockerfile's version
// stamps; a one-shot `server migrate`; then server and worker as separate processes, each
// with its own data directory (a container's own filesystem) and the shared image volume
// mounted at the same path (VIRTFLOW_IMAGE_DIR), on PostgreSQL and a private Redis. An image
// the worker fetches is then served by the server: what failed with 409 when the two did not
// share the store. Both processes report the stamped version and revision.
func TestComposeTopology(t *testing.T) {
	root := t.TempDir()
	bin := filepath.Join(root, "usr-local-bin")
	_, file, _, _ := runtime.Caller(0)
	repo := filepath.Join(filepath.Dir(file), "..", "..")
	const stampVersion, stampRevision = "v9.9.9-compose", "0123456789abcdef0123456789abcdef01234567"
	build := exec.Command("go", "build", "-o", bin+string(filepath.Separator),
		"-ldflags", "-X github.com/virtflow/virtflow/internal/platform/version.stampedVersion="+stampVersion+
			" -X github.com/virtflow/virtflow/internal/platform/version.stampedRevision="+stampRevision,
		"./cmd/server", "./cmd/worker")
	build.Dir = repo
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}

	// The compose file's volumes and environment.
	images := filepath.Join(root, "volumes", "images") // images:/var/lib/virtflow/images
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"DATABASE_URL=" + testdb.New(t),
		"REDIS_URL=" + testdb.PrivateRedis(t),
		"VIRTFLOW_SECRET_KEY=" + base64.StdEncoding.EncodeToString(key),
		"VIRTFLOW_IMAGE_DIR=" + images,
		"VIRTFLOW_ADMIN_TOKEN=" + testAdminToken,
		// The image source below is a local HTTP server: loopback is off limits by default.
		"VIRTFLOW_EGRESS_ALLOW=127.0.0.1/32",
	}
	run := func(name, dataDir string, args ...string) *exec.Cmd {
		if err := os.MkdirAll(dataDir, 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(filepath.Join(bin, name), args...)
		cmd.Dir = dataDir // the image's WORKDIR /var/lib/virtflow, a container's own
		cmd.Env = append(env, "VIRTFLOW_DATA_DIR="+filepath.Join(dataDir, "data"))
		return cmd
	}

	// migrate: the one-shot service.
	if out, err := run("server", filepath.Join(root, "migrate"), "migrate").CombinedOutput(); err != nil {
		t.Fatalf("server migrate: %v\n%s", err, out)
	}

	serverAddr, workerAddr := freeAddr(t), freeAddr(t)
	start := func(name, dir, addr string) {
		cmd := run(name, dir, "--addr", addr)
		var log bytes.Buffer
		cmd.Stdout, cmd.Stderr = &log, &log
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = cmd.Process.Signal(os.Interrupt)
			done := make(chan struct{})
			go func() { _ = cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				_ = cmd.Process.Kill()
			}
			if t.Failed() {
				t.Logf("%s log:\n%s", name, log.String())
			}
		})
		poll.Until(t, 2*time.Minute, func() error {
			resp, err := http.Get("http://" + addr + "/readyz")
			if err != nil {
				return err
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("%s /readyz: %d", name, resp.StatusCode)
			}
			return nil
		})
	}
	start("server", filepath.Join(root, "server"), serverAddr)
	start("worker", filepath.Join(root, "worker"), workerAddr)

	// Both report the stamped build.
	for _, addr := range []string{serverAddr, workerAddr} {
		var v struct{ Version, Revision string }
		getJSON(t, "http://"+addr+"/version", &v)
		if v.Version != stampVersion || v.Revision != stampRevision {
			t.Errorf("%s/version = %+v, want %s %s", addr, v, stampVersion, stampRevision)
		}
	}
	if out, err := exec.Command(filepath.Join(bin, "server"), "--version").CombinedOutput(); err != nil || !bytes.Contains(out, []byte(stampVersion)) {
		t.Errorf("server --version: %v %s", err, out)
	}

	// An image the worker fetches, served by the server.
	disk := bytes.Repeat([]byte("compose "), 4096)
	src := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "", time.Unix(0, 0), bytes.NewReader(disk))
	}))
	t.Cleanup(src.Close)
	var created struct {
		CreateImage struct{ ID string }
	}
	gqlPost(t, serverAddr, createImage, map[string]any{"in": map[string]any{"name": "compose", "source": src.URL + "/disk.raw", "format": "RAW"}}, &created)
	id := created.CreateImage.ID
	poll.Until(t, 2*time.Minute, func() error {
		var out struct {
			Node struct{ Status, StatusReason string }
		}
		gqlPost(t, serverAddr, `query($id: ID!) { node(id: $id) { ... on Image { status statusReason } } }`, map[string]any{"id": id}, &out)
		if out.Node.Status != "ACTIVE" {
			return fmt.Errorf("image %s %s", out.Node.Status, out.Node.StatusReason)
		}
		return nil
	})
	req, _ := http.NewRequest(http.MethodGet, "http://"+serverAddr+"/images/"+id+"/data", nil)
	req.Header.Set("Authorization", "Bearer "+testAdminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !bytes.Equal(got, disk) {
		t.Fatalf("GET /images/%s/data on the server: %d, %d bytes (want 200, the %d bytes the worker fetched)", id, resp.StatusCode, len(got), len(disk))
	}
	entries, _ := os.ReadDir(images)
	if len(entries) == 0 {
		t.Errorf("the shared image volume %s is empty", images)
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func getJSON(t *testing.T, url string, out any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatalf("%s: %v", url, err)
	}
}

// gqlPost sends one operation as the admin and fails the test on any error.
func gqlPost(t *testing.T, addr, query string, vars map[string]any, out any) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, "http://"+addr+"/query", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+testAdminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Data   json.RawMessage
		Errors []json.RawMessage
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || len(r.Errors) > 0 {
		t.Fatalf("%s: %v %s", query, err, r.Errors)
	}
	if err := json.Unmarshal(r.Data, out); err != nil {
		t.Fatal(err)
	}
}
