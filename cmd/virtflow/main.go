// Command virtflow is VirtFlow's command-line tool (package cli): sign in, list and describe
// anything, act on VMs and nodes, watch live status, and serve as an Ansible dynamic inventory.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/virtflow/virtflow/clients/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, os.Args[1:], cli.OS())
	stop()
	os.Exit(code)
}
