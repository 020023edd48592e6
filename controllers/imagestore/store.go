package imagestore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/domain/audit"
	"github.com/virtflow/virtflow/domain/egress"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/image"
	"github.com/virtflow/virtflow/store/dbtx"
	"github.com/virtflow/virtflow/store/rowlock"
	"github.com/virtflow/virtflow/store/truncate"
)

// SourceUpload is the source of an image whose bytes are uploaded through the API.
const SourceUpload = "upload"

// SourceVMPrefix starts the source of an image made from a VM's root disk
// (createImageFromVirtualMachine): vm:<VM id>. Its bytes arrive like an upload's, sent by
// the agent of the node the image is assigned to, and by no one else (see Receive).
const SourceVMPrefix = "vm:"

// DefaultMaxBytes bounds an image's size when Config.MaxBytes is zero: 64 GiB.
const DefaultMaxBytes int64 = 64 << 30

// DefaultUploadIdle is Config.UploadIdle when zero.
const DefaultUploadIdle = time.Minute

// qcow2Magic starts every qcow2 file.
var qcow2Magic = []byte{'Q', 'F', 'I', 0xfb}

// Config configures a [Store].
type Config struct {
	// Dir is where the bytes live (created if missing; required).
	Dir string
	// MaxBytes bounds an image's size, uploaded or fetched; DefaultMaxBytes when zero.
	MaxBytes int64
	// Egress is the policy URL sources are fetched under (package egress); the default
	// policy (public addresses only) when nil.
	Egress *egress.Policy
	// HTTP fetches URL sources; when nil, Egress's client without an overall timeout (the
	// task's timeout bounds a fetch). A client given here should dial under Egress too.
	HTTP *http.Client
	// Log receives the store's logs; discarded when nil.
	Log *slog.Logger
	// UploadIdle is how long an upload session outlives its client's last byte: until then
	// no other client may upload the image (CONFLICT), after it anyone may start over.
	// DefaultUploadIdle when zero.
	UploadIdle time.Duration
	// Now is the clock of upload sessions; time.Now when nil.
	Now func() time.Time
}

// Store keeps image bytes in a directory and records their arrival on the Image rows.
type Store struct {
	client *ent.Client
	cfg    Config

	mu    sync.Mutex
	locks map[int]*sync.Mutex // per image: one Import at a time in this process
}

// New returns the store of cfg.Dir, creating the directory.
func New(client *ent.Client, cfg Config) (*Store, error) {
	if cfg.Dir == "" {
		return nil, errors.New("imagestore: no directory")
	}
	if err := os.MkdirAll(cfg.Dir, 0o750); err != nil {
		return nil, fmt.Errorf("imagestore: %w", err)
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	if cfg.Egress == nil {
		cfg.Egress = egress.MustParse("")
	}
	if cfg.HTTP == nil {
		cfg.HTTP = cfg.Egress.Client(0)
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.UploadIdle <= 0 {
		cfg.UploadIdle = DefaultUploadIdle
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Store{client: client, cfg: cfg, locks: map[int]*sync.Mutex{}}, nil
}

// MaxBytes is the size limit of one image.
func (s *Store) MaxBytes() int64 { return s.cfg.MaxBytes }

// Path is where the verified bytes of image id are.
func (s *Store) Path(id int) string { return filepath.Join(s.cfg.Dir, strconv.Itoa(id)+".img") }

// UploadIdle is how long an upload session outlives its client's last byte.
func (s *Store) UploadIdle() time.Duration { return s.cfg.UploadIdle }

// partPath is where the bytes of upload session sid of image id gather until they are
// verified: one file per session, so that bytes of two clients never meet in one file.
func (s *Store) partPath(id int, sid string) string {
	return filepath.Join(s.cfg.Dir, strconv.Itoa(id)+"."+sid+".part")
}

// removeParts removes the gathered bytes of every session of image id but keep's.
func (s *Store) removeParts(id int, keep string) {
	old, _ := filepath.Glob(filepath.Join(s.cfg.Dir, strconv.Itoa(id)+".*part"))
	for _, p := range old {
		if p != keep {
			_ = os.Remove(p)
		}
	}
}

// lock serializes the Imports of image id in this process (they read local files, never a
// client); call the returned unlock.
func (s *Store) lock(id int) func() {
	s.mu.Lock()
	l, ok := s.locks[id]
	if !ok {
		l = &sync.Mutex{}
		s.locks[id] = l
	}
	s.mu.Unlock()
	l.Lock()
	return l.Unlock
}

// ValidateSource checks an image's source: an http(s) URL with a host, or SourceUpload.
// Whether the server may connect to the URL is the egress policy's (SourceHook, Fetch).
func ValidateSource(source string) error {
	if source == SourceUpload {
		return nil
	}
	u, err := url.Parse(source)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return apierr.Validation("source", "want an http(s) URL the server can fetch, or %q to upload the bytes; got %q",
			SourceUpload, truncate.String(source, 200))
	}
	return nil
}

// ValidateChecksum checks an expected checksum: empty, or sha256:<64 hex digits>.
func ValidateChecksum(sum string) error {
	if sum == "" {
		return nil
	}
	hexd, ok := strings.CutPrefix(sum, "sha256:")
	if b, err := hex.DecodeString(hexd); !ok || err != nil || len(b) != sha256.Size {
		return apierr.Validation("checksum", "want sha256:<64 hex digits>, got %q", truncate.String(sum, 100))
	}
	return nil
}

// ValidateUpdate refuses status changes that would claim what is not true: a user may
// deprecate an ACTIVE image or bring a DEPRECATED one back, nothing else.
func ValidateUpdate(current image.Status, next *image.Status) error {
	if next == nil || *next == current {
		return nil
	}
	ok := (current == image.StatusActive && *next == image.StatusDeprecated) ||
		(current == image.StatusDeprecated && *next == image.StatusActive)
	if !ok {
		return apierr.Validation("status", "an image goes from %s to %s only by its bytes arriving; set DEPRECATED on an ACTIVE image or ACTIVE on a DEPRECATED one", current, *next)
	}
	return nil
}

// Created starts an image's lifecycle in the caller's transaction (tx is its client): an
// image with a URL source gets its fetch task through the outbox.
func Created(ctx context.Context, tx *ent.Client, img *ent.Image) error {
	if img.Source == SourceUpload {
		return nil
	}
	return EnqueueFetch(ctx, tx, img.ID)
}

// change is one status change of an image.
type change struct {
	status   image.Status
	reason   string
	size     int64  // set with status ACTIVE
	checksum string // set with status ACTIVE
	format   *image.Format
	source   string // set when not empty

	// claim starts upload session claim, refused as CONFLICT while a live session other
	// than owner holds the image.
	claim string
	// owner is the upload session the change belongs to: when set (and claim is not), the
	// change is refused as CONFLICT unless that session still holds the image, and the
	// session ends with it.
	owner string
	// commit runs in the transaction once the change is allowed (moving verified bytes
	// into place); its error rolls the change back.
	commit func() error
}

// sessionLive reports whether an upload session holds img at now.
func sessionLive(img *ent.Image, now time.Time) bool {
	return img.UploadID != nil && img.UploadExpiresAt != nil && now.Before(*img.UploadExpiresAt)
}

// errBusy is the CONFLICT of an upload while another holds the image.
func (s *Store) errBusy(id int) error {
	return apierr.Conflict("image %d is being uploaded by another client: one upload at a time; "+
		"retry once it ends or after %s without bytes from it", id, s.cfg.UploadIdle)
}

// errLost is the CONFLICT of an upload whose session ended (it lapsed and another started).
func errLost(id int) error {
	return apierr.Conflict("this upload of image %d is no longer the one in progress (it lapsed, "+
		"or another replaced it): start over from byte 0 without an Upload-ID", id)
}

// record writes ch on image id and audits it, in one transaction, acting as the viewer of
// ctx (its privacy rules apply), or as the worker when system is true.
func (s *Store) record(ctx context.Context, id int, ch change, action string, system bool) (*ent.Image, error) {
	var out *ent.Image
	_, err := dbtx.Run(ctx, s.client, func(tx *ent.Client) error {
		// The row lock orders concurrent changes of one image: upload sessions are
		// claimed, checked and ended under it, never while waiting on a client.
		before, err := tx.Image.Query().Where(image.ID(id)).Modify(rowlock.ForUpdate).Only(ctx)
		if err != nil {
			return err
		}
		now := s.cfg.Now()
		u := tx.Image.UpdateOneID(id).SetStatus(ch.status).SetStatusReason(truncate.String(ch.reason, 1024))
		switch {
		case ch.claim != "" && (before.Status == image.StatusActive || before.Status == image.StatusDeprecated):
			// Checked again under the lock: an upload that completed meanwhile is final.
			return apierr.Conflict("image %d is %s: its bytes have arrived already; create a new image for other bytes", id, before.Status)
		case ch.claim != "":
			if sessionLive(before, now) && (ch.owner == "" || *before.UploadID != ch.owner) {
				return s.errBusy(id)
			}
			u.SetUploadID(ch.claim).SetUploadExpiresAt(now.Add(s.cfg.UploadIdle))
		case ch.owner != "":
			if before.UploadID == nil || *before.UploadID != ch.owner {
				return errLost(id)
			}
			u.ClearUploadID().ClearUploadExpiresAt()
		}
		if ch.status == image.StatusActive {
			u.SetSizeBytes(ch.size).SetChecksum(ch.checksum)
		}
		if ch.format != nil {
			u.SetFormat(*ch.format)
		}
		if ch.source != "" {
			u.SetSource(ch.source)
		}
		if out, err = u.Save(ctx); err != nil {
			return err
		}
		e := audit.Entry{Action: action, Subject: out, Before: before, After: out}
		if system {
			e.System = audit.Worker
		}
		if err := audit.Write(ctx, tx, e); err != nil {
			return err
		}
		if ch.commit != nil {
			// Last, still under the row lock: what fails before leaves the bytes alone.
			return ch.commit()
		}
		return nil
	})
	return out, err
}

// verify checks the gathered bytes of img (the part file, complete) and returns the change
// to record: ACTIVE, whose commit moves them into place, or ERROR with what did not match
// (the bytes are then removed).
func (s *Store) verify(img *ent.Image, part string) (change, error) {
	f, err := os.Open(part)
	if err != nil {
		return change{}, fmt.Errorf("open received bytes of image %d: %w", img.ID, err)
	}
	h := sha256.New()
	head := make([]byte, 4)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		_ = f.Close()
		return change{}, fmt.Errorf("read image %d: %w", img.ID, err)
	}
	h.Write(head[:n])
	rest, err := io.Copy(h, f)
	_ = f.Close()
	if err != nil {
		return change{}, fmt.Errorf("read image %d: %w", img.ID, err)
	}
	size := int64(n) + rest
	sum := "sha256:" + hex.EncodeToString(h.Sum(nil))
	isQcow2 := bytes.Equal(head[:n], qcow2Magic)
	fail := func(format string, args ...any) (change, error) {
		_ = os.Remove(part)
		return change{status: image.StatusError, reason: fmt.Sprintf(format, args...)}, nil
	}
	switch {
	case size == 0:
		return fail("no bytes arrived")
	case size > s.cfg.MaxBytes:
		return fail("%d bytes: larger than the limit of %d", size, s.cfg.MaxBytes)
	case img.Checksum != "" && !strings.EqualFold(img.Checksum, sum):
		return fail("checksum mismatch: expected %s, the bytes have %s", img.Checksum, sum)
	case img.Format == image.FormatQcow2 && !isQcow2:
		return fail("format QCOW2, but the bytes are not a qcow2 image")
	case img.Format != image.FormatQcow2 && isQcow2:
		// A qcow2 file read as raw would show the guest the container, and a qcow2 header
		// can name a backing file on the host: refuse rather than guess.
		return fail("format %s, but the bytes are a qcow2 image: create it with format QCOW2", img.Format)
	}
	move := func() error {
		if err := os.Rename(part, s.Path(img.ID)); err != nil {
			return fmt.Errorf("store image %d: %w", img.ID, err)
		}
		return nil
	}
	return change{status: image.StatusActive, size: size, checksum: sum, commit: move}, nil
}

// Open returns the stored bytes of image id for the viewer of ctx (its privacy rules
// decide whether it may read the image) and the image. Only ACTIVE and DEPRECATED images
// have bytes to read; others are a CONFLICT saying their status.
func (s *Store) Open(ctx context.Context, id int) (*os.File, *ent.Image, error) {
	img, err := s.client.Image.Get(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	if img.Status != image.StatusActive && img.Status != image.StatusDeprecated {
		return nil, nil, apierr.Conflict("image %d is %s: its bytes are not available", id, img.Status)
	}
	f, err := os.Open(s.Path(id))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, apierr.Conflict("image %d is %s, but its bytes are missing on this server", id, img.Status)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("open image %d: %w", id, err)
	}
	return f, img, nil
}

// system is ctx acting as the worker.
func system(ctx context.Context) context.Context { return audit.Worker.Context(ctx) }

// Import stores the bytes of r as image id's, as the worker: for images whose bytes come
// from the server itself (adopted files, the demo's blank disks). The image's source
// becomes SourceUpload and its format format.
func (s *Store) Import(ctx context.Context, id int, r io.Reader, format image.Format) (*ent.Image, error) {
	unlock := s.lock(id)
	defer unlock()
	ctx = system(ctx)
	img, err := s.client.Image.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	part := s.partPath(id, "import")
	f, err := os.Create(part)
	if err != nil {
		return nil, fmt.Errorf("import image %d: %w", id, err)
	}
	_, err = io.Copy(f, io.LimitReader(r, s.cfg.MaxBytes+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("import image %d: %w", id, err)
	}
	img.Format = format
	ch, err := s.verify(img, part)
	if err != nil {
		return nil, err
	}
	ch.format, ch.source = &format, SourceUpload
	return s.record(ctx, id, ch, "importImage", true)
}

// Adopt brings the images stored before images had a lifecycle (all ACTIVE, bytes
// nowhere) to a status that is true, once at startup: an ACTIVE image without bytes in the
// store is imported from its file:// source when the server can read that file, fetched
// again when its source is a URL (PENDING, task enqueued), waits for its upload (PENDING),
// or else is ERROR saying why. It returns how many images it changed.
func (s *Store) Adopt(ctx context.Context) (int, error) {
	ctx = system(ctx)
	imgs, err := s.client.Image.Query().Where(image.StatusEQ(image.StatusActive)).All(ctx)
	if err != nil {
		return 0, fmt.Errorf("adopt images: %w", err)
	}
	changed := 0
	for _, img := range imgs {
		if _, err := os.Stat(s.Path(img.ID)); err == nil {
			continue
		}
		var err error
		switch {
		case strings.HasPrefix(img.Source, "file://"):
			err = s.adoptFile(ctx, img)
		case img.Source == SourceUpload:
			_, err = s.record(ctx, img.ID, change{status: image.StatusPending, reason: "waiting for the upload of its bytes"}, "adoptImage", true)
		case ValidateSource(img.Source) == nil:
			_, err = dbtx.Run(ctx, s.client, func(tx *ent.Client) error {
				if err := EnqueueFetch(ctx, tx, img.ID); err != nil {
					return err
				}
				_, err := (&Store{client: tx, cfg: s.cfg}).record(ctx, img.ID,
					change{status: image.StatusPending, reason: "fetching its bytes from the source"}, "adoptImage", true)
				return err
			})
		default:
			_, err = s.record(ctx, img.ID, change{status: image.StatusError,
				reason: "source is neither an http(s) URL nor an upload: re-create the image from a URL or upload its bytes"}, "adoptImage", true)
		}
		if err != nil {
			return changed, fmt.Errorf("adopt image %d: %w", img.ID, err)
		}
		changed++
	}
	return changed, nil
}

// adoptFile imports an image's file:// source when the server can read it, else marks
// the image ERROR.
func (s *Store) adoptFile(ctx context.Context, img *ent.Image) error {
	u, err := url.Parse(img.Source)
	var f *os.File
	if err == nil {
		f, err = os.Open(u.Path)
	}
	if err != nil {
		_, err = s.record(ctx, img.ID, change{status: image.StatusError,
			reason: fmt.Sprintf("source %s is not readable by the server (%v): re-create the image from a URL or upload its bytes",
				truncate.String(img.Source, 200), err)}, "adoptImage", true)
		return err
	}
	defer f.Close()
	_, err = s.Import(ctx, img.ID, f, img.Format)
	return err
}
