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
	"github.com/virtflow/virtflow/nodemonitor"
	"github.com/virtflow/virtflow/placement"
	"github.com/virtflow/virtflow/provision"
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
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err = run(ctx, cfg, log)
	stop()
	if err != nil {
		log.Error(name+" stopped with an error", "err", err)
		os.Exit(1)
	}
}

// provisioning is the process's provisioning service: placement as the settings ask
// (strategy, scorer weights, required quotas). The resolvers place through it, the node
// monitor's automatic drains through its Placer.
func provisioning(cfg config.Config) *provision.Service {
	return provision.New(provision.Config{Placement: placement.Config{Scheduler: cfg.Scheduler()}})
}

// nodeMonitor is the node monitor's configuration with the process's Placer and clock.
func nodeMonitor(cfg config.Config, prov *provision.Service) nodemonitor.Config {
	c := cfg.NodeMonitor()
	c.Placer = prov.Placer()
	c.Now = prov.Clock()
	return c
}
