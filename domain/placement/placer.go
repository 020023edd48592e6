package placement

import (
	"context"
	"time"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/scheduler"
	"github.com/virtflow/virtflow/ent"
)

// Config tunes placement.
type Config struct {
	// Scheduler chooses the filters and weighted scorers: scheduler.DefaultConfig spreads
	// (the default), scheduler.BinpackConfig packs. Quiet is set for commits, whatever it
	// says here; explanations always explain.
	Scheduler scheduler.Config
	// MaxAttempts bounds how often one placement is decided again after a node or quota
	// changed under it between deciding and committing (default 16; with the waits between
	// attempts, a placement gives up after about a second of collisions).
	MaxAttempts int
	// ReplicaRemover, when set, is asked first about every replica a scale-down or a delete
	// removes, in the same transaction (provision.New sets it: the provisioning pipeline
	// deletes a VM realized on its node asynchronously).
	ReplicaRemover ReplicaRemover
	// Snapshots, when set, is the process's cache of region snapshots (NewSnapshots): a
	// placement decides on it instead of loading its region in the transaction.
	Snapshots *Snapshots
	// Clock dates the status of what placement creates or changes (default time.Now);
	// provision.New passes the provisioning Service's.
	Clock func() time.Time
	// Observe, when set, is told how long each placement took (deciding and committing,
	// retries included) and its error, nil when placed (metrics.Placement.Observe).
	Observe func(d time.Duration, err error)
}

// ReplicaRemover takes over the removal of region-service replica vm through client: it
// returns true when it did (the VM's final delete later releases it through DeleteVM),
// false to let placement delete the VM at once.
type ReplicaRemover func(ctx context.Context, client *ent.Client, vm int) (bool, error)

// Placer places, frees and explains. Its methods take the ent client to work with: the
// transactional client of the caller's transaction (a GraphQL mutation's), or a plain
// client, in which case the Placer opens and commits a transaction of its own.
type Placer struct {
	cfg Config
}

// New returns a Placer with cfg, zero fields taking their defaults.
func New(cfg Config) *Placer {
	if cfg.Scheduler.Weights == nil && cfg.Scheduler.Filters == nil {
		q := cfg.Scheduler.RequireQuota
		cfg.Scheduler = scheduler.DefaultConfig()
		cfg.Scheduler.RequireQuota = q
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = 16
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	return &Placer{cfg: cfg}
}

// system is ctx acting as the placement component: the writes to nodes, quotas and the
// placement edges of VMs that the viewer's own mutation implies, after the viewer's right
// to make that mutation was checked.
func system(ctx context.Context) context.Context { return authz.SystemContext(ctx, "placement") }

// commitConfig is the scheduler configuration of a decision that will be committed.
func (p *Placer) commitConfig() scheduler.Config {
	c := p.cfg.Scheduler
	c.Quiet = true
	return c
}
