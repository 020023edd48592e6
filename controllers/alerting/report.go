package alerting

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/hibiken/asynq"

	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/check"
	"github.com/virtflow/virtflow/ent/cluster"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/event"
	"github.com/virtflow/virtflow/ent/schema/fieldtype"
	"github.com/virtflow/virtflow/ent/virtualmachine"
	"github.com/virtflow/virtflow/store/dbtx"
	"github.com/virtflow/virtflow/store/truncate"
)

// MaxBatch bounds the events of one reportEvents call.
const MaxBatch = 1000

// EventInput is one check result reported by an agent.
type EventInput struct {
	NodeID    int
	CheckName string
	Status    event.Status
	Output    string
	CheckID   *int
	Labels    fieldtype.Labels
	Source    string
}

// Report stores a batch of check results as the viewer of ctx — ent privacy lets an agent
// file events of its own node only (another node's is FORBIDDEN) — and records, in the same
// transaction c, the task that runs the rules on them. Outputs are cut to their first line.
func Report(ctx context.Context, c *ent.Client, in []EventInput) ([]*ent.Event, error) {
	if len(in) > MaxBatch {
		return nil, apierr.Validation("input", "at most %d events per call, got %d", MaxBatch, len(in))
	}
	if len(in) == 0 {
		return []*ent.Event{}, nil
	}
	builders := make([]*ent.EventCreate, len(in))
	for i, e := range in {
		if strings.TrimSpace(e.CheckName) == "" {
			return nil, apierr.Validation(fmt.Sprintf("input[%d].checkName", i), "must not be empty")
		}
		if e.NodeID <= 0 {
			return nil, apierr.Validation(fmt.Sprintf("input[%d].nodeID", i), "must name a node")
		}
		if err := event.StatusValidator(e.Status); err != nil {
			return nil, apierr.Validation(fmt.Sprintf("input[%d].status", i), "%v", err)
		}
		if err := e.Labels.Validate(); err != nil {
			return nil, apierr.Validation(fmt.Sprintf("input[%d].labels", i), "%v", err)
		}
		out, _, _ := strings.Cut(e.Output, "\n")
		src := e.Source
		if src == "" {
			src = "agent"
		}
		builders[i] = c.Event.Create().SetCheckName(truncate.String(e.CheckName, 128)).SetStatus(e.Status).
			SetOutput(truncate.String(out, 4096)).SetSource(src).SetNodeID(e.NodeID).SetLabels(e.Labels)
	}
	events, err := c.Event.CreateBulk(builders...).Save(ctx)
	if err != nil {
		return nil, err
	}
	ids := make([]int, len(events))
	for i, ev := range events {
		ids[i] = ev.ID
		if cid := in[i].CheckID; cid != nil {
			// The check is a reference the agent may not read itself: linked as the system,
			// once privacy accepted the event.
			if err := c.Event.UpdateOneID(ev.ID).SetCheckID(*cid).Exec(system(ctx)); err != nil {
				if ent.IsConstraintError(err) || ent.IsNotFound(err) {
					return nil, apierr.Validation(fmt.Sprintf("input[%d].checkID", i), "no check %d", *cid)
				}
				return nil, err
			}
		}
	}
	return events, enqueueEvents(ctx, c, ids)
}

// Record stores one event made by VirtFlow itself (the node monitor, a failed task) with
// c — the caller's transaction, when it has one — and the task that runs the rules on it.
func Record(ctx context.Context, c *ent.Client, ev *ent.EventCreate) (*ent.Event, error) {
	e, err := ev.Save(ctx)
	if err != nil {
		return nil, fmt.Errorf("record event: %w", err)
	}
	return e, enqueueEvents(ctx, c, []int{e.ID})
}

// ChecksForNode returns the enabled checks node id runs: those naming it or its cluster,
// and those whose label selector its labels match. The node is read as the viewer of ctx
// (an agent reads its own node only: another is NOT_FOUND); the checks as the system.
func ChecksForNode(ctx context.Context, c *ent.Client, id int) ([]*ent.Check, error) {
	ok, err := c.ComputeNode.Query().Where(computenode.ID(id)).Exist(ctx)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, apierr.NotFound("compute node %d not found", id)
	}
	sys := system(ctx) // the node's cluster and labels: an agent may not read its cluster
	n, err := c.ComputeNode.Query().Where(computenode.ID(id)).WithCluster().Only(sys)
	if err != nil {
		return nil, err
	}
	all, err := c.Check.Query().Where(check.Enabled(true)).WithNodes(func(q *ent.ComputeNodeQuery) { q.Select(computenode.FieldID) }).
		WithClusters(func(q *ent.ClusterQuery) { q.Select(cluster.FieldID) }).Order(ent.Asc(check.FieldName)).All(sys)
	if err != nil {
		return nil, err
	}
	var out []*ent.Check
	for _, ch := range all {
		if appliesTo(ch, n) {
			out = append(out, ch)
		}
	}
	return out, nil
}

func appliesTo(ch *ent.Check, n *ent.ComputeNode) bool {
	for _, x := range ch.Edges.Nodes {
		if x.ID == n.ID {
			return true
		}
	}
	for _, x := range ch.Edges.Clusters {
		if n.Edges.Cluster != nil && x.ID == n.Edges.Cluster.ID {
			return true
		}
	}
	return len(ch.LabelSelector) > 0 && labelsMatch(ch.LabelSelector, n.Labels)
}

// NodeHeartbeatCheck is the check name of the events about a node's heartbeats: the node
// monitor's NOT_READY/DOWN (nodemonitor.EventCheck) and the SUCCESS of a node READY again.
const NodeHeartbeatCheck = "node-heartbeat"

// ClusterHeartbeatCheck is the check name of the cross-cluster watch's events: a cluster
// whose nodes all fell silent (CRITICAL, filed on the cluster) and back (SUCCESS).
const ClusterHeartbeatCheck = "cluster-heartbeat"

// TaskFailedCheck is the check name of the events filed for worker tasks that failed for good.
const TaskFailedCheck = "task-failed"

// TaskFailed is an Asynq ErrorHandler: a task that failed for good (its retries spent, or
// not retriable) becomes a CRITICAL event "task-failed" — on the node of its VM when the
// payload names one — so rules can raise an alert for it.
func TaskFailed(c *ent.Client) func(ctx context.Context, t *asynq.Task, err error) {
	return func(ctx context.Context, t *asynq.Task, err error) {
		retried, _ := asynq.GetRetryCount(ctx)
		maxRetry, _ := asynq.GetMaxRetry(ctx)
		if retried < maxRetry && !errors.Is(err, asynq.SkipRetry) {
			return
		}
		ctx = system(context.WithoutCancel(ctx))
		var p struct {
			VM int `json:"vm"`
		}
		_ = json.Unmarshal(t.Payload(), &p)
		msg := fmt.Sprintf("task %s failed after %d attempts: %v", t.Type(), retried+1, err)
		_, _ = dbtx.Run(ctx, c, func(c *ent.Client) error {
			cr := c.Event.Create().SetCheckName(TaskFailedCheck).SetStatus(event.StatusCritical).SetSource("worker").
				SetOutput(truncate.String(msg, 4096)).SetLabels(fieldtype.Labels{"task": t.Type()})
			if p.VM > 0 {
				if n, err := c.VirtualMachine.Query().Where(virtualmachine.ID(p.VM)).QueryNode().OnlyID(ctx); err == nil {
					cr.SetNodeID(n)
				}
			}
			_, err := Record(ctx, c, cr)
			return err
		})
	}
}
