package drain

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/hibiken/asynq"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/internal/rowlock"
	"github.com/virtflow/virtflow/outbox"
	"github.com/virtflow/virtflow/provision"
)

// TypeNodeDrain is the worker task that checks one draining node's progress (progressNode)
// and re-enqueues itself, CheckEvery later, while the drain is DRAINING; it stops once the
// node is DRAINED or FAILED (or no longer draining). drainNode enqueues the first one.
const TypeNodeDrain = "node:drain"

// CheckEvery is the delay between two node:drain checks of the same drain.
var CheckEvery = 5 * time.Second

// TaskPayload is node:drain's payload: the node, the drain it belongs to (its deadline in
// Unix nanoseconds: a new drain of the same node has another) and the check's sequence
// number within that drain (the dedup key, so a check re-run by Asynq enqueues its
// successor once).
type TaskPayload struct {
	Node     int   `json:"node"`
	Deadline int64 `json:"deadline"`
	Seq      int   `json:"seq"`
}

func (p TaskPayload) key() string {
	return fmt.Sprintf("%s:%d:%d:%d", TypeNodeDrain, p.Node, p.Deadline, p.Seq)
}

// enqueueCheck records a node:drain task in the transaction of c.
func enqueueCheck(ctx context.Context, c *ent.Client, p TaskPayload) error {
	payload, _ := json.Marshal(p)
	// On the queue of the node's region, like the VM tasks; "default" for a node in none.
	queue := ""
	r, err := c.ComputeNode.Query().Where(computenode.ID(p.Node)).QueryCluster().QueryRegion().Only(ctx)
	switch {
	case err == nil:
		queue = provision.Queue(r.Name)
	case !ent.IsNotFound(err):
		return fmt.Errorf("region of node %d: %w", p.Node, err)
	}
	return outbox.Enqueue(ctx, c, outbox.Task{Kind: TypeNodeDrain, Queue: queue, Payload: payload, DedupKey: p.key(), Delay: CheckEvery})
}

// Handler serves node:drain. Register it on the worker's mux with [Handler.Register] and
// call [Handler.Failed] from the Asynq ErrorHandler.
type Handler struct {
	Client *ent.Client
	Log    *slog.Logger
	// Now is the clock (time.Now when nil); tests move it.
	Now func() time.Time
}

// Register adds node:drain to mux.
func (h *Handler) Register(mux *asynq.ServeMux) { mux.Handle(TypeNodeDrain, h) }

func (h *Handler) log() *slog.Logger {
	if h.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return h.Log
}

func decodeTask(t *asynq.Task) (TaskPayload, error) {
	var p TaskPayload
	if err := json.Unmarshal(t.Payload(), &p); err != nil || p.Node <= 0 {
		return p, fmt.Errorf("decode %s payload %q: %v: %w", t.Type(), t.Payload(), err, asynq.SkipRetry)
	}
	return p, nil
}

// ProcessTask moves the drain of the task's node on in one transaction (the same
// progressNode the node monitor's Progress runs) and, while it stays DRAINING, records the
// next check in that transaction. A task of an older drain, or for a node gone or no longer
// draining, does nothing: the task is idempotent.
func (h *Handler) ProcessTask(ctx context.Context, t *asynq.Task) error {
	p, err := decodeTask(t)
	if err != nil {
		return err
	}
	now := time.Now()
	if h.Now != nil {
		now = h.Now()
	}
	sys := authz.SystemContext(ctx, component)
	tx, err := h.Client.Tx(sys)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	c := tx.Client()
	q := c.ComputeNode.Query().Where(computenode.ID(p.Node))
	q.Modify(rowlock.ForUpdate)
	n, err := q.Only(sys)
	if ent.IsNotFound(err) {
		_ = tx.Rollback()
		return nil
	}
	if err != nil {
		_ = tx.Rollback()
		return fmt.Errorf("load node %d: %w", p.Node, err)
	}
	if !draining(n) || n.DrainDeadline == nil || n.DrainDeadline.UnixNano() != p.Deadline {
		_ = tx.Rollback()
		h.log().Info("node:drain for a drain that is over: nothing to do", "node", p.Node, "drain_state", n.DrainState)
		return nil
	}
	done, err := progressNode(sys, c, p.Node, now)
	if err == nil && done {
		err = auditEnd(sys, c, n)
	}
	if err != nil {
		_ = tx.Rollback()
		return fmt.Errorf("drain progress of node %s: %w", n.Name, err)
	}
	if !done {
		next := p
		next.Seq++
		if err := enqueueCheck(sys, c, next); err != nil {
			_ = tx.Rollback()
			return err
		}
	}
	return tx.Commit()
}

// Failed records on the node's drainMessage that a node:drain task failed for good (its
// retries spent). The drain stays DRAINING; the node monitor's Progress is the safety net
// that still finishes or fails it at its deadline.
func (h *Handler) Failed(ctx context.Context, t *asynq.Task, err error) {
	if t.Type() != TypeNodeDrain {
		return
	}
	retried, _ := asynq.GetRetryCount(ctx)
	maxRetry, _ := asynq.GetMaxRetry(ctx)
	if retried < maxRetry && !errors.Is(err, asynq.SkipRetry) {
		return
	}
	p, derr := decodeTask(t)
	if derr != nil {
		h.log().Error("node:drain failed for good and names no node", "err", err)
		return
	}
	msg := strings.TrimSuffix(err.Error(), ": "+asynq.SkipRetry.Error())
	msg = clip(fmt.Sprintf("draining; progress check failed after %d attempts: %s (the node monitor keeps checking)", retried+1, msg), 4096)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	sys := authz.SystemContext(ctx, component)
	if _, uerr := h.Client.ComputeNode.Update().Where(computenode.ID(p.Node),
		computenode.DrainStateEQ(computenode.DrainStateDraining)).SetDrainMessage(msg).Save(sys); uerr != nil {
		h.log().Error("could not record a failed node:drain", "node", p.Node, "err", uerr, "task_err", err)
	}
}
