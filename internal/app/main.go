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
	"time"

	"github.com/virtflow/virtflow/controllers/kubecluster"
	"github.com/virtflow/virtflow/controllers/nodemonitor"
	"github.com/virtflow/virtflow/controllers/provision"
	"github.com/virtflow/virtflow/domain/guest"
	"github.com/virtflow/virtflow/domain/placement"
	"github.com/virtflow/virtflow/internal/platform/config"
	"github.com/virtflow/virtflow/internal/platform/infra"
	"github.com/virtflow/virtflow/internal/platform/version"
)

// Main is the body of a VirtFlow command: it reads the configuration (exit status 2 when it
// is wrong), runs run until SIGINT or SIGTERM, and exits with status 1 when run fails.
//
// `name migrate` applies the database migrations and exits (RunMigrate); `name probe URL`
// is a health check (Probe).
func Main(name string, run func(ctx context.Context, cfg config.Config, log *slog.Logger) error) {
	if code, ok := subcommand(name); ok {
		os.Exit(code)
	}
	cfg, err := config.FromOS(name)
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, err)
		}
		os.Exit(2)
	}
	if cfg.Version {
		fmt.Println(name, version.Get())
		os.Exit(0)
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
// (strategy, scorer weights, required quotas), deciding on the process's snapshot cache,
// each placement told to observe (the placement metrics). The resolvers place through it,
// the node monitor's automatic drains through its Placer.
func provisioning(cfg config.Config, snaps *placement.Snapshots, observe func(time.Duration, error), g *guest.Service) *provision.Service {
	return provision.New(provision.Config{Placement: placement.Config{Scheduler: cfg.Scheduler(), Snapshots: snaps, Observe: observe},
		Guest: g})
}

// guestService is the process's recorder of guests' reports (package guest), over db, with
// its failed-credential counts in redis and the deadline of --guest-ready-deadline.
func guestService(cfg config.Config, db *infra.Database, redis *infra.Redis) *guest.Service {
	return guest.New(db.Client, guest.Config{Deadline: cfg.GuestReadyDeadline, Redis: redis.Client,
		RateLimitPrefix: redis.Key("guest:"), OnBootstrap: kubecluster.OnBootstrap(time.Now)})
}

// startSnapshots starts the placement snapshot cache installHooks made: subscribed to the
// change events of every process through redis, kept current until ctx ends.
func startSnapshots(ctx context.Context, snaps *placement.Snapshots) error {
	if err := snaps.Run(ctx); err != nil {
		return fmt.Errorf("placement snapshot cache: %w", err)
	}
	return nil
}

// nodeMonitor is the node monitor's configuration with the process's Placer and clock, and
// the deployment's lease key.
func nodeMonitor(cfg config.Config, prov *provision.Service, redis *infra.Redis) nodemonitor.Config {
	c := cfg.NodeMonitor()
	c.Placer = prov.Placer()
	c.Now = prov.Clock()
	c.LeaseKey = redis.Key("nodemonitor:leader")
	return c
}

// openRedis connects to the configured Redis with the deployment's namespace.
func openRedis(ctx context.Context, cfg config.Config) (*infra.Redis, error) {
	return infra.OpenRedisNamespace(ctx, cfg.RedisURL, cfg.RedisNamespace)
}
