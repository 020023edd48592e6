// Package metrics exports VirtFlow's domain state to Prometheus: VMs by status, compute nodes
// by status and their heartbeat lag, the transactional outbox's backlog, the Asynq queues'
// depth and latency and the event rules' hook deliveries. The values are read from the
// database and Redis at each scrape (a few GROUP BY queries), so every server and worker
// reports the same numbers and nothing has to be kept in step with the data.
//
// What only a process sees is counted in the process (events.go): placements (latency, and
// failures by reason) and the subscriptions it serves.
package metrics

import (
	"context"
	"log/slog"
	"time"

	"github.com/hibiken/asynq"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/hookdelivery"
	"github.com/virtflow/virtflow/ent/outboxtask"
	"github.com/virtflow/virtflow/ent/virtualmachine"
)

// ScrapeTimeout bounds the queries of one scrape.
const ScrapeTimeout = 5 * time.Second

var (
	vmsDesc   = prometheus.NewDesc("virtflow_vms", "Virtual machines by status.", []string{"status"}, nil)
	nodesDesc = prometheus.NewDesc("virtflow_nodes", "Compute nodes by status.", []string{"status"}, nil)
	lagDesc   = prometheus.NewDesc("virtflow_node_heartbeat_lag_max_seconds",
		"The longest time since a READY compute node's last heartbeat.", nil, nil)
	outboxDesc = prometheus.NewDesc("virtflow_outbox_pending_tasks",
		"Outbox tasks committed but not yet handed to the queue.", nil, nil)
	outboxAgeDesc = prometheus.NewDesc("virtflow_outbox_oldest_pending_age_seconds",
		"Age of the oldest outbox task not yet handed to the queue (0 when none).", nil, nil)
	queueDesc        = prometheus.NewDesc("virtflow_queue_tasks", "Asynq tasks by queue and state.", []string{"queue", "state"}, nil)
	queueLatencyDesc = prometheus.NewDesc("virtflow_queue_latency_seconds",
		"How long the oldest pending task of a queue has waited.", []string{"queue"}, nil)
	hooksDesc = prometheus.NewDesc("virtflow_hook_deliveries",
		"Event-rule hook deliveries by status (PENDING, DELIVERED, FAILED).", []string{"status"}, nil)
	upDesc = prometheus.NewDesc("virtflow_domain_scrape_success",
		"1 when the domain metrics could be read from the database and Redis, 0 otherwise.", []string{"source"}, nil)
)

// Collector is a prometheus.Collector of the domain metrics.
type Collector struct {
	Client *ent.Client
	// Queues is the Asynq inspector; nil leaves out the queue metrics.
	Queues *asynq.Inspector
	Log    *slog.Logger
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// New returns a Collector over client and the Asynq Redis redis (nil: no queue metrics).
func New(client *ent.Client, redis asynq.RedisConnOpt, log *slog.Logger) *Collector {
	c := &Collector{Client: client, Log: log}
	if redis != nil {
		c.Queues = asynq.NewInspector(redis)
	}
	return c
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{vmsDesc, nodesDesc, lagDesc, outboxDesc, outboxAgeDesc, queueDesc, queueLatencyDesc, hooksDesc, upDesc} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(authz.SystemContext(context.Background(), "metrics"), ScrapeTimeout)
	defer cancel()
	ok := 1.0
	if err := c.collectDB(ctx, ch); err != nil {
		ok = 0
		if c.Log != nil {
			c.Log.Warn("domain metrics: database", "err", err)
		}
	}
	ch <- prometheus.MustNewConstMetric(upDesc, prometheus.GaugeValue, ok, "database")
	if c.Queues != nil {
		ok = 1
		if err := c.collectQueues(ch); err != nil {
			ok = 0
			if c.Log != nil {
				c.Log.Warn("domain metrics: queues", "err", err)
			}
		}
		ch <- prometheus.MustNewConstMetric(upDesc, prometheus.GaugeValue, ok, "redis")
	}
}

func (c *Collector) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

type statusCount struct {
	Status string `json:"status"`
	Count  int    `json:"count"`
}

func (c *Collector) collectDB(ctx context.Context, ch chan<- prometheus.Metric) error {
	var vms, nodes []statusCount
	if err := c.Client.VirtualMachine.Query().GroupBy(virtualmachine.FieldStatus).Aggregate(ent.Count()).Scan(ctx, &vms); err != nil {
		return err
	}
	for _, v := range vms {
		ch <- prometheus.MustNewConstMetric(vmsDesc, prometheus.GaugeValue, float64(v.Count), v.Status)
	}
	if err := c.Client.ComputeNode.Query().GroupBy(computenode.FieldStatus).Aggregate(ent.Count()).Scan(ctx, &nodes); err != nil {
		return err
	}
	for _, n := range nodes {
		ch <- prometheus.MustNewConstMetric(nodesDesc, prometheus.GaugeValue, float64(n.Count), n.Status)
	}
	now := c.now()
	lag := 0.0
	oldest, err := c.Client.ComputeNode.Query().
		Where(computenode.StatusEQ(computenode.StatusReady), computenode.LastHeartbeatAtNotNil()).
		Order(ent.Asc(computenode.FieldLastHeartbeatAt)).First(ctx)
	switch {
	case ent.IsNotFound(err):
	case err != nil:
		return err
	case oldest.LastHeartbeatAt != nil:
		lag = max(0, now.Sub(*oldest.LastHeartbeatAt).Seconds())
	}
	ch <- prometheus.MustNewConstMetric(lagDesc, prometheus.GaugeValue, lag)
	pending := c.Client.OutboxTask.Query().Where(outboxtask.DispatchedAtIsNil())
	n, err := pending.Clone().Count(ctx)
	if err != nil {
		return err
	}
	ch <- prometheus.MustNewConstMetric(outboxDesc, prometheus.GaugeValue, float64(n))
	age := 0.0
	first, err := pending.Order(ent.Asc(outboxtask.FieldCreatedAt)).First(ctx)
	switch {
	case ent.IsNotFound(err):
	case err != nil:
		return err
	default:
		age = max(0, now.Sub(first.CreatedAt).Seconds())
	}
	ch <- prometheus.MustNewConstMetric(outboxAgeDesc, prometheus.GaugeValue, age)
	var hooks []statusCount
	if err := c.Client.HookDelivery.Query().GroupBy(hookdelivery.FieldStatus).Aggregate(ent.Count()).Scan(ctx, &hooks); err != nil {
		return err
	}
	for _, h := range hooks {
		ch <- prometheus.MustNewConstMetric(hooksDesc, prometheus.GaugeValue, float64(h.Count), h.Status)
	}
	return nil
}

func (c *Collector) collectQueues(ch chan<- prometheus.Metric) error {
	queues, err := c.Queues.Queues()
	if err != nil {
		return err
	}
	for _, q := range queues {
		info, err := c.Queues.GetQueueInfo(q)
		if err != nil {
			return err
		}
		for state, v := range map[string]int{"pending": info.Pending, "active": info.Active, "scheduled": info.Scheduled,
			"retry": info.Retry, "archived": info.Archived} {
			ch <- prometheus.MustNewConstMetric(queueDesc, prometheus.GaugeValue, float64(v), q, state)
		}
		ch <- prometheus.MustNewConstMetric(queueLatencyDesc, prometheus.GaugeValue, info.Latency.Seconds(), q)
	}
	return nil
}
