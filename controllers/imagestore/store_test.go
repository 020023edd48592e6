package imagestore_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/controllers/imagestore"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/domain/egress"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/auditlog"
	"github.com/virtflow/virtflow/ent/image"
	"github.com/virtflow/virtflow/ent/outboxtask"
	"github.com/virtflow/virtflow/internal/platform/infra"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
	"github.com/virtflow/virtflow/store/dberr"
)

func TestMain(m *testing.M) { testdb.Main(m) }

// env is a store on the package's database and a temporary directory.
type env struct {
	ctx    context.Context // the system, for setup and reads
	client *ent.Client
	store  *imagestore.Store
}

func newEnv(t *testing.T, maxBytes int64) *env {
	t.Helper()
	ctx := authz.SystemContext(context.Background(), "imagestore-test")
	db, err := infra.OpenDatabase(ctx, testdb.DSN(t), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	// The tests' sources are local HTTP servers: the operator's allow list lets them through.
	s, err := imagestore.New(db.Client, imagestore.Config{Dir: t.TempDir(), MaxBytes: maxBytes, Egress: egress.MustParse("127.0.0.1/32")})
	if err != nil {
		t.Fatal(err)
	}
	return &env{ctx: ctx, client: db.Client, store: s}
}

// admin is a context acting as a platform administrator.
func admin() context.Context {
	return authz.NewContext(context.Background(), &authz.Viewer{Name: "admin", UserID: 1,
		Bindings: []authz.Binding{{Role: authz.RoleAdmin, Domain: authz.Platform}}})
}

var seq atomic.Int64

// newImage creates an image with the given source, format and expected checksum.
func (e *env) newImage(t *testing.T, source string, format image.Format, checksum string) *ent.Image {
	t.Helper()
	c := e.client.Image.Create().SetName(fmt.Sprintf("img-%d-%d", time.Now().UnixNano(), seq.Add(1))).
		SetSource(source).SetFormat(format)
	if checksum != "" {
		c.SetChecksum(checksum)
	}
	img, err := c.Save(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if img.Status != image.StatusPending {
		t.Fatalf("a new image is %s, want PENDING", img.Status)
	}
	return img
}

// get reads an image back.
func (e *env) get(t *testing.T, id int) *ent.Image {
	t.Helper()
	img, err := e.client.Image.Get(e.ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// qcow2Bytes returns n bytes that start like a qcow2 file.
func qcow2Bytes(n int) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(uint64(n), 7))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	copy(b, "QFI\xfb")
	return b
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(h[:])
}

// stored reads the verified bytes of image id through Open.
func (e *env) stored(t *testing.T, id int) []byte {
	t.Helper()
	f, _, err := e.store.Open(e.ctx, id)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestUploadWhole(t *testing.T) {
	e := newEnv(t, 0)
	data := qcow2Bytes(300_000)
	img := e.newImage(t, imagestore.SourceUpload, image.FormatQcow2, sum(data))
	if _, _, err := e.store.Open(e.ctx, img.ID); apierrCode(err) != apierr.CodeConflict {
		t.Fatalf("Open of a PENDING image: err = %v, want CONFLICT", err)
	}
	p, err := e.store.Receive(admin(), img.ID, bytes.NewReader(data), imagestore.ContentRange{}, "")
	if err != nil {
		t.Fatal(err)
	}
	if p.IsIncomplete() || p.Image.Status != image.StatusActive || p.Image.SizeBytes != int64(len(data)) || p.Image.Checksum != sum(data) {
		t.Fatalf("after upload: %+v", p.Image)
	}
	if !bytes.Equal(e.stored(t, img.ID), data) {
		t.Fatal("stored bytes differ from the upload")
	}
	// Audited as the uploader.
	n, err := e.client.AuditLog.Query().Where(auditlog.Action("uploadImage"), auditlog.ObjectID(img.ID), auditlog.Actor("admin")).Count(e.ctx)
	if err != nil || n < 2 {
		t.Fatalf("audit rows of the upload: %d, %v; want DOWNLOADING and ACTIVE", n, err)
	}
	// An ACTIVE image takes no more bytes.
	if _, err := e.store.Receive(admin(), img.ID, bytes.NewReader(data), imagestore.ContentRange{}, ""); apierrCode(err) != apierr.CodeConflict {
		t.Fatalf("second upload: err = %v, want CONFLICT", err)
	}
}

func TestUploadChunksResume(t *testing.T) {
	e := newEnv(t, 0)
	data := qcow2Bytes(1 << 20)
	img := e.newImage(t, imagestore.SourceUpload, image.FormatQcow2, "") // checksum recorded from the bytes
	total := int64(len(data))
	cr := func(s string) imagestore.ContentRange {
		c, err := imagestore.ParseContentRange(s)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	p, err := e.store.Receive(admin(), img.ID, bytes.NewReader(data[:400_000]), cr(fmt.Sprintf("bytes 0-399999/%d", total)), "")
	if err != nil || !p.IsIncomplete() || p.Received != 400_000 {
		t.Fatalf("first chunk: %+v, %v", p, err)
	}
	if got := e.get(t, img.ID).Status; got != image.StatusDownloading {
		t.Fatalf("during the upload the image is %s, want DOWNLOADING", got)
	}
	uid := p.UploadID
	if uid == "" {
		t.Fatal("the first chunk's answer names no upload session")
	}
	// Another client may neither continue this upload nor start over while it runs.
	if _, err := e.store.Receive(admin(), img.ID, bytes.NewReader(data[400_000:]), cr(fmt.Sprintf("bytes 400000-%d/%d", total-1, total)), ""); apierrCode(err) != apierr.CodeValidation {
		t.Fatalf("a later chunk without the upload id: err = %v, want VALIDATION", err)
	}
	if _, err := e.store.Receive(admin(), img.ID, bytes.NewReader(data), imagestore.ContentRange{}, ""); apierrCode(err) != apierr.CodeConflict {
		t.Fatalf("a second upload while one runs: err = %v, want CONFLICT", err)
	}
	if _, err := e.store.Receive(admin(), img.ID, http.NoBody, cr(fmt.Sprintf("bytes */%d", total)), "someone-else"); apierrCode(err) != apierr.CodeConflict {
		t.Fatalf("a status query with another upload id: err = %v, want CONFLICT", err)
	}
	// The connection breaks: the client asks how much arrived and resumes from there.
	if _, err := e.store.Receive(admin(), img.ID, bytes.NewReader(data[500_000:]), cr(fmt.Sprintf("bytes 500000-%d/%d", total-1, total)), uid); apierrCode(err) != apierr.CodeConflict {
		t.Fatalf("a chunk past the received bytes: err = %v, want CONFLICT", err)
	}
	p, err = e.store.Receive(admin(), img.ID, http.NoBody, cr(fmt.Sprintf("bytes */%d", total)), uid)
	if err != nil || p.Received != 400_000 {
		t.Fatalf("status query: %+v, %v; want 400000 received", p, err)
	}
	p, err = e.store.Receive(admin(), img.ID, bytes.NewReader(data[p.Received:]), cr(fmt.Sprintf("bytes %d-%d/%d", p.Received, total-1, total)), uid)
	if err != nil || p.IsIncomplete() {
		t.Fatalf("last chunk: %+v, %v", p, err)
	}
	if p.Image.Status != image.StatusActive || p.Image.Checksum != sum(data) || p.Image.SizeBytes != total {
		t.Fatalf("after the upload: status %s checksum %s size %d", p.Image.Status, p.Image.Checksum, p.Image.SizeBytes)
	}
	if !bytes.Equal(e.stored(t, img.ID), data) {
		t.Fatal("stored bytes differ from the upload")
	}
}

func TestUploadRefused(t *testing.T) {
	e := newEnv(t, 100_000)
	data := qcow2Bytes(50_000)

	t.Run("checksum mismatch", func(t *testing.T) {
		img := e.newImage(t, imagestore.SourceUpload, image.FormatQcow2, sum([]byte("other bytes")))
		p, err := e.store.Receive(admin(), img.ID, bytes.NewReader(data), imagestore.ContentRange{}, "")
		if err != nil {
			t.Fatal(err)
		}
		if p.Image.Status != image.StatusError || !strings.Contains(p.Image.StatusReason, "checksum mismatch") {
			t.Fatalf("status %s (%q), want ERROR checksum mismatch", p.Image.Status, p.Image.StatusReason)
		}
		if _, _, err := e.store.Open(e.ctx, img.ID); err == nil {
			t.Fatal("the bytes of an ERROR image can be read")
		}
		// A corrected upload after ERROR is accepted.
		if _, err := e.client.Image.UpdateOneID(img.ID).SetChecksum(sum(data)).Save(e.ctx); err != nil {
			t.Fatal(err)
		}
		p, err = e.store.Receive(admin(), img.ID, bytes.NewReader(data), imagestore.ContentRange{}, "")
		if err != nil || p.Image.Status != image.StatusActive {
			t.Fatalf("upload after fixing the checksum: %+v, %v", p.Image, err)
		}
	})
	t.Run("not qcow2", func(t *testing.T) {
		img := e.newImage(t, imagestore.SourceUpload, image.FormatQcow2, "")
		p, err := e.store.Receive(admin(), img.ID, strings.NewReader("plain text, no qcow2 header"), imagestore.ContentRange{}, "")
		if err != nil || p.Image.Status != image.StatusError || !strings.Contains(p.Image.StatusReason, "not a qcow2") {
			t.Fatalf("%+v, %v; want ERROR not a qcow2 image", p.Image, err)
		}
	})
	t.Run("qcow2 declared raw", func(t *testing.T) {
		img := e.newImage(t, imagestore.SourceUpload, image.FormatRaw, "")
		p, err := e.store.Receive(admin(), img.ID, bytes.NewReader(data), imagestore.ContentRange{}, "")
		if err != nil || p.Image.Status != image.StatusError {
			t.Fatalf("%+v, %v; want ERROR", p.Image, err)
		}
	})
	t.Run("too large", func(t *testing.T) {
		img := e.newImage(t, imagestore.SourceUpload, image.FormatQcow2, "")
		if _, err := e.store.Receive(admin(), img.ID, bytes.NewReader(qcow2Bytes(10)), imagestore.ContentRange{Set: true, Start: 0, End: 9, Total: 200_000}, ""); apierrCode(err) != apierr.CodeValidation {
			t.Fatalf("Content-Range over the limit: err = %v, want VALIDATION", err)
		}
		p, err := e.store.Receive(admin(), img.ID, bytes.NewReader(qcow2Bytes(150_000)), imagestore.ContentRange{}, "")
		if err != nil || p.Image.Status != image.StatusError || !strings.Contains(p.Image.StatusReason, "limit") {
			t.Fatalf("%+v, %v; want ERROR over the limit", p.Image, err)
		}
	})
	t.Run("not an upload image", func(t *testing.T) {
		img := e.newImage(t, "https://images.example.com/x.qcow2", image.FormatQcow2, "")
		if _, err := e.store.Receive(admin(), img.ID, bytes.NewReader(data), imagestore.ContentRange{}, ""); apierrCode(err) != apierr.CodeValidation {
			t.Fatalf("err = %v, want VALIDATION", err)
		}
	})
	t.Run("viewer may not write", func(t *testing.T) {
		img := e.newImage(t, imagestore.SourceUpload, image.FormatQcow2, "")
		reader := authz.NewContext(context.Background(), &authz.Viewer{Name: "reader", UserID: 2,
			Bindings: []authz.Binding{{Role: authz.RoleViewer, Domain: authz.Platform}}})
		_, err := e.store.Receive(reader, img.ID, bytes.NewReader(data), imagestore.ContentRange{}, "")
		if apierrCode(err) != apierr.CodeForbidden {
			t.Fatalf("err = %v, want FORBIDDEN", err)
		}
		if got := e.get(t, img.ID).Status; got != image.StatusPending {
			t.Fatalf("a refused upload left the image %s", got)
		}
	})
}

// source is an httptest server serving data with Range support; the first failFirst
// responses are cut after half the bytes.
type source struct {
	srv       *httptest.Server
	failFirst int32
	requests  atomic.Int32
	ranges    atomic.Int32 // requests that carried a Range header
}

func newSource(t *testing.T, data []byte, failFirst int32) *source {
	s := &source{failFirst: failFirst}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := s.requests.Add(1)
		if r.Header.Get("Range") != "" {
			s.ranges.Add(1)
		}
		if n <= s.failFirst {
			w.Header().Set("Content-Length", fmt.Sprint(len(data)))
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write(data[:len(data)/2])
			panic(http.ErrAbortHandler) // the connection breaks mid-transfer
		}
		http.ServeContent(w, r, "", time.Unix(0, 0), bytes.NewReader(data))
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func TestFetchFromURL(t *testing.T) {
	e := newEnv(t, 0)
	data := qcow2Bytes(2 << 20)

	t.Run("resumes and verifies", func(t *testing.T) {
		src := newSource(t, data, 1)
		img := e.newImage(t, src.srv.URL+"/cloud.qcow2", image.FormatQcow2, sum(data))
		err := e.store.Fetch(e.ctx, img.ID, false)
		if err == nil {
			t.Fatal("the first attempt was cut but succeeded")
		}
		if got := e.get(t, img.ID); got.Status != image.StatusDownloading {
			t.Fatalf("after a failed attempt: %s, want DOWNLOADING (retried)", got.Status)
		}
		if err := e.store.Fetch(e.ctx, img.ID, false); err != nil {
			t.Fatalf("second attempt: %v", err)
		}
		got := e.get(t, img.ID)
		if got.Status != image.StatusActive || got.SizeBytes != int64(len(data)) {
			t.Fatalf("after the fetch: %s %q size %d", got.Status, got.StatusReason, got.SizeBytes)
		}
		if src.ranges.Load() != 1 {
			t.Fatalf("%d Range requests, want the second attempt to resume with one", src.ranges.Load())
		}
		if !bytes.Equal(e.stored(t, img.ID), data) {
			t.Fatal("stored bytes differ from the source")
		}
		// Running the task again changes nothing and fetches nothing.
		before := src.requests.Load()
		if err := e.store.Fetch(e.ctx, img.ID, false); err != nil || src.requests.Load() != before {
			t.Fatalf("fetch of an ACTIVE image: %v, %d new requests", err, src.requests.Load()-before)
		}
	})
	t.Run("checksum mismatch", func(t *testing.T) {
		src := newSource(t, data, 0)
		img := e.newImage(t, src.srv.URL+"/cloud.qcow2", image.FormatQcow2, sum([]byte("something else")))
		err := e.store.ProcessTask(e.ctx, fetchTask(t, img.ID))
		if !errors.Is(err, asynq.SkipRetry) {
			t.Fatalf("task error %v: want no retry for a checksum mismatch", err)
		}
		got := e.get(t, img.ID)
		if got.Status != image.StatusError || !strings.Contains(got.StatusReason, "checksum mismatch") {
			t.Fatalf("%s %q, want ERROR checksum mismatch", got.Status, got.StatusReason)
		}
	})
	t.Run("not found", func(t *testing.T) {
		src := newSource(t, data, 0)
		img := e.newImage(t, src.srv.URL+"/missing", image.FormatQcow2, "")
		src.srv.Config.Handler = http.NotFoundHandler()
		if err := e.store.ProcessTask(e.ctx, fetchTask(t, img.ID)); !errors.Is(err, asynq.SkipRetry) {
			t.Fatalf("task error %v: want no retry for a 404", err)
		}
		if got := e.get(t, img.ID); got.Status != image.StatusError || !strings.Contains(got.StatusReason, "404") {
			t.Fatalf("%s %q, want ERROR 404", got.Status, got.StatusReason)
		}
	})
	t.Run("last attempt", func(t *testing.T) {
		src := newSource(t, data, 100)
		img := e.newImage(t, src.srv.URL+"/flaky", image.FormatQcow2, "")
		if err := e.store.Fetch(e.ctx, img.ID, true); err == nil {
			t.Fatal("a cut transfer succeeded")
		}
		if got := e.get(t, img.ID); got.Status != image.StatusError || got.StatusReason == "" {
			t.Fatalf("after the last attempt: %s %q, want ERROR with the reason", got.Status, got.StatusReason)
		}
	})
}

func TestCreatedEnqueuesFetch(t *testing.T) {
	e := newEnv(t, 0)
	img := e.newImage(t, "https://images.example.com/x.qcow2", image.FormatQcow2, "")
	up := e.newImage(t, imagestore.SourceUpload, image.FormatQcow2, "")
	for _, i := range []*ent.Image{img, up} {
		if err := imagestore.Created(e.ctx, e.client, i); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := e.client.OutboxTask.Query().Where(outboxtask.Kind(imagestore.TypeFetch)).All(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	var forImg, forUp int
	for _, r := range rows {
		var p struct{ Image int }
		_ = json.Unmarshal(r.Payload, &p)
		switch p.Image {
		case img.ID:
			forImg++
		case up.ID:
			forUp++
		}
	}
	if forImg != 1 || forUp != 0 {
		t.Fatalf("fetch tasks: %d for the URL image, %d for the upload image; want 1 and 0", forImg, forUp)
	}
}

func TestAdopt(t *testing.T) {
	e := newEnv(t, 0)
	dir := t.TempDir()
	data := qcow2Bytes(10_000)
	path := dir + "/old.qcow2"
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	mk := func(source string) int {
		img := e.newImage(t, source, image.FormatQcow2, "")
		return e.client.Image.UpdateOneID(img.ID).SetStatus(image.StatusActive).SaveX(e.ctx).ID
	}
	readable, missing, url := mk("file://"+path), mk("file:///nowhere/x.qcow2"), mk("https://images.example.com/y.qcow2")
	if _, err := e.store.Adopt(e.ctx); err != nil {
		t.Fatal(err)
	}
	if got := e.get(t, readable); got.Status != image.StatusActive || got.Checksum != sum(data) {
		t.Fatalf("readable file: %s %s", got.Status, got.StatusReason)
	}
	if got := e.get(t, missing); got.Status != image.StatusError {
		t.Fatalf("missing file: %s, want ERROR", got.Status)
	}
	if got := e.get(t, url); got.Status != image.StatusPending {
		t.Fatalf("URL image: %s, want PENDING (fetch enqueued)", got.Status)
	}
	// Once adopted, nothing changes on the next start.
	if n, err := e.store.Adopt(e.ctx); err != nil || n != 0 {
		t.Fatalf("second Adopt changed %d images (%v)", n, err)
	}
}

func fetchTask(t *testing.T, id int) *asynq.Task {
	b, err := json.Marshal(map[string]int{"image": id})
	if err != nil {
		t.Fatal(err)
	}
	return asynq.NewTask(imagestore.TypeFetch, b)
}

func apierrCode(err error) apierr.Code {
	if e := dberr.Classify(err); e != nil {
		return e.Code
	}
	return ""
}

// TestUploadSessionLapses: an upload whose client went quiet holds the image for UploadIdle
// only; then another upload starts over, and the first one can neither continue nor
// complete the image, so the bytes are all the second's.
func TestUploadSessionLapses(t *testing.T) {
	e := newEnv(t, 0)
	now := time.Now()
	s, err := imagestore.New(e.client, imagestore.Config{Dir: t.TempDir(), UploadIdle: time.Minute, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	img := e.newImage(t, imagestore.SourceUpload, image.FormatRaw, "")
	a, b := bytes.Repeat([]byte{'a'}, 1000), bytes.Repeat([]byte{'b'}, 1000)
	cr := func(start, end int) imagestore.ContentRange {
		return imagestore.ContentRange{Set: true, Start: int64(start), End: int64(end - 1), Total: 1000}
	}
	pa, err := s.Receive(admin(), img.ID, bytes.NewReader(a[:500]), cr(0, 500), "")
	if err != nil || pa.UploadID == "" {
		t.Fatalf("A's first chunk: %+v, %v", pa, err)
	}
	now = now.Add(59 * time.Second)
	if _, err := s.Receive(admin(), img.ID, bytes.NewReader(b), imagestore.ContentRange{}, ""); apierrCode(err) != apierr.CodeConflict {
		t.Fatalf("B before A's session lapsed: err = %v, want CONFLICT", err)
	}
	now = now.Add(2 * time.Second) // 61 s without a byte from A
	pb, err := s.Receive(admin(), img.ID, bytes.NewReader(b[:500]), cr(0, 500), "")
	if err != nil || pb.UploadID == "" || pb.UploadID == pa.UploadID {
		t.Fatalf("B after A's session lapsed: %+v, %v", pb, err)
	}
	if _, err := s.Receive(admin(), img.ID, bytes.NewReader(a[500:]), cr(500, 1000), pa.UploadID); apierrCode(err) != apierr.CodeConflict {
		t.Fatalf("A's last chunk after its session lapsed: err = %v, want CONFLICT", err)
	}
	done, err := s.Receive(admin(), img.ID, bytes.NewReader(b[500:]), cr(500, 1000), pb.UploadID)
	if err != nil || done.IsIncomplete() || done.Image.Checksum != sum(b) {
		t.Fatalf("B's last chunk: %+v, %v; want ACTIVE with B's checksum", done, err)
	}
}

// TestUploadOfImageFromVMRefused: the bytes of an image made from a VM (source vm:<id>) come
// from the agent of the node it is assigned to only: a platform administrator and the agent
// of another node are FORBIDDEN, and the image stays PENDING. (That agent's upload is
// nodeagent's TestRestoredBackupBootsARealGuest.)
func TestUploadOfImageFromVMRefused(t *testing.T) {
	e := newEnv(t, 100_000)
	data := qcow2Bytes(50_000)
	img := e.newImage(t, imagestore.SourceVMPrefix+"1", image.FormatQcow2, "")
	otherAgent := authz.NewContext(context.Background(), &authz.Viewer{Name: "agent",
		Bindings: []authz.Binding{{Role: authz.RoleAgent, Domain: authz.NodeDomain(1 << 40)}}})
	for name, ctx := range map[string]context.Context{"an administrator": admin(), "another node's agent": otherAgent} {
		if _, err := e.store.Receive(ctx, img.ID, bytes.NewReader(data), imagestore.ContentRange{}, ""); apierrCode(err) != apierr.CodeForbidden {
			t.Errorf("upload by %s: %v; want FORBIDDEN", name, err)
		}
	}
	if got := e.get(t, img.ID).Status; got != image.StatusPending {
		t.Fatalf("image after refused uploads: %s; want PENDING", got)
	}
}
