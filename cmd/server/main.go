// Command server is VirtFlow's API server: GraphQL at /query, GraphiQL at /playground, the
// dashboard at /, health and metrics. With nothing configured it runs self-contained on :8080
// (SQLite under ./data, an in-process Redis, the worker in-process); DATABASE_URL and REDIS_URL
// switch it to PostgreSQL and Redis. Run `server -h` for the flags.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/virtflow/virtflow/internal/app"
	"github.com/virtflow/virtflow/internal/config"
)

func main() {
	cfg, err := config.FromOS("server")
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, err)
		}
		os.Exit(2)
	}
	log := cfg.Logger(os.Stderr)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := app.RunServer(ctx, cfg, log, nil); err != nil {
		log.Error("server stopped with an error", "err", err)
		os.Exit(1)
	}
}
