package app

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/controllers/imagestore"
	"github.com/virtflow/virtflow/ent/image"
	"github.com/virtflow/virtflow/internal/platform/config"
	"github.com/virtflow/virtflow/internal/platform/infra"
)

// DemoImageBytes is the size of the blank raw disk the demo gives each of its images.
const DemoImageBytes = 1 << 20

// imageStore opens the image store the configuration names.
func imageStore(cfg config.Config, db *infra.Database, g guards, log *slog.Logger) (*imagestore.Store, error) {
	return imagestore.New(db.Client, imagestore.Config{Dir: cfg.ImageDirectory(), MaxBytes: cfg.ImageMaxBytes,
		Egress: g.egress, UploadIdle: cfg.UploadIdleTimeout, Log: log.With("component", "imagestore")})
}

// adoptImages brings stored images to a true status at startup (imagestore.Store.Adopt)
// and, with --demo, gives the demo's upload images that have no bytes yet a blank raw disk
// of DemoImageBytes, so that the demo's VMs boot from images that really exist (blank ones:
// the simulated fleet runs no guest).
func adoptImages(ctx context.Context, store *imagestore.Store, db *infra.Database, demo bool, log *slog.Logger) error {
	n, err := store.Adopt(ctx)
	if err != nil {
		return err
	}
	if n > 0 {
		log.Info("images adopted", "changed", n)
	}
	if !demo {
		return nil
	}
	sys := authz.SystemContext(ctx, "demo")
	// Upload images without bytes, and those of an older demo (file:// sources the server
	// cannot read, ERROR after Adopt).
	ids, err := db.Client.Image.Query().Where(image.StatusIn(image.StatusPending, image.StatusError),
		image.Or(image.Source(imagestore.SourceUpload), image.SourceHasPrefix("file:///var/lib/virtflow/images/"))).IDs(sys)
	if err != nil {
		return fmt.Errorf("demo images: %w", err)
	}
	for _, id := range ids {
		if _, err := store.Import(ctx, id, bytes.NewReader(make([]byte, DemoImageBytes)), image.FormatRaw); err != nil {
			return fmt.Errorf("demo image %d: %w", id, err)
		}
	}
	return nil
}
