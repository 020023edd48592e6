package app

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/apitoken"
	"github.com/virtflow/virtflow/ent/rolebinding"
	"github.com/virtflow/virtflow/identity"
)

// bootstrapAdmin makes sure someone can sign in. With VIRTFLOW_ADMIN_TOKEN it creates (or
// keeps) that admin token. Without it, on an installation with no admin yet, it creates a
// one-time admin token and logs it once — the installer's initial password — so that
// `go run ./cmd/server` on a fresh machine can be used at once. Later starts log nothing.
func bootstrapAdmin(ctx context.Context, ids *identity.Service, client *ent.Client, secret string, log *slog.Logger) error {
	if secret != "" {
		if err := ids.EnsureAdminToken(ctx, secret); err != nil {
			return fmt.Errorf("VIRTFLOW_ADMIN_TOKEN: %w", err)
		}
		log.Info("admin token ready", "user", "admin")
		return nil
	}
	admins, err := client.RoleBinding.Query().Where(rolebinding.RoleEQ(rolebinding.RoleAdmin)).
		Count(authz.SystemContext(ctx, "bootstrap"))
	if err != nil {
		return fmt.Errorf("look for admins: %w", err)
	}
	if admins > 0 {
		return nil
	}
	plaintext, _, _ := identity.NewToken(apitoken.KindApi)
	if err := ids.EnsureAdminToken(ctx, plaintext); err != nil {
		return fmt.Errorf("create the first admin token: %w", err)
	}
	log.Warn("no admin existed: created user admin with this admin API token; it is shown only once, store it "+
		"(send it as Authorization: Bearer <token>, or set VIRTFLOW_ADMIN_TOKEN to choose your own)", "token", plaintext)
	return nil
}
