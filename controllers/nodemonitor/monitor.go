package nodemonitor

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/virtflow/virtflow/controllers/alerting"
	"github.com/virtflow/virtflow/controllers/drain"
	"github.com/virtflow/virtflow/controllers/provision"
	"github.com/virtflow/virtflow/domain/audit"
	"github.com/virtflow/virtflow/domain/placement"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/event"
	"github.com/virtflow/virtflow/store/dbtx"
)

// Config are the monitor's thresholds and period; zero values take the defaults.
type Config struct {
	// Interval is how often the leader checks (default 5 s, or a tenth of NotReadyAfter when
	// that is shorter, so that a short threshold is still checked often enough).
	Interval time.Duration
	// NotReadyAfter is the silence after which a READY node is NOT_READY (default 50 s).
	NotReadyAfter time.Duration
	// DownAfter is the silence after which a node is DOWN (default 5 min).
	DownAfter time.Duration
	// LeaseTTL is the leader lease period: a dead leader is replaced within it (default 15 s).
	LeaseTTL time.Duration
	// LeaseKey is the Redis key of the lease (LeaseKey when empty; the deployment's
	// namespaced key in internal/app).
	LeaseKey string
	// Now is the clock (default time.Now); tests inject their own.
	Now func() time.Time
	// Placer places the VMs an automatic drain moves: internal/app passes the process's
	// (provision.Service.Placer); nil means placement.New with default settings.
	Placer *placement.Placer
	// WarrantyWindow is how long before a host's warranty ends its lifecycle alert is
	// raised (default alerting.DefaultWarrantyWindow); looked at once an hour.
	WarrantyWindow time.Duration
}

func (c Config) withDefaults() Config {
	if c.NotReadyAfter <= 0 {
		c.NotReadyAfter = 50 * time.Second
	}
	if c.Interval <= 0 {
		c.Interval = min(5*time.Second, max(100*time.Millisecond, c.NotReadyAfter/10))
	}
	if c.DownAfter <= 0 {
		c.DownAfter = 5 * time.Minute
	}
	if c.LeaseTTL <= 0 {
		c.LeaseTTL = 15 * time.Second
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Placer == nil {
		c.Placer = placement.New(placement.Config{})
	}
	return c
}

// EventCheck is the check name of the Event rows the monitor files.
const EventCheck = alerting.NodeHeartbeatCheck

// Monitor checks node heartbeats; see the package documentation.
type Monitor struct {
	client *ent.Client
	cfg    Config
	log    *slog.Logger
	// warrantyAt is when the warranties were last looked at (by the leader's loop only).
	warrantyAt time.Time
}

// New returns a monitor over client.
func New(client *ent.Client, cfg Config, log *slog.Logger) *Monitor {
	return &Monitor{client: client, cfg: cfg.withDefaults(), log: log}
}

// Run runs the monitor while this process holds the lease in rdb, until ctx ends.
func Run(ctx context.Context, client *ent.Client, rdb redis.UniversalClient, cfg Config, log *slog.Logger) {
	m := New(client, cfg, log)
	key := cfg.LeaseKey
	if key == "" {
		key = LeaseKey
	}
	NewLease(rdb, key, m.cfg.LeaseTTL, log).Run(ctx, m.Loop)
}

// Loop ticks every Interval until ctx ends; errors are logged and the next tick tries again.
func (m *Monitor) Loop(ctx context.Context) {
	t := time.NewTicker(m.cfg.Interval)
	defer t.Stop()
	for {
		if _, err := m.Tick(ctx); err != nil && ctx.Err() == nil {
			m.log.Error("node monitor tick", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Result counts what a tick changed.
type Result struct {
	NotReady, Down, Cordoned, Drained, DrainsFinished int
	// Restored counts the VMs back from UNKNOWN because their node is READY again.
	Restored int
	// Clusters counts the cross-cluster watch's events (a cluster dead, or back).
	Clusters int
	// Warranties counts the lifecycle alerts raised for warranties about to end.
	Warranties int
}

// Tick runs every check once at the monitor's clock.
func (m *Monitor) Tick(ctx context.Context) (Result, error) {
	ctx = audit.NodeMonitor.Context(ctx)
	now := m.cfg.Now()
	var r Result
	var err error
	if r.Down, err = m.mark(ctx, now, m.cfg.DownAfter, computenode.StatusDown, event.StatusCritical,
		computenode.StatusReady, computenode.StatusNotReady, computenode.StatusUnknown); err != nil {
		return r, err
	}
	if r.NotReady, err = m.mark(ctx, now, m.cfg.NotReadyAfter, computenode.StatusNotReady, event.StatusWarning,
		computenode.StatusReady); err != nil {
		return r, err
	}
	if r.Cordoned, err = m.autoCordon(ctx, now); err != nil {
		return r, err
	}
	if r.Drained, err = m.autoDrain(ctx, now); err != nil {
		return r, err
	}
	if r.DrainsFinished, err = drain.Progress(ctx, m.client, now); err != nil {
		return r, err
	}
	if r.Restored, err = provision.RestoreKnown(ctx, m.client, now); err != nil {
		return r, err
	}
	if r.Clusters, err = m.watchClusters(ctx, now); err != nil {
		return r, err
	}
	if now.Sub(m.warrantyAt) >= time.Hour {
		if r.Warranties, err = alerting.WarrantyAlerts(ctx, m.client, now, m.cfg.WarrantyWindow); err != nil {
			return r, err
		}
		m.warrantyAt = now
	}
	return r, nil
}

// mark sets nodes in one of the from states whose last heartbeat is older than after to
// status to, one conditional update per node (a heartbeat arriving meanwhile wins), and
// files an Event and an audit row (markNodeNotReady, markNodeDown) for each.
func (m *Monitor) mark(ctx context.Context, now time.Time, after time.Duration, to computenode.Status,
	severity event.Status, from ...computenode.Status) (int, error) {
	cutoff := now.Add(-after)
	nodes, err := m.client.ComputeNode.Query().
		Where(computenode.StatusIn(from...), computenode.LastHeartbeatAtNotNil(), computenode.LastHeartbeatAtLT(cutoff)).
		All(ctx) // whole rows: each is the before image of its audit row
	if err != nil {
		return 0, fmt.Errorf("quiet nodes: %w", err)
	}
	n := 0
	for _, node := range nodes {
		silent := now.Sub(*node.LastHeartbeatAt).Truncate(time.Second)
		reason := fmt.Sprintf("no heartbeat for %s (last at %s)", silent, node.LastHeartbeatAt.UTC().Format(time.RFC3339))
		ok, err := m.inTx(ctx, func(c *ent.Client) (bool, error) {
			changed, err := c.ComputeNode.Update().
				Where(computenode.ID(node.ID), computenode.StatusIn(from...), computenode.LastHeartbeatAtLT(cutoff)).
				SetStatus(to).SetStatusReason(reason).Save(ctx)
			if err != nil || changed == 0 {
				return false, err
			}
			if err := auditNode(ctx, c, markAction[to], node); err != nil {
				return false, err
			}
			if to == computenode.StatusDown {
				// Nobody can say any more whether its VMs run.
				if _, err := provision.MarkUnknown(ctx, c, node, reason, now); err != nil {
					return false, err
				}
			}
			_, err = alerting.Record(ctx, c, c.Event.Create().SetCheckName(EventCheck).SetStatus(severity).SetSource("nodemonitor").
				SetOutput(fmt.Sprintf("node %s is %s: %s", node.Name, to, reason)).
				SetFirstSeenAt(now).SetLastSeenAt(now).SetNodeID(node.ID))
			return true, err
		})
		if err != nil {
			return n, fmt.Errorf("mark node %s %s: %w", node.Name, to, err)
		}
		if ok {
			n++
			m.log.Warn("node quiet", "node", node.Name, "status", to, "reason", reason)
		}
	}
	return n, nil
}

// autoCordon cordons the schedulable nodes that asked for it (autoCordon) once they have
// been silent for their autoCordonIntervalSeconds and are no longer READY, with an Event
// and an audit row (autoCordonNode) for each.
func (m *Monitor) autoCordon(ctx context.Context, now time.Time) (int, error) {
	nodes, err := m.client.ComputeNode.Query().
		Where(computenode.AutoCordon(true), computenode.Schedulable(true), computenode.StatusNEQ(computenode.StatusReady),
				computenode.LastHeartbeatAtNotNil()).
		All(ctx) // whole rows: each is the before image of its audit row
	if err != nil {
		return 0, fmt.Errorf("auto-cordon candidates: %w", err)
	}
	n := 0
	for _, node := range nodes {
		cutoff := now.Add(-time.Duration(node.AutoCordonIntervalSeconds) * time.Second)
		if !node.LastHeartbeatAt.Before(cutoff) {
			continue
		}
		reason := fmt.Sprintf("auto-cordoned: no heartbeat since %s", node.LastHeartbeatAt.UTC().Format(time.RFC3339))
		ok, err := m.inTx(ctx, func(c *ent.Client) (bool, error) {
			changed, err := c.ComputeNode.Update().
				Where(computenode.ID(node.ID), computenode.Schedulable(true), computenode.LastHeartbeatAtLT(cutoff)).
				SetSchedulable(false).SetCordonReason(reason).Save(ctx)
			if err != nil || changed == 0 {
				return false, err
			}
			if err := auditNode(ctx, c, "autoCordonNode", node); err != nil {
				return false, err
			}
			_, err = alerting.Record(ctx, c, c.Event.Create().SetCheckName(EventCheck).SetStatus(event.StatusWarning).SetSource("nodemonitor").
				SetOutput(fmt.Sprintf("node %s %s", node.Name, reason)).
				SetFirstSeenAt(now).SetLastSeenAt(now).SetNodeID(node.ID))
			return true, err
		})
		if err != nil {
			return n, fmt.Errorf("auto-cordon node %s: %w", node.Name, err)
		}
		if ok {
			n++
		}
	}
	return n, nil
}

// markAction is the audit action of mark's change to each status.
var markAction = map[computenode.Status]string{
	computenode.StatusNotReady: "markNodeNotReady",
	computenode.StatusDown:     "markNodeDown",
}

// auditNode writes the audit row of the monitor's change to a node through c, the change's
// transaction: before is the node as it was, the after image is read back.
func auditNode(ctx context.Context, c *ent.Client, action string, before *ent.ComputeNode) error {
	after, err := c.ComputeNode.Get(ctx, before.ID)
	if err != nil {
		return fmt.Errorf("read node %s back: %w", before.Name, err)
	}
	return audit.Write(ctx, c, audit.Entry{System: audit.NodeMonitor, Action: action, Subject: after,
		Before: before, After: after})
}

// inTx runs fn in a transaction of its own (dbtx.Run), committed when fn succeeds.
func (m *Monitor) inTx(ctx context.Context, fn func(*ent.Client) (bool, error)) (bool, error) {
	var ok bool
	_, err := dbtx.Run(ctx, m.client, func(c *ent.Client) error {
		var err error
		ok, err = fn(c)
		return err
	})
	return ok && err == nil, err
}
