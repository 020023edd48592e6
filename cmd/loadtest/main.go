// Command loadtest drives a running VirtFlow server through its public GraphQL API and
// reports throughput and latency with the machine's load (package loadtest).
//
//	loadtest -url http://localhost:8080 -token $VIRTFLOW_ADMIN_TOKEN creates -clients 8 -duration 30s
//	loadtest -url ... -token ... reads -clients 8 -duration 30s
//	loadtest -url ... -token ... active -vms 1000
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"

	"github.com/virtflow/virtflow/clients/loadtest"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "loadtest:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	global := flag.NewFlagSet("loadtest", flag.ContinueOnError)
	url := global.String("url", envOr("VIRTFLOW_URL", "http://localhost:8080"), "server base URL (VIRTFLOW_URL)")
	token := global.String("token", os.Getenv("VIRTFLOW_TOKEN"), "API token (VIRTFLOW_TOKEN)")
	asJSON := global.Bool("json", false, "print the report as JSON instead of a table")
	global.Usage = func() {
		fmt.Fprintln(global.Output(), "usage: loadtest [-url URL] [-token TOKEN] [-json] creates|reads|active [flags]")
		global.PrintDefaults()
	}
	if err := global.Parse(args); err != nil {
		return err
	}
	if global.NArg() == 0 {
		global.Usage()
		return fmt.Errorf("no scenario")
	}
	scenario, rest := global.Arg(0), global.Args()[1:]
	cfg := loadtest.Config{URL: *url, Token: *token}
	fs := flag.NewFlagSet(scenario, flag.ContinueOnError)
	fs.IntVar(&cfg.Clients, "clients", 8, "concurrent clients")
	fs.BoolVar(&cfg.Keep, "keep", false, "keep the VMs the run created")
	fs.BoolVar(asJSON, "json", *asJSON, "print the report as JSON instead of a table")
	var runFn func(context.Context, loadtest.Config) (*loadtest.Report, error)
	switch scenario {
	case "creates":
		fs.DurationVar(&cfg.Duration, "duration", 0, "how long to create (default 10s)")
		fs.IntVar(&cfg.Count, "count", 0, "create this many VMs instead of running for -duration")
		fs.StringVar(&cfg.PgbenchDSN, "pgbench-dsn", "", "PostgreSQL DSN of the server's database: replay a create's writes with pgbench beside the run")
		runFn = loadtest.Creates
	case "reads":
		fs.DurationVar(&cfg.Duration, "duration", 0, "how long to read (default 10s)")
		fs.StringVar(&cfg.Rack, "rack", "", "rack ID for rackElevation (default: the first rack)")
		fs.StringVar(&cfg.Floor, "floor", "", "floor ID for floorView (default: the first rack's floor)")
		runFn = loadtest.Reads
	case "active":
		fs.IntVar(&cfg.VMs, "vms", 1000, "VMs to create and wait for")
		fs.DurationVar(&cfg.ActiveTimeout, "timeout", 0, "how long to wait for all ACTIVE (default 10m)")
		runFn = loadtest.Active
	default:
		global.Usage()
		return fmt.Errorf("unknown scenario %q", scenario)
	}
	if scenario != "reads" {
		fs.StringVar(&cfg.Tenant, "tenant", "", "tenant ID (default: the first tenant)")
		fs.StringVar(&cfg.Region, "region", "", "region ID (default: the first region)")
		fs.StringVar(&cfg.Flavor, "flavor", "", "flavor ID (default: the smallest flavor)")
		fs.StringVar(&cfg.Image, "image", "", "image ID (default: the first ACTIVE image, if any; none: no image)")
	}
	if err := fs.Parse(rest); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	rep, err := runFn(ctx, cfg)
	if rep != nil {
		var werr error
		if *asJSON {
			werr = rep.WriteJSON(os.Stdout)
		} else {
			werr = rep.WriteTable(os.Stdout)
		}
		if werr != nil && err == nil {
			err = werr
		}
	}
	return err
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}
