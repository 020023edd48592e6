// Command server is VirtFlow's API server: GraphQL at /query, GraphiQL at /playground, the
// dashboard at /, health and metrics. With nothing configured it runs self-contained on :8080
// (SQLite under ./data, an in-process Redis, the worker in-process); DATABASE_URL and REDIS_URL
// switch it to PostgreSQL and Redis. Run `server -h` for the flags.
package main

import (
	"context"
	"log/slog"

	"github.com/virtflow/virtflow/internal/app"
	"github.com/virtflow/virtflow/internal/platform/config"
)

func main() {
	app.Main("server", func(ctx context.Context, cfg config.Config, log *slog.Logger) error {
		return app.RunServer(ctx, cfg, log, nil)
	})
}
