package app

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/virtflow/virtflow/controllers/alerting"
	"github.com/virtflow/virtflow/domain/egress"
	"github.com/virtflow/virtflow/internal/platform/config"
	"github.com/virtflow/virtflow/internal/platform/infra"
	"github.com/virtflow/virtflow/internal/platform/secrets"
)

// guards are the egress policy and the secret keyring of a process.
type guards struct {
	egress  *egress.Policy
	secrets *secrets.Keyring
}

// openGuards reads the egress allow list and the secret keys of cfg (VIRTFLOW_SECRET_KEY,
// else the key file under the data directory, made on first start). Their write rules are
// installed on the client by installHooks; sealStored then seals what is stored.
func openGuards(cfg config.Config, log *slog.Logger) (guards, error) {
	var g guards
	var err error
	if g.egress, err = egress.Parse(cfg.EgressAllow); err != nil {
		return g, err
	}
	var primary []byte
	if cfg.SecretKey != "" {
		if primary, err = secrets.ParseKey(cfg.SecretKey); err != nil {
			return g, fmt.Errorf("VIRTFLOW_SECRET_KEY: %w", err)
		}
	} else {
		path := cfg.SecretKeyFile()
		var created bool
		if primary, created, err = secrets.LoadKeyFile(path); err != nil {
			return g, err
		}
		if created {
			log.Info("secret key made: it seals the secrets stored in the database; back it up with the data", "file", path)
		}
		if !cfg.Embedded() {
			log.Warn("VIRTFLOW_SECRET_KEY is not set: using the key file of this process; every server and worker of the installation must share one key", "file", path)
		}
	}
	var old [][]byte
	for _, s := range cfg.OldSecretKeys {
		k, err := secrets.ParseKey(s)
		if err != nil {
			return g, fmt.Errorf("VIRTFLOW_SECRET_KEYS_OLD: %w", err)
		}
		old = append(old, k)
	}
	if g.secrets, err = secrets.NewKeyring(primary, old...); err != nil {
		return g, err
	}
	return g, nil
}

// sealStored seals the hook secrets still stored in clear or under an old key. It writes
// through db.Client, so it runs once installHooks installed the write rules.
func sealStored(ctx context.Context, db *infra.Database, g guards, log *slog.Logger) error {
	n, err := alerting.SealStored(ctx, db.Client, g.secrets)
	if err != nil {
		return err
	}
	if n > 0 {
		log.Info("hook secrets sealed", "rows", n)
	}
	return nil
}
