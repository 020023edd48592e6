package imagestore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/hibiken/asynq"

	"github.com/virtflow/virtflow/controllers/outbox"
	"github.com/virtflow/virtflow/domain/egress"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/image"
)

// TypeFetch is the task that fetches an image's bytes from its source URL. It is a task
// (not a request goroutine) because a fetch is slow, talks to an outside server and must
// survive a restart: the outbox records it with the image, Asynq retries it.
const TypeFetch = "image:fetch"

// Retries and timeout of a fetch: a large image over a slow link takes long, and a source
// that is down for a while gets attempts over about an hour (RetryDelay).
const (
	FetchMaxRetry = 10
	FetchTimeout  = 2 * time.Hour
)

// fetchPayload is TypeFetch's payload.
type fetchPayload struct {
	Image int `json:"image"`
}

// EnqueueFetch records the fetch task of image id in the caller's transaction (tx).
func EnqueueFetch(ctx context.Context, tx *ent.Client, id int) error {
	b, err := json.Marshal(fetchPayload{Image: id})
	if err != nil {
		return err
	}
	return outbox.Enqueue(ctx, tx, outbox.Task{Kind: TypeFetch, Payload: b})
}

// TaskOptions returns the Asynq options of the store's task kinds, nil for other kinds.
func TaskOptions(kind string) []asynq.Option {
	if kind != TypeFetch {
		return nil
	}
	return []asynq.Option{asynq.MaxRetry(FetchMaxRetry), asynq.Timeout(FetchTimeout)}
}

// RetryDelay is the backoff between fetch attempts: 5 s, 10 s, 20 s … up to 15 minutes.
func RetryDelay(n int) time.Duration {
	return min(5*time.Second<<min(n, 8), 15*time.Minute)
}

// Register adds the store's task handlers to mux.
func (s *Store) Register(mux *asynq.ServeMux) { mux.Handle(TypeFetch, s) }

// ProcessTask runs a TypeFetch task: it fetches the image's bytes from its source,
// resuming what an earlier attempt left, verifies them and records ACTIVE or ERROR. A
// failure the source may recover from (network, 5xx, 429) is returned for Asynq to retry,
// until the last attempt, which records ERROR; one it will not (4xx, bytes that do not
// verify, an image without a URL) records ERROR at once. An image that is ACTIVE already is
// left alone, so running the task twice changes nothing.
func (s *Store) ProcessTask(ctx context.Context, t *asynq.Task) error {
	var p fetchPayload
	if err := json.Unmarshal(t.Payload(), &p); err != nil || p.Image <= 0 {
		return fmt.Errorf("decode %s payload %q: %v: %w", t.Type(), t.Payload(), err, asynq.SkipRetry)
	}
	retried, _ := asynq.GetRetryCount(ctx)
	maxRetry, ok := asynq.GetMaxRetry(ctx)
	last := !ok || retried >= maxRetry
	err := s.Fetch(ctx, p.Image, last)
	if errors.Is(err, errPermanent) {
		return fmt.Errorf("%w: %w", err, asynq.SkipRetry)
	}
	return err
}

// fetchSession names the part file of a fetch (one worker at a time fetches an image: the
// task's unique id and the store's lock).
const fetchSession = "fetch"

// errPermanent marks a fetch failure that another attempt will not fix (recorded as ERROR).
var errPermanent = errors.New("image fetch failed for good")

// Fetch fetches image id's bytes from its source URL and records the outcome; last says
// whether this is the last attempt (a passing failure is then recorded as ERROR too).
func (s *Store) Fetch(ctx context.Context, id int, last bool) error {
	unlock := s.lock(id)
	defer unlock()
	ctx = system(ctx)
	img, err := s.client.Image.Get(ctx, id)
	if ent.IsNotFound(err) {
		return fmt.Errorf("image %d is gone: %w", id, errPermanent)
	}
	if err != nil {
		return err
	}
	switch {
	case img.Status == image.StatusActive || img.Status == image.StatusDeprecated:
		return nil
	case img.Source == SourceUpload:
		return nil // uploads arrive through the API
	case ValidateSource(img.Source) != nil:
		_, err := s.record(ctx, id, change{status: image.StatusError, reason: "source is not an http(s) URL"}, "fetchImage", true)
		if err != nil {
			return err
		}
		return fmt.Errorf("image %d: source is not an http(s) URL: %w", id, errPermanent)
	case s.cfg.Egress.CheckURL(img.Source) != nil:
		// A row stored before the policy, or under a wider allow list.
		reason := "source refused by the egress policy: " + s.cfg.Egress.CheckURL(img.Source).Error()
		if _, err := s.record(ctx, id, change{status: image.StatusError, reason: reason}, "fetchImage", true); err != nil {
			return err
		}
		return fmt.Errorf("image %d: %s: %w", id, reason, errPermanent)
	}
	if img.Status != image.StatusDownloading {
		if img, err = s.record(ctx, id, change{status: image.StatusDownloading, reason: "fetching " + img.Source}, "fetchImage", true); err != nil {
			return err
		}
	}
	ferr := s.download(ctx, img)
	if ferr == nil {
		ch, err := s.verify(img, s.partPath(id, fetchSession))
		if err != nil {
			return err
		}
		if _, err := s.record(ctx, id, ch, "fetchImage", true); err != nil {
			return err
		}
		if ch.status == image.StatusError {
			return fmt.Errorf("image %d: %s: %w", id, ch.reason, errPermanent)
		}
		s.cfg.Log.Info("image fetched", "image", id, "bytes", ch.size)
		return nil
	}
	if ctx.Err() != nil {
		return ferr // cancelled or timed out: the next attempt resumes
	}
	if errors.Is(ferr, errPermanent) || last {
		_ = os.Remove(s.partPath(id, fetchSession))
		if _, err := s.record(ctx, id, change{status: image.StatusError, reason: ferr.Error()}, "fetchImage", true); err != nil {
			return err
		}
		return fmt.Errorf("%w: %w", ferr, errPermanent)
	}
	s.cfg.Log.Warn("image fetch attempt failed; retrying", "image", id, "err", ferr)
	return ferr
}

// download appends the source's bytes to the image's .part file, asking for the rest only
// when an earlier attempt left some (a server that ignores Range sends everything again).
func (s *Store) download(ctx context.Context, img *ent.Image) error {
	part := s.partPath(img.ID, fetchSession)
	have := int64(0)
	if st, err := os.Stat(part); err == nil {
		have = st.Size()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, img.Source, nil)
	if err != nil {
		return fmt.Errorf("fetch %s: %v: %w", img.Source, err, errPermanent)
	}
	if have > 0 {
		req.Header.Set("Range", "bytes="+strconv.FormatInt(have, 10)+"-")
	}
	resp, err := s.cfg.HTTP.Do(req)
	if errors.Is(err, egress.ErrDenied) {
		// The name resolved (or redirected) to an address the policy denies: another
		// attempt would be refused too.
		return fmt.Errorf("fetch %s: %w: %w", img.Source, err, errPermanent)
	}
	if err != nil {
		return fmt.Errorf("fetch %s: %w", img.Source, err)
	}
	defer resp.Body.Close()
	flags := os.O_WRONLY | os.O_CREATE
	switch {
	case resp.StatusCode == http.StatusPartialContent && have > 0:
		var start int64 = -1
		_, _ = fmt.Sscanf(resp.Header.Get("Content-Range"), "bytes %d-", &start)
		if start != have {
			return fmt.Errorf("fetch %s: asked for bytes from %d, got Content-Range %q", img.Source, have, resp.Header.Get("Content-Range"))
		}
		flags |= os.O_APPEND
	case resp.StatusCode == http.StatusRequestedRangeNotSatisfiable && have > 0:
		return nil // everything arrived before; verify decides
	case resp.StatusCode == http.StatusOK:
		flags |= os.O_TRUNC
		have = 0
	case resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusRequestTimeout:
		return fmt.Errorf("fetch %s: %s", img.Source, resp.Status)
	default:
		return fmt.Errorf("fetch %s: %s: %w", img.Source, resp.Status, errPermanent)
	}
	if resp.ContentLength > 0 && have+resp.ContentLength > s.cfg.MaxBytes {
		return fmt.Errorf("fetch %s: %d bytes: larger than the limit of %d: %w", img.Source, have+resp.ContentLength, s.cfg.MaxBytes, errPermanent)
	}
	f, err := os.OpenFile(part, flags, 0o640)
	if err != nil {
		return fmt.Errorf("fetch image %d: %w", img.ID, err)
	}
	n, err := io.Copy(f, io.LimitReader(resp.Body, s.cfg.MaxBytes-have+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("fetch %s: after %d bytes: %w", img.Source, have+n, err)
	}
	if have+n > s.cfg.MaxBytes {
		return fmt.Errorf("fetch %s: more than the limit of %d bytes: %w", img.Source, s.cfg.MaxBytes, errPermanent)
	}
	if resp.ContentLength >= 0 && n != resp.ContentLength {
		return fmt.Errorf("fetch %s: %d of %d bytes arrived", img.Source, n, resp.ContentLength)
	}
	return nil
}
