package imagestore

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/virtflow/virtflow/apierr"
	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/ent"
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

// Progress is what Receive answers: the bytes received so far of the total, and the image
// once they are all there (ACTIVE, or ERROR with the reason).
type Progress struct {
	Received int64
	Total    int64
	Image    *ent.Image // set when the upload is complete
}

// Receive takes (part of) the bytes of image id from body, for the viewer of ctx, who must
// be allowed to change the image: PUT /images/{id}/data. Without a Content-Range, body is
// the whole image. With one, body is the chunk cr names, which must start where the bytes
// received so far end (resuming after an interruption: ask with "bytes */T", then send the
// rest); the chunk that completes the total verifies the image. A chunk at offset 0 starts
// over. The image's source must be "upload"; an ACTIVE image takes no more bytes.
func (s *Store) Receive(ctx context.Context, id int, body io.Reader, cr ContentRange) (Progress, error) {
	unlock := s.lock(id)
	defer unlock()
	img, err := s.client.Image.Get(ctx, id)
	if err != nil {
		return Progress{}, err
	}
	if v := authz.FromContext(ctx); !v.Can("Image", authz.ActWrite) {
		return Progress{}, &apierr.Error{Code: apierr.CodeForbidden, Message: "only platform administrators upload images"}
	}
	if img.Source != SourceUpload {
		return Progress{}, apierr.Validation("source", "image %d is fetched from its source URL; create an image with source %q to upload", id, SourceUpload)
	}
	switch img.Status {
	case image.StatusActive, image.StatusDeprecated:
		return Progress{}, apierr.Conflict("image %d is %s: its bytes have arrived already; create a new image for other bytes", id, img.Status)
	}
	part := s.partPath(id)
	have := int64(0)
	if st, err := os.Stat(part); err == nil {
		have = st.Size()
	}
	if cr.Set && cr.Total > s.cfg.MaxBytes {
		return Progress{}, apierr.Validation("Content-Range", "%d bytes: larger than the limit of %d", cr.Total, s.cfg.MaxBytes)
	}
	if cr.Set && cr.End < cr.Start { // status query
		return Progress{Received: have, Total: cr.Total}, nil
	}
	if cr.Set && cr.Start != 0 && cr.Start != have {
		return Progress{Received: have, Total: cr.Total}, apierr.Conflict("chunk starts at byte %d, but %d bytes have arrived: send from byte %d", cr.Start, have, have)
	}
	if img.Status != image.StatusDownloading || !cr.Set || cr.Start == 0 {
		if img, err = s.record(ctx, id, change{status: image.StatusDownloading, reason: "receiving the upload"}, "uploadImage", false); err != nil {
			return Progress{}, err
		}
	}
	flags := os.O_WRONLY | os.O_CREATE
	if !cr.Set || cr.Start == 0 {
		flags |= os.O_TRUNC
		have = 0
	} else {
		flags |= os.O_APPEND
	}
	f, err := os.OpenFile(part, flags, 0o640)
	if err != nil {
		return Progress{}, fmt.Errorf("receive image %d: %w", id, err)
	}
	limit := s.cfg.MaxBytes - have + 1
	if cr.Set {
		limit = cr.End - cr.Start + 1
	}
	n, err := io.Copy(f, io.LimitReader(body, limit))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	have += n
	if err != nil {
		// The bytes that arrived stay: the client resumes from Received.
		return Progress{Received: have, Total: cr.Total}, fmt.Errorf("receive image %d: %w", id, err)
	}
	if cr.Set && n != cr.End-cr.Start+1 {
		return Progress{Received: have, Total: cr.Total}, apierr.Validation("Content-Range",
			"the chunk %d-%d has %d bytes, the body %d: send from byte %d", cr.Start, cr.End, cr.End-cr.Start+1, n, have)
	}
	if cr.Set && have < cr.Total {
		return Progress{Received: have, Total: cr.Total}, nil
	}
	ch, err := s.verify(img)
	if err != nil {
		return Progress{}, err
	}
	if have > s.cfg.MaxBytes {
		ch = change{status: image.StatusError, reason: fmt.Sprintf("more than the limit of %d bytes", s.cfg.MaxBytes)}
	}
	done, err := s.record(ctx, id, ch, "uploadImage", false)
	if err != nil {
		return Progress{}, err
	}
	return Progress{Received: have, Total: have, Image: done}, nil
}

// IsIncomplete reports whether p is a partial upload (more chunks to come).
func (p Progress) IsIncomplete() bool { return p.Image == nil }
