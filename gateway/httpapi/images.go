package httpapi

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strconv"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/controllers/imagestore"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/store/dberr"
)

// imageID reads the {id} of an image path, answering 400 itself when it is not one.
func imageID(w http.ResponseWriter, r *http.Request) (int, bool) {
	id, err := strconv.Atoi(r.PathValue("id"))
	if err != nil || id <= 0 {
		writeAPIError(w, http.StatusBadRequest, apierr.Validation("id", "must be an image id, got %q", r.PathValue("id")))
		return 0, false
	}
	return id, true
}

// signedIn answers 401 and returns false when the request carries no valid token.
func signedIn(w http.ResponseWriter, r *http.Request) bool {
	if authz.FromContext(r.Context()) != nil {
		return true
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="virtflow"`)
	writeAPIError(w, http.StatusUnauthorized, apierr.Unauthenticated("sign in: send Authorization: Bearer <token>"))
	return false
}

// imageError answers err (from imagestore) with its API error and status.
func imageError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	e := dberr.Classify(err)
	if e == nil || e.Code == apierr.CodeInternal {
		log.ErrorContext(r.Context(), "image data", "path", r.URL.Path, "request_id", RequestID(r.Context()), "err", err)
		e = &apierr.Error{Code: apierr.CodeInternal, Message: "internal error (request " + RequestID(r.Context()) + ")"}
	}
	writeAPIError(w, statusOf(e.Code), e)
}

// imageData serves GET (and HEAD) /images/{id}/data: the stored bytes of an ACTIVE or
// DEPRECATED image to any viewer who may read the image (node agents fetch images here),
// with Range support (http.ServeContent) so an interrupted transfer resumes, and the
// image's sha256 as its ETag.
func imageData(store *imagestore.Store, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, ok := imageID(w, r)
		if !ok || !signedIn(w, r) {
			return
		}
		f, img, err := store.Open(r.Context(), id)
		if err != nil {
			imageError(w, r, log, err)
			return
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			imageError(w, r, log, err)
			return
		}
		h := w.Header()
		h.Set("Content-Type", "application/octet-stream")
		h.Set("ETag", strconv.Quote(img.Checksum))
		h.Set("Cache-Control", "private, no-cache")
		h.Set("X-Checksum", img.Checksum)
		http.ServeContent(w, r, "", st.ModTime(), f)
	})
}

// UploadIDHeader names an upload session of PUT /images/{id}/data: answered with every
// incomplete upload, sent back with its later chunks and status queries.
const UploadIDHeader = "Upload-ID"

// imageUpload serves PUT /images/{id}/data: an image's bytes, whole or in chunks with
// Content-Range (imagestore.Store.Receive). A complete upload answers 200 with the image's
// status; an incomplete one 308 with Range: bytes=0-<last byte received> (Google's
// resumable upload convention), which "Content-Range: bytes */<total>" also asks for, and
// the Upload-ID the later chunks carry. Another client's upload of the image while this one
// runs is 409; a body that stalls for the store's UploadIdle is cut (408).
func imageUpload(store *imagestore.Store, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, ok := imageID(w, r)
		if !ok || !signedIn(w, r) {
			return
		}
		cr, err := imagestore.ParseContentRange(r.Header.Get("Content-Range"))
		if err != nil {
			imageError(w, r, log, err)
			return
		}
		// A large image takes long: cut the body when it stalls, not after a fixed time.
		PaceBody(r, store.UploadIdle())
		body := http.MaxBytesReader(w, r.Body, store.MaxBytes()+1)
		p, err := store.Receive(r.Context(), id, body, cr, r.Header.Get(UploadIDHeader))
		if p.Received > 0 {
			w.Header().Set("Range", fmt.Sprintf("bytes=0-%d", p.Received-1))
		}
		if p.UploadID != "" && p.IsIncomplete() {
			w.Header().Set(UploadIDHeader, p.UploadID)
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			// The client stalled: its session lapses after the same time without bytes.
			w.Header().Set("Connection", "close")
			writeAPIError(w, http.StatusRequestTimeout, apierr.Validation("body",
				"no bytes for %s: the upload was cut; resume it with its Upload-ID", store.UploadIdle()))
			return
		}
		if err != nil {
			imageError(w, r, log, err)
			return
		}
		if p.IsIncomplete() {
			w.WriteHeader(http.StatusPermanentRedirect)
			return
		}
		img := p.Image
		writeJSON(w, http.StatusOK, map[string]any{
			"id": img.ID, "status": img.Status, "statusReason": img.StatusReason,
			"sizeBytes": img.SizeBytes, "checksum": img.Checksum,
		})
	})
}
