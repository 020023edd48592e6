package imagestore

import (
	"context"
	"strings"

	"github.com/virtflow/virtflow/domain/egress"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/hook"
)

// SourceHook refuses, on every write of an image (createImage, updateImage, imports), a
// URL source the egress policy p refuses when it is stored: VALIDATION on field source.
// It is installed on the client where the process is wired (Install); a hook rather than a
// check in Create so that no write path stores a source the workers must not fetch.
func SourceHook(p *egress.Policy) ent.Hook {
	return func(next ent.Mutator) ent.Mutator {
		return hook.ImageFunc(func(ctx context.Context, m *ent.ImageMutation) (ent.Value, error) {
			// An image made from a VM (source vm:<id>) is written by createImageFromVirtualMachine
			// only: createImage and updateImage refuse that source (ValidateSource), and its
			// bytes come from the agent of the node it is assigned to, never from a URL.
			if src, ok := m.Source(); ok && src != SourceUpload && !strings.HasPrefix(src, SourceVMPrefix) {
				if err := ValidateSource(src); err != nil {
					return nil, err
				}
				if err := p.Validate("source", src); err != nil {
					return nil, err
				}
			}
			return next.Mutate(ctx, m)
		})
	}
}

// Install adds SourceHook(p) to client's image mutations (and those of its transactions).
func Install(client *ent.Client, p *egress.Policy) { client.Image.Use(SourceHook(p)) }
