package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"unicode/utf8"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/identity"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/apitoken"
	"github.com/virtflow/virtflow/ent/rolebinding"
)

// bootstrapAdmin makes sure someone can sign in. With VIRTFLOW_ADMIN_TOKEN it creates (or
// keeps) that admin token. Without it, on an installation with no admin yet, it creates a
// one-time admin token and returns it — the installer's initial password, which the server
// shows once, last of its start (adminBox) — so that `go run ./cmd/server` on a fresh machine
// can be used at once. Later starts return "".
func bootstrapAdmin(ctx context.Context, ids *identity.Service, client *ent.Client, secret string, log *slog.Logger) (string, error) {
	if secret != "" {
		if err := ids.EnsureAdminToken(ctx, secret); err != nil {
			return "", fmt.Errorf("VIRTFLOW_ADMIN_TOKEN: %w", err)
		}
		log.Info("admin token ready", "user", "admin")
		return "", nil
	}
	admins, err := client.RoleBinding.Query().Where(rolebinding.RoleEQ(rolebinding.RoleAdmin)).
		Count(authz.SystemContext(ctx, "bootstrap"))
	if err != nil {
		return "", fmt.Errorf("look for admins: %w", err)
	}
	if admins > 0 {
		return "", nil
	}
	plaintext, _, _ := identity.NewToken(apitoken.KindApi)
	if err := ids.EnsureAdminToken(ctx, plaintext); err != nil {
		return "", fmt.Errorf("create the first admin token: %w", err)
	}
	return plaintext, nil
}

// showAdminToken logs the one-time admin token and, for people reading a terminal (text
// logs), draws it in a box on w, so that it stands out after the start's log lines.
func showAdminToken(w io.Writer, token, addr string, jsonLogs bool, log *slog.Logger) {
	log.Warn("no admin existed: created user admin with this admin API token; it is shown only once, store it "+
		"(send it as Authorization: Bearer <token>, or set VIRTFLOW_ADMIN_TOKEN to choose your own)", "token", token)
	if jsonLogs || w == nil {
		return
	}
	lines := []string{
		"VirtFlow created the first admin. Its API token, shown only this once:",
		"",
		"    " + token,
		"",
		"Store it now. Sign in at http://" + addr + "/ with it, or send it as",
		"Authorization: Bearer <token>. VIRTFLOW_ADMIN_TOKEN chooses your own.",
	}
	width := 0
	for _, l := range lines {
		width = max(width, utf8.RuneCountInString(l))
	}
	var b strings.Builder
	b.WriteString("\n" + strings.Repeat("#", width+6) + "\n")
	for _, l := range lines {
		b.WriteString("## " + l + strings.Repeat(" ", width-utf8.RuneCountInString(l)) + " ##\n")
	}
	b.WriteString(strings.Repeat("#", width+6) + "\n\n")
	_, _ = io.WriteString(w, b.String())
}
