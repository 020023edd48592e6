package app_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/internal/testkit/poll"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

// Slow and concurrent clients against the real server on PostgreSQL and Redis (issue 23,
// items 5, 6 and 15).

// startPostgres runs a server on a fresh PostgreSQL database with the extra flags and
// environment given.
func startPostgres(t *testing.T, args []string, env map[string]string) *running {
	t.Helper()
	return startPostgresN(t, 1, args, env)[0]
}

// startPostgresN runs n servers on one fresh PostgreSQL database and one image directory,
// as the replicas of one installation.
func startPostgresN(t *testing.T, n int, args []string, env map[string]string) []*running {
	t.Helper()
	ctx, cancel := context.WithTimeout(authz.SystemContext(context.Background(), "test"), time.Minute)
	defer cancel()
	dsn, drop, err := testdb.Create(ctx)
	if err != nil {
		testdb.Unavailable(t, err)
	}
	t.Cleanup(drop)
	vars := map[string]string{"DATABASE_URL": dsn, "REDIS_URL": testdb.RedisURL()}
	for k, v := range env {
		vars[k] = v
	}
	images := t.TempDir()
	var out []*running
	for range n {
		out = append(out, start(t, loadConfig(t, append([]string{"--addr", "127.0.0.1:0", "--data-dir", t.TempDir(),
			"--image-dir", images}, args...), vars)))
	}
	return out
}

// trickle opens a raw connection to the server and sends a request with headers head and a
// body of size bytes, of which it sends the first `first` at once and then one byte every
// `every` until the server answers or closes; it returns how long after the headers that
// took, the bytes of the body sent and the status line (empty when the server closed
// without one).
func trickle(t *testing.T, addr, head string, size, first int, every time.Duration) (time.Duration, int, string) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, head+fmt.Sprintf("Content-Length: %d\r\n\r\n", size)); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	answered := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(c).ReadString('\n')
		answered <- strings.TrimSpace(line)
	}()
	sent := 0
	if first > 0 {
		n, _ := c.Write(bytes.Repeat([]byte{'{'}, first))
		sent += n
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for sent < size {
		select {
		case line := <-answered:
			return time.Since(began), sent, line
		case <-tick.C:
			if _, err := c.Write([]byte{' '}); err != nil {
				return time.Since(began), sent, <-answered
			}
			sent++
		}
	}
	return time.Since(began), sent, <-answered
}

// TestSlowQueryBodyIsCut: an unauthenticated /query body sent at one byte per 100 ms is cut
// once --http-body-timeout (1 s here) has passed, not served for as long as it trickles.
func TestSlowQueryBodyIsCut(t *testing.T) {
	srv := startPostgres(t, []string{"--http-body-timeout", "1s"}, nil)
	head := "POST /query HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
	took, sent, status := trickle(t, srv.addr, head, 600, 1, 100*time.Millisecond)
	t.Logf("slow /query body: cut after %v, %d of 600 bytes sent, answer %q", took, sent, status)
	if sent >= 600 {
		t.Fatalf("the server read the whole slow body (%v): it was not cut", took)
	}
	if took > 4*time.Second {
		t.Errorf("cut after %v, want about the 1 s body timeout", took)
	}
	// A normal request on a fresh connection still works.
	srv.expectReady(t, "database", "redis")
}

// uploadImage creates an upload image over GraphQL and returns its id.
func (r *running) uploadImage(t *testing.T, name string) string {
	t.Helper()
	var out struct{ CreateImage struct{ ID string } }
	r.mustQuery(t, `mutation($n: String!) { createImage(input: {name: $n, format: RAW, source: "upload"}) { id } }`,
		map[string]any{"n": name}, &out)
	return out.CreateImage.ID
}

// put sends body to PUT /images/{id}/data as the admin with the headers given.
func (r *running) put(t *testing.T, id string, body []byte, headers map[string]string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPut, r.url("/images/"+id+"/data"), bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+testAdminToken)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("PUT image %s: %v", id, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp, string(raw)
}

// stored is the sha256 of image id's bytes as GET /images/{id}/data serves them.
func (r *running) stored(t *testing.T, id string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, r.url("/images/"+id+"/data"), nil)
	req.Header.Set("Authorization", "Bearer "+testAdminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET image %s data: %s", id, resp.Status)
	}
	h := sha256.New()
	_, _ = io.Copy(h, resp.Body)
	return hex.EncodeToString(h.Sum(nil))
}

func sha(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// TestStalledUploadDoesNotBlock: an upload that stalls holds its image for at most
// --upload-idle-timeout (1 s here): meanwhile a second upload is refused at once (409, not
// left waiting on a lock), the stalled one is cut, and then the second succeeds. An upload
// that is slow but steady completes, however much longer than both timeouts it takes.
func TestStalledUploadDoesNotBlock(t *testing.T) {
	srv := startPostgres(t, []string{"--upload-idle-timeout", "1s", "--http-body-timeout", "1s"}, nil)
	id := srv.uploadImage(t, "stalled")
	stalled := make(chan string, 1)
	began := time.Now()
	go func() {
		head := "PUT /images/" + id + "/data HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + testAdminToken + "\r\n"
		_, _, status := trickle(t, srv.addr, head, 1<<20, 1000, time.Hour) // 1000 bytes, then nothing
		stalled <- status
	}()
	second := bytes.Repeat([]byte("second upload "), 10_000)
	// Once the stalled upload holds the image, another is refused without waiting.
	poll.Until(t, 5*time.Second, func() error {
		var out struct{ Node struct{ Status string } }
		srv.mustQuery(t, `query($id: ID!) { node(id: $id) { ... on Image { status } } }`, map[string]any{"id": id}, &out)
		if out.Node.Status != "DOWNLOADING" {
			return fmt.Errorf("image %s is %s, want DOWNLOADING once the first upload started", id, out.Node.Status)
		}
		return nil
	})
	t0 := time.Now()
	resp, body := srv.put(t, id, second, nil)
	refused := time.Since(t0)
	t.Logf("second upload while the first stalls: %s after %v", resp.Status, refused)
	if resp.StatusCode != http.StatusConflict {
		t.Fatalf("second upload while the first stalls: %s %s, want 409", resp.Status, body)
	}
	if refused > 500*time.Millisecond {
		t.Errorf("the refusal took %v: it waited", refused)
	}
	select {
	case status := <-stalled:
		t.Logf("stalled upload cut after %v: %q", time.Since(began), status)
		if !strings.Contains(status, "408") && status != "" {
			t.Errorf("stalled upload answered %q, want 408 or a closed connection", status)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the stalled upload was not cut within 5 s (idle timeout 1 s)")
	}
	var took time.Duration
	poll.Until(t, 5*time.Second, func() error {
		resp, body := srv.put(t, id, second, nil)
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("second upload after the stall: %s %s", resp.Status, body)
		}
		took = time.Since(began)
		return nil
	})
	t.Logf("second upload accepted %v after the first stalled", took)
	if got := srv.stored(t, id); got != sha(second) {
		t.Fatalf("stored sha256 %s, want the second upload's %s", got, sha(second))
	}

	// Slow but steady: 2 KiB every 200 ms for 3 s.
	steady := srv.uploadImage(t, "steady")
	data := bytes.Repeat([]byte("0123456789abcdef"), 15*128)
	pr, pw := io.Pipe()
	go func() {
		for off := 0; off < len(data); off += 2048 {
			time.Sleep(200 * time.Millisecond)
			if _, err := pw.Write(data[off:min(off+2048, len(data))]); err != nil {
				return
			}
		}
		pw.Close()
	}()
	req, _ := http.NewRequest(http.MethodPut, srv.url("/images/"+steady+"/data"), pr)
	req.Header.Set("Authorization", "Bearer "+testAdminToken)
	t0 = time.Now()
	var err error
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	t.Logf("steady upload of %d bytes took %v: %s", len(data), time.Since(t0), resp.Status)
	if resp.StatusCode != http.StatusOK || srv.stored(t, steady) != sha(data) {
		t.Fatalf("slow but steady upload: %s", resp.Status)
	}
}

// TestConcurrentUploadsNeverMix: two clients upload different bytes to one image, in
// resumable chunks, interleaved, through two servers of one installation: the database
// admits one upload at a time, the other gets 409, and the image's bytes are entirely the
// winner's, never a mix.
func TestConcurrentUploadsNeverMix(t *testing.T) {
	servers := startPostgresN(t, 2, nil, nil)
	srv, other := servers[0], servers[1] // A uploads through srv, B through other
	const size = 256 << 10
	a, b := bytes.Repeat([]byte{'a'}, size), bytes.Repeat([]byte{'b'}, size)
	half := size / 2
	chunk := func(start, end int) string { return fmt.Sprintf("bytes %d-%d/%d", start, end-1, size) }
	for round := range 3 {
		id := srv.uploadImage(t, fmt.Sprintf("race-%d", round))
		// A sends its first half.
		resp, body := srv.put(t, id, a[:half], map[string]string{"Content-Range": chunk(0, half)})
		if resp.StatusCode != http.StatusPermanentRedirect {
			t.Fatalf("A's first chunk: %s %s", resp.Status, body)
		}
		uid := resp.Header.Get("Upload-ID")
		if uid == "" {
			t.Fatal("A's first chunk answered no Upload-ID")
		}
		// B starts over with its own first half, then asks what arrived: refused, both.
		if resp, body := other.put(t, id, b[:half], map[string]string{"Content-Range": chunk(0, half)}); resp.StatusCode != http.StatusConflict {
			t.Fatalf("B's first chunk while A uploads: %s %s, want 409", resp.Status, body)
		}
		if resp, body := other.put(t, id, nil, map[string]string{"Content-Range": fmt.Sprintf("bytes */%d", size)}); resp.StatusCode != http.StatusConflict {
			t.Fatalf("B's status query while A uploads: %s %s, want 409", resp.Status, body)
		}
		// B sends A's next chunk without A's id: refused.
		if resp, body := other.put(t, id, b[half:], map[string]string{"Content-Range": chunk(half, size)}); resp.StatusCode < 400 {
			t.Fatalf("B's second half without A's Upload-ID: %s %s, want a refusal", resp.Status, body)
		}
		// A resumes: asks, then sends the rest.
		resp, _ = srv.put(t, id, nil, map[string]string{"Content-Range": fmt.Sprintf("bytes */%d", size), "Upload-ID": uid})
		if resp.StatusCode != http.StatusPermanentRedirect || resp.Header.Get("Range") != fmt.Sprintf("bytes=0-%d", half-1) {
			t.Fatalf("A's status query: %s Range %q", resp.Status, resp.Header.Get("Range"))
		}
		if resp, body := srv.put(t, id, a[half:], map[string]string{"Content-Range": chunk(half, size), "Upload-ID": uid}); resp.StatusCode != http.StatusOK ||
			!regexp.MustCompile(`"status":\s*"ACTIVE"`).MatchString(body) {
			t.Fatalf("A's last chunk: %s %s", resp.Status, body)
		}
		if got := srv.stored(t, id); got != sha(a) {
			t.Fatalf("round %d: stored sha256 %s is not A's %s (B's is %s): the uploads mixed", round, got, sha(a), sha(b))
		}
	}

	// Whole bodies at once: exactly one wins, and the bytes are all its own.
	id := srv.uploadImage(t, "race-whole")
	codes := make(chan int, 2)
	for i, body := range [][]byte{a, b} {
		go func() {
			resp, _ := servers[i].put(t, id, body, nil)
			codes <- resp.StatusCode
		}()
	}
	c1, c2 := <-codes, <-codes
	if (c1 == http.StatusOK) == (c2 == http.StatusOK) {
		t.Fatalf("two whole uploads answered %d and %d, want one 200", c1, c2)
	}
	if got := srv.stored(t, id); got != sha(a) && got != sha(b) {
		t.Fatalf("stored sha256 %s is neither upload's", got)
	}
}

// getMetrics is GET url with the bearer token given ("" sends none): status and body.
func getMetrics(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

// TestMetricsAccess: /metrics on the API's address answers only the metrics token or an
// operator's API token; with --metrics-addr it is served there only.
func TestMetricsAccess(t *testing.T) {
	const metricsToken = "metrics-secret-for-app-test"
	t.Run("token on the API address", func(t *testing.T) {
		srv := startPostgres(t, nil, map[string]string{"VIRTFLOW_METRICS_TOKEN": metricsToken})
		for _, c := range []struct {
			token string
			want  int
		}{{"", 401}, {"wrong", 401}, {"vf_not-a-token", 401}, {metricsToken, 200}, {testAdminToken, 200}} {
			code, body := getMetrics(t, srv.url("/metrics"), c.token)
			if code != c.want {
				t.Errorf("GET /metrics with %q: %d, want %d", c.token, code, c.want)
			}
			if c.want != 200 && strings.Contains(body, "virtflow_") {
				t.Errorf("refused GET /metrics still shows metrics: %.200s", body)
			}
			if c.want == 200 && !strings.Contains(body, "virtflow_http_requests_total") {
				t.Errorf("GET /metrics with %q: no metrics in %.200s", c.token, body)
			}
		}
	})
	t.Run("own address", func(t *testing.T) {
		srv := startPostgres(t, []string{"--metrics-addr", "127.0.0.1:0"}, nil)
		if code, _ := getMetrics(t, srv.url("/metrics"), testAdminToken); code != http.StatusNotFound {
			t.Errorf("GET /metrics on the API address with --metrics-addr: %d, want 404", code)
		}
		m := regexp.MustCompile(`metrics_addr=(\S+)`).FindStringSubmatch(srv.log.String())
		if m == nil {
			t.Fatalf("no metrics address in the log:\n%s", srv.log.String())
		}
		if code, body := getMetrics(t, "http://"+m[1]+"/metrics", ""); code != 200 || !strings.Contains(body, "virtflow_") {
			t.Errorf("GET /metrics on %s: %d %.200s", m[1], code, body)
		}
	})
}
