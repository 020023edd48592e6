// Command worker runs VirtFlow's asynchronous controllers (Asynq task handlers, reconcile
// loops, the node monitor) against PostgreSQL (DATABASE_URL) and Redis (REDIS_URL). Run as
// many as needed; in the embedded single-process mode the server runs one itself.
//
// Today it serves the task queues with no task types yet: the provisioning pipeline (VM
// create/start/stop/reboot/delete, region-service reconcile, drain) comes with a later issue.
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
	cfg, err := config.FromOS("worker")
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, err)
		}
		os.Exit(2)
	}
	log := cfg.Logger(os.Stderr)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := app.RunWorker(ctx, cfg, log); err != nil {
		log.Error("worker stopped with an error", "err", err)
		os.Exit(1)
	}
}
