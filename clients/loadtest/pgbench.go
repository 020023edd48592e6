package loadtest

import (
	"context"
	"database/sql"
	_ "embed" // the pgbench script
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"time"

	_ "github.com/lib/pq" // the cleanup of pgbench's rows
)

//go:embed create_writes.sql
var createWritesSQL string

// pgbenchStatements says what the replay sends, for the report.
const pgbenchStatements = "create_writes.sql: BEGIN, INSERT VM, UPDATE node, UPDATE quota, UPDATE VM, COMMIT"

var tpsRE = regexp.MustCompile(`tps = ([0-9.]+)`)

// pgbench replays a create's writes (create_writes.sql) with pgbench at the run's clients
// for as long as the API run took, on the nodes and cluster the run's VMs were placed on, and
// deletes the rows it inserted. It reports why it did not run instead of failing the run.
func (r *runner) pgbench(ctx context.Context, t target, ids []string, createsPerSecond float64, elapsed time.Duration) *Pgbench {
	p := &Pgbench{Clients: r.cfg.Clients, Seconds: max(1, int(elapsed.Round(time.Second)/time.Second)), Script: pgbenchStatements}
	bin, err := exec.LookPath("pgbench")
	if err != nil {
		return &Pgbench{Skipped: "pgbench is not installed (apt-get install postgresql-client)"}
	}
	if len(ids) == 0 {
		return &Pgbench{Skipped: "no VM was created: no node to replay on"}
	}
	var out struct {
		VirtualMachines struct {
			Edges []struct {
				Node struct {
					Node    *struct{ ID string }
					Cluster *struct{ ID string }
				}
			}
		}
		Quotas struct {
			Edges []struct{ Node struct{ ID string } }
		}
	}
	err = r.api.Do(ctx, `query($prefix: String!, $tenant: ID!) {
  virtualMachines(first: 1000, where: {nameHasPrefix: $prefix}) { edges { node { node { id } cluster { id } } } }
  quotas(first: 1, where: {hasTenantWith: {id: $tenant}}) { edges { node { id } } } }`,
		map[string]any{"prefix": r.prefix, "tenant": t.tenant}, &out)
	if err != nil {
		return &Pgbench{Skipped: "reading where the VMs were placed: " + err.Error()}
	}
	minNode, maxNode, cluster := 0, 0, 0
	for _, e := range out.VirtualMachines.Edges {
		if e.Node.Node == nil || e.Node.Cluster == nil {
			continue
		}
		n, err1 := strconv.Atoi(e.Node.Node.ID)
		c, err2 := strconv.Atoi(e.Node.Cluster.ID)
		if err1 != nil || err2 != nil {
			continue
		}
		if cluster == 0 || n < minNode {
			minNode = n
		}
		if cluster == 0 || n > maxNode {
			maxNode = n
		}
		cluster = c
	}
	if cluster == 0 {
		return &Pgbench{Skipped: "none of the run's VMs was placed on a node"}
	}
	quota := "0" // no quota row: the UPDATE matches none, as a create without a quota sends none
	if len(out.Quotas.Edges) > 0 {
		quota = out.Quotas.Edges[0].Node.ID
	}
	dir, err := os.MkdirTemp("", "loadtest-pgbench")
	if err != nil {
		return &Pgbench{Skipped: err.Error()}
	}
	defer os.RemoveAll(dir)
	script := filepath.Join(dir, "create_writes.sql")
	if err := os.WriteFile(script, []byte(createWritesSQL), 0o600); err != nil {
		return &Pgbench{Skipped: err.Error()}
	}
	prefix := r.prefix + "pgbench-"
	args := []string{"-n", "-c", strconv.Itoa(p.Clients), "-j", strconv.Itoa(min(p.Clients, runtime.NumCPU())),
		"-T", strconv.Itoa(p.Seconds), "-f", script,
		"-D", fmt.Sprintf("min_node=%d", minNode), "-D", fmt.Sprintf("max_node=%d", maxNode),
		"-D", "quota=" + quota, "-D", "tenant=" + t.tenant, "-D", "region=" + t.region, "-D", "flavor=" + t.flavor,
		"-D", fmt.Sprintf("cluster=%d", cluster), "-D", fmt.Sprintf("run=%d", r.run), r.cfg.PgbenchDSN}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "PGCONNECT_TIMEOUT=10")
	outb, runErr := cmd.CombinedOutput()
	cleanErr := deletePgbenchRows(ctx, r.cfg.PgbenchDSN, prefix)
	if runErr != nil {
		return &Pgbench{Skipped: fmt.Sprintf("pgbench failed: %v: %.500s", runErr, outb)}
	}
	if cleanErr != nil {
		return &Pgbench{Skipped: "deleting pgbench's rows: " + cleanErr.Error()}
	}
	m := tpsRE.FindSubmatch(outb)
	if m == nil {
		return &Pgbench{Skipped: fmt.Sprintf("no tps in pgbench's output: %.500s", outb)}
	}
	p.TPS, _ = strconv.ParseFloat(string(m[1]), 64)
	if p.TPS > 0 {
		p.Ratio = createsPerSecond / p.TPS
	}
	return p
}

// deletePgbenchRows deletes the VMs the replay inserted.
func deletePgbenchRows(ctx context.Context, dsn, prefix string) error {
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.ExecContext(ctx, `DELETE FROM virtual_machines WHERE name LIKE $1 || '%'`, prefix)
	return err
}
