package imagestore

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/assignment"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/image"
)

// ContentRange is a parsed Content-Range request header: "bytes S-E/T" (a chunk),
// "bytes */T" (a status query: how much has arrived), or none (the whole image in one body).
type ContentRange struct {
	Set        bool  // the header was present
	Start, End int64 // the chunk's first and last byte; End < Start for a status query
	Total      int64 // the image's size
}

// ParseContentRange reads a Content-Range header ("" gives the zero ContentRange).
func ParseContentRange(h string) (ContentRange, error) {
	if h == "" {
		return ContentRange{}, nil
	}
	bad := apierr.Validation("Content-Range", "want bytes <first>-<last>/<total> or bytes */<total>, got %q", h)
	spec, ok := strings.CutPrefix(strings.TrimSpace(h), "bytes ")
	if !ok {
		return ContentRange{}, bad
	}
	rng, tot, ok := strings.Cut(spec, "/")
	total, err := strconv.ParseInt(tot, 10, 64)
	if !ok || err != nil || total <= 0 {
		return ContentRange{}, bad
	}
	cr := ContentRange{Set: true, Total: total, Start: 0, End: -1}
	if rng == "*" {
		return cr, nil
	}
	a, b, ok := strings.Cut(rng, "-")
	start, err1 := strconv.ParseInt(a, 10, 64)
	end, err2 := strconv.ParseInt(b, 10, 64)
	if !ok || err1 != nil || err2 != nil || start < 0 || end < start || end >= total {
		return ContentRange{}, bad
	}
	cr.Start, cr.End = start, end
	return cr, nil
}

// Progress is what Receive answers: the bytes received so far of the total, the upload
// session they belong to, and the image once they are all there (ACTIVE, or ERROR with the
// reason).
type Progress struct {
	Received int64
	Total    int64
	// UploadID names the upload session: a client sends it (Upload-ID header) with every
	// later chunk and status query of the same upload.
	UploadID string
	Image    *ent.Image // set when the upload is complete
}

// Receive takes (part of) the bytes of image id from body, for the viewer of ctx, who must
// be allowed to change the image: PUT /images/{id}/data. Without a Content-Range, body is
// the whole image. With one, body is the chunk cr names, which must start where the bytes
// received so far end (resuming after an interruption: ask with "bytes */T", then send the
// rest); the chunk that completes the total verifies the image. The image's source must be
// "upload"; an ACTIVE image takes no more bytes.
//
// One upload at a time per image, whichever server receives it: a body that starts at byte 0
// starts an upload session (a row update that the database admits for one client) and its
// answer names it (Progress.UploadID); later chunks and status queries carry that id
// (uploadID). While the session's client keeps sending (at least once per
// Config.UploadIdle) another client's upload is a CONFLICT; once it lapses, anyone may start
// over. Each session gathers its bytes in a file of its own, and only the session that
// still holds the image may complete it, so two clients' bytes never mix. No lock is held
// while body is read: the session is renewed as bytes arrive.
func (s *Store) Receive(ctx context.Context, id int, body io.Reader, cr ContentRange, uploadID string) (Progress, error) {
	img, err := s.client.Image.Get(ctx, id)
	if err != nil {
		return Progress{}, err
	}
	fromVM := strings.HasPrefix(img.Source, SourceVMPrefix)
	if fromVM {
		if ctx, err = s.imageAgent(ctx, id); err != nil {
			return Progress{}, err
		}
	} else if v := authz.FromContext(ctx); !v.Can("Image", authz.ActWrite) {
		return Progress{}, &apierr.Error{Code: apierr.CodeForbidden, Message: "only platform administrators upload images"}
	}
	if img.Source != SourceUpload && !fromVM {
		return Progress{}, apierr.Validation("source", "image %d is fetched from its source URL; create an image with source %q to upload", id, SourceUpload)
	}
	switch img.Status {
	case image.StatusActive, image.StatusDeprecated:
		return Progress{}, apierr.Conflict("image %d is %s: its bytes have arrived already; create a new image for other bytes", id, img.Status)
	}
	if cr.Set && cr.Total > s.cfg.MaxBytes {
		return Progress{}, apierr.Validation("Content-Range", "%d bytes: larger than the limit of %d", cr.Total, s.cfg.MaxBytes)
	}
	mine := uploadID != "" && img.UploadID != nil && *img.UploadID == uploadID
	if uploadID != "" && !mine {
		return Progress{}, errLost(id)
	}
	if cr.Set && cr.End < cr.Start { // status query
		switch {
		case mine:
			have := fileSize(s.partPath(id, uploadID))
			if err := s.renew(ctx, id, uploadID); err != nil {
				return Progress{}, err
			}
			return Progress{Received: have, Total: cr.Total, UploadID: uploadID}, nil
		case sessionLive(img, s.cfg.Now()):
			return Progress{}, s.errBusy(id)
		}
		return Progress{Total: cr.Total}, nil // nothing of any client's to resume: start at 0
	}
	restart := !cr.Set || cr.Start == 0
	if !restart && !mine {
		return Progress{}, apierr.Validation("Upload-ID", "a chunk after the first needs the Upload-ID header of its upload "+
			"(from the answer to the first chunk); without it, start over from byte 0")
	}
	sid := uploadID
	if restart {
		sid = rand.Text()
		if img, err = s.record(ctx, id, change{status: image.StatusDownloading, reason: "receiving the upload",
			claim: sid, owner: uploadID}, "uploadImage", false); err != nil {
			return Progress{}, err
		}
		s.removeParts(id, "")
	} else if err := s.renew(ctx, id, sid); err != nil {
		return Progress{}, err
	}
	part := s.partPath(id, sid)
	have := int64(0)
	flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if !restart {
		if have = fileSize(part); cr.Start != have {
			return Progress{Received: have, Total: cr.Total, UploadID: sid},
				apierr.Conflict("chunk starts at byte %d, but %d bytes have arrived: send from byte %d", cr.Start, have, have)
		}
		flags = os.O_WRONLY | os.O_CREATE | os.O_APPEND
	}
	f, err := os.OpenFile(part, flags, 0o640)
	if err != nil {
		return Progress{}, fmt.Errorf("receive image %d: %w", id, err)
	}
	limit := s.cfg.MaxBytes - have + 1
	if cr.Set {
		limit = cr.End - cr.Start + 1
	}
	lr := &leaseReader{r: io.LimitReader(body, limit), every: s.cfg.UploadIdle / 3, last: s.cfg.Now(), now: s.cfg.Now,
		renew: func() error { return s.renew(ctx, id, sid) }}
	n, err := io.Copy(f, lr)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	have += n
	if err != nil {
		// The bytes that arrived stay: the client resumes from Received.
		return Progress{Received: have, Total: cr.Total, UploadID: sid}, fmt.Errorf("receive image %d: %w", id, err)
	}
	if cr.Set && n != cr.End-cr.Start+1 {
		return Progress{Received: have, Total: cr.Total, UploadID: sid}, apierr.Validation("Content-Range",
			"the chunk %d-%d has %d bytes, the body %d: send from byte %d", cr.Start, cr.End, cr.End-cr.Start+1, n, have)
	}
	if cr.Set && have < cr.Total {
		if err := s.renew(ctx, id, sid); err != nil {
			return Progress{}, err
		}
		return Progress{Received: have, Total: cr.Total, UploadID: sid}, nil
	}
	ch, err := s.verify(img, part)
	if errors.Is(err, os.ErrNotExist) {
		return Progress{}, errLost(id) // a new upload, after this one lapsed, removed its bytes
	}
	if err != nil {
		return Progress{}, err
	}
	if have > s.cfg.MaxBytes {
		_ = os.Remove(part)
		ch = change{status: image.StatusError, reason: fmt.Sprintf("more than the limit of %d bytes", s.cfg.MaxBytes)}
	}
	ch.owner = sid
	done, err := s.record(ctx, id, ch, "uploadImage", false)
	if err != nil {
		_ = os.Remove(part)
		return Progress{}, err
	}
	return Progress{Received: have, Total: have, Image: done}, nil
}

// imageAgent checks that the viewer of ctx is the agent of the node that image id (made from
// a VM) is assigned to, the only one who sends its bytes, and returns ctx acting for that
// agent as the system (an agent may not write images otherwise): its audit rows name it.
func (s *Store) imageAgent(ctx context.Context, id int) (context.Context, error) {
	nodes := authz.FromContext(ctx).Domains("node", "Assignment", authz.ActWrite)
	forbidden := apierr.Forbidden("image %d is made from a VM's disk: only the agent of that VM's node uploads it", id)
	if len(nodes) == 0 {
		return nil, forbidden
	}
	sys := authz.SystemContext(ctx, "imagestore")
	node, err := s.client.Assignment.Query().Where(assignment.HasImageWith(image.ID(id)),
		assignment.HasNodeWith(computenode.IDIn(nodes...))).QueryNode().FirstID(sys)
	if ent.IsNotFound(err) {
		return nil, forbidden
	}
	if err != nil {
		return nil, err
	}
	return authz.SystemContext(ctx, "agent of node "+strconv.Itoa(node)), nil
}

// renew extends upload session sid of image id by Config.UploadIdle from now: CONFLICT
// when it no longer holds the image. One conditional update, no transaction.
func (s *Store) renew(ctx context.Context, id int, sid string) error {
	n, err := s.client.Image.Update().Where(image.ID(id), image.UploadID(sid)).
		SetUploadExpiresAt(s.cfg.Now().Add(s.cfg.UploadIdle)).Save(ctx)
	if err != nil {
		return fmt.Errorf("renew the upload of image %d: %w", id, err)
	}
	if n == 0 {
		return errLost(id)
	}
	return nil
}

// leaseReader reads r and calls renew at most every `every` while bytes arrive, so that an
// upload session lasts as long as its client sends; renew's error ends the read.
type leaseReader struct {
	r     io.Reader
	every time.Duration
	last  time.Time
	now   func() time.Time
	renew func() error
}

func (l *leaseReader) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	if n > 0 {
		if t := l.now(); t.Sub(l.last) >= l.every {
			l.last = t
			if rerr := l.renew(); rerr != nil {
				return n, rerr
			}
		}
	}
	return n, err
}

// fileSize is the size of the file at path, 0 when there is none.
func fileSize(path string) int64 {
	if st, err := os.Stat(path); err == nil {
		return st.Size()
	}
	return 0
}

// IsIncomplete reports whether p is a partial upload (more chunks to come).
func (p Progress) IsIncomplete() bool { return p.Image == nil }
