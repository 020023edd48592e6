package app

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/virtflow/virtflow/store/migrations"
)

// RunMigrate is the `migrate` subcommand of server and worker: it applies the pending
// versioned migrations to DATABASE_URL (under the migration lock, so it may run beside
// starting servers and workers) and exits; with --status it only lists them, exiting 3 when
// some are pending. A Kubernetes migration Job or an upgrade script runs it before rolling
// out new servers; servers and workers also migrate at start.
func RunMigrate(ctx context.Context, name string, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(name+" migrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	status := fs.Bool("status", false, "list the pending migrations without applying them; exit status 3 when some are pending")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: %s migrate [--status]\n\nApplies the pending schema migrations to the PostgreSQL database DATABASE_URL.\n\n", name)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	url := getenv("DATABASE_URL")
	if url == "" {
		fmt.Fprintln(stderr, "migrate: DATABASE_URL is not set (the embedded SQLite database migrates itself at start)")
		return 2
	}
	db, err := sql.Open("postgres", url)
	if err != nil {
		fmt.Fprintln(stderr, "migrate:", err)
		return 1
	}
	defer db.Close()
	if *status {
		pending, err := migrations.Pending(ctx, db)
		if err != nil {
			fmt.Fprintln(stderr, "migrate:", err)
			return 1
		}
		for _, p := range pending {
			fmt.Fprintf(stdout, "pending %s %s\n", p.Version, p.Description)
		}
		if len(pending) > 0 {
			return 3
		}
		fmt.Fprintln(stdout, "up to date")
		return 0
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	res, err := migrations.Apply(ctx, db, log)
	if err != nil {
		fmt.Fprintln(stderr, "migrate:", err)
		return 1
	}
	fmt.Fprintf(stdout, "database at version %s: %d migration(s) applied in %s\n", res.Current, len(res.Applied), res.Took.Round(time.Millisecond))
	return 0
}

// subcommand runs `name migrate ...` or `name probe URL` when the command line asks for one.
func subcommand(name string) (int, bool) {
	if len(os.Args) < 2 {
		return 0, false
	}
	switch os.Args[1] {
	case "migrate":
		return RunMigrate(context.Background(), name, os.Args[2:], os.Getenv, os.Stdout, os.Stderr), true
	case "probe":
		return Probe(os.Args[2:], os.Stderr), true
	}
	return 0, false
}

// Probe is the `probe` subcommand, a container health check for images without curl:
// `server probe http://127.0.0.1:8080/readyz` exits 0 when the URL answers 2xx within five
// seconds, 1 otherwise.
func Probe(args []string, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintln(stderr, "usage: probe URL   (e.g. http://127.0.0.1:8080/readyz)")
		return 2
	}
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(args[0])
	if err != nil {
		fmt.Fprintln(stderr, "probe:", err)
		return 1
	}
	_ = resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		fmt.Fprintln(stderr, "probe:", args[0], resp.Status)
		return 1
	}
	return 0
}
