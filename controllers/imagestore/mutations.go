package imagestore

import (
	"context"

	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/image"
)

// Create creates an image from the createImage input in the caller's transaction (tx) and
// starts its lifecycle: PENDING, with its fetch task enqueued for a URL source.
func Create(ctx context.Context, tx *ent.Client, input ent.CreateImageInput) (*ent.Image, error) {
	if err := ValidateSource(input.Source); err != nil {
		return nil, err
	}
	if input.Checksum != nil {
		if err := ValidateChecksum(*input.Checksum); err != nil {
			return nil, err
		}
	}
	img, err := tx.Image.Create().SetInput(input).Save(ctx)
	if err != nil {
		return nil, err
	}
	return img, Created(ctx, tx, img)
}

// Update applies the updateImage input in the caller's transaction (tx). The status moves
// only between ACTIVE and DEPRECATED (ValidateUpdate); the source and checksum of an image
// whose bytes arrived are fixed (create a new image for other bytes). Setting the source of
// an image still waiting or in ERROR starts over: PENDING, fetched again from a URL.
func Update(ctx context.Context, tx *ent.Client, id int, input ent.UpdateImageInput) (*ent.Image, error) {
	cur, err := tx.Image.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := ValidateUpdate(cur.Status, input.Status); err != nil {
		return nil, err
	}
	arrived := cur.Status == image.StatusActive || cur.Status == image.StatusDeprecated
	if input.Source != nil {
		if err := ValidateSource(*input.Source); err != nil {
			return nil, err
		}
		if arrived && *input.Source != cur.Source {
			return nil, apierr.Validation("source", "the bytes of image %d have arrived: create a new image for other bytes", id)
		}
	}
	if input.Checksum != nil || input.ClearChecksum {
		if input.Checksum != nil {
			if err := ValidateChecksum(*input.Checksum); err != nil {
				return nil, err
			}
		}
		if arrived && (input.ClearChecksum || *input.Checksum != cur.Checksum) {
			return nil, apierr.Validation("checksum", "the bytes of image %d have arrived and were verified: the checksum is theirs", id)
		}
	}
	u := tx.Image.UpdateOneID(id).SetInput(input)
	restart := input.Source != nil && !arrived
	if restart {
		u.SetStatus(image.StatusPending).SetStatusReason("")
	}
	img, err := u.Save(ctx)
	if err != nil {
		return nil, err
	}
	if restart {
		return img, Created(ctx, tx, img)
	}
	return img, nil
}
