package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/virtflow/virtflow/internal/config"
	"github.com/virtflow/virtflow/placement"
)

// Main is the body of a VirtFlow command: it reads the configuration (exit status 2 when it
// is wrong), runs run until SIGINT or SIGTERM, and exits with status 1 when run fails.
func Main(name string, run func(ctx context.Context, cfg config.Config, log *slog.Logger) error) {
	cfg, err := config.FromOS(name)
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, err)
		}
		os.Exit(2)
	}
	log := cfg.Logger(os.Stderr)
	// The resolvers and workers place VMs through placement.Default.
	placement.Default = placement.New(placement.Config{Scheduler: cfg.Scheduler()})
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err = run(ctx, cfg, log)
	stop()
	if err != nil {
		log.Error(name+" stopped with an error", "err", err)
		os.Exit(1)
	}
}
