package nodeagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"

	"github.com/virtflow/virtflow/agent/hypervisor"
)

// Images made from a VM (createImageFromVirtualMachine; controllers/provision/vmimage.go on
// the server). The image's source is vm:<id>; its assignment names the node of that VM,
// whose agent copies the stopped VM's root disk into pool volume vf-image-<image id> (a
// standalone qcow2: Storage.CopyVolume flattens the backing chain), uploads that file as
// the image's bytes (PUT /images/{id}/data in chunks, as the agent of the node the image is
// assigned to), deletes the copy and reports APPLIED. An agent that dies meanwhile finds the
// assignment not APPLIED at its next resync and starts over; an upload of the image that a
// dead agent began holds the image until it lapses (the store's idle time), which the agent
// reports as waiting and retries at its next resync.

// sourceVMPrefix starts the source of an image made from a VM: vm:<id>.
const sourceVMPrefix = "vm:"

// imageUploadChunk is the size of one PUT of an image's upload: each goes within the
// agent's request timeout.
const imageUploadChunk = 32 << 20

// madeImageVolume is the pool volume holding the copy of image id's disk while it uploads.
func madeImageVolume(id string) string { return "vf-image-" + id }

// realizeImage realizes the assignment of an image made from a VM (a.Image) and reports
// the outcome. An assignment APPLIED at its generation is done.
func (ag *Agent) realizeImage(ctx context.Context, a Assignment) {
	if a.Status == AssignmentStatusApplied {
		return
	}
	err := ag.makeImage(ctx, a)
	if ctx.Err() != nil {
		return // shutting down: the next start picks this up again
	}
	switch {
	case errors.Is(err, errWaiting):
		ag.report(ctx, a, AssignmentStatusApplying, "copying", err.Error(), true)
	case err != nil:
		ag.log.Warn("image assignment failed", "assignment", a.Id, "err", err)
		ag.report(ctx, a, AssignmentStatusFailed, "unknown", err.Error(), true)
	default:
		ag.log.Info("image assignment applied", "assignment", a.Id, "image", a.Image.Id)
		ag.report(ctx, a, AssignmentStatusApplied, observedPresent, "", true)
	}
}

// makeImage copies the root disk of the image's source VM and uploads the copy.
func (ag *Agent) makeImage(ctx context.Context, a Assignment) error {
	img := a.Image
	switch img.Status {
	case ImageStatusActive, ImageStatusDeprecated:
		return nil // uploaded before: only the APPLIED report was lost
	}
	vmText, ok := strings.CutPrefix(img.Source, sourceVMPrefix)
	vm, err := strconv.ParseInt(vmText, 10, 64)
	if !ok || err != nil || vm <= 0 {
		return fmt.Errorf("image %s: source %q names no VM (want %s<id>)", img.Id, img.Source, sourceVMPrefix)
	}
	if err := ag.images.ensurePool(ctx); err != nil {
		return err
	}
	pool := ag.images.pool.Name
	name := hypervisor.DomainName(vm)
	st, err := ag.hv.State(ctx, name)
	if err != nil && !errors.Is(err, hypervisor.ErrNotFound) {
		return err
	}
	if err == nil && st.Active() {
		return fmt.Errorf("VM %d is %s: an image is made only from a stopped VM's disk", vm, st)
	}
	// Said before the copy, which takes a while.
	ag.report(ctx, a, AssignmentStatusApplying, "copying", "", true)
	dst := madeImageVolume(img.Id)
	defer func() {
		if err := ag.hv.DeleteVolume(context.WithoutCancel(ctx), pool, dst); err != nil {
			ag.log.Warn("cannot delete the copy of an image's disk", "volume", dst, "err", err)
		}
	}()
	v, err := ag.hv.CopyVolume(ctx, pool, rootVolumeName(vm), pool, dst)
	if err != nil {
		return fmt.Errorf("copy VM %d's root disk: %w", vm, err)
	}
	return ag.uploadImage(ctx, img.Id, v.Path)
}

// uploadImage sends the file at path (a volume of the node's directory pool) as the bytes
// of image id: PUT /images/{id}/data, a chunk of imageUploadChunk bytes at a time with
// Content-Range, the later ones with the Upload-ID the first answer named. Another upload
// of the image still running (409) is errWaiting.
func (ag *Agent) uploadImage(ctx context.Context, id, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("open the copy of image %s's disk: %w", id, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	size := st.Size()
	if size == 0 {
		return fmt.Errorf("the copy of image %s's disk at %s is empty", id, path)
	}
	url := ag.images.base + "/images/" + id + "/data"
	uploadID := ""
	for off := int64(0); off < size; {
		n := min(int64(imageUploadChunk), size-off)
		req, err := http.NewRequestWithContext(ctx, http.MethodPut, url, io.NewSectionReader(f, off, n))
		if err != nil {
			return err
		}
		req.ContentLength = n
		req.Header.Set("Authorization", "Bearer "+ag.images.token)
		req.Header.Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", off, off+n-1, size))
		if uploadID != "" {
			req.Header.Set("Upload-ID", uploadID)
		}
		// The image cache's client: the agent's own, without its per-request timeout (ctx
		// bounds a transfer), as for image downloads.
		resp, err := ag.images.http.Do(req)
		if err != nil {
			return fmt.Errorf("upload image %s: %w", id, err)
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		switch resp.StatusCode {
		case http.StatusPermanentRedirect: // more to send
			uploadID = resp.Header.Get("Upload-ID")
			off += n
		case http.StatusOK:
			var done struct{ Status, StatusReason string }
			if err := json.Unmarshal(body, &done); err != nil {
				return fmt.Errorf("upload image %s: answer %q: %w", id, body, err)
			}
			if done.Status != string(ImageStatusActive) {
				return fmt.Errorf("uploaded image %s is %s: %s", id, done.Status, done.StatusReason)
			}
			return nil
		case http.StatusConflict:
			return fmt.Errorf("upload image %s: %s: %w", id, strings.TrimSpace(string(body)), errWaiting)
		default:
			return fmt.Errorf("upload image %s: %s: %s", id, resp.Status, strings.TrimSpace(string(body)))
		}
	}
	return fmt.Errorf("upload image %s: all %d bytes sent but the server did not complete it", id, size)
}
