package provision

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hibiken/asynq"

	"github.com/virtflow/virtflow/controllers/outbox"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/regionservice"
	"github.com/virtflow/virtflow/ent/virtualmachine"
	"github.com/virtflow/virtflow/store/dbtx"
	"github.com/virtflow/virtflow/store/rowlock"
	"github.com/virtflow/virtflow/store/truncate"
)

// TypeServiceReconcile recomputes a region service's status from its replicas (settle) in a
// transaction of its own, after the replica change that enqueued it committed.
const TypeServiceReconcile = "regionservice:reconcile"

// ServiceBurst is the window in which a region service's reconcile tasks collapse into one:
// the dedup key names the window, and the task runs at its end.
const ServiceBurst = 2 * time.Second

// ServicePayload is the payload of regionservice:reconcile.
type ServicePayload struct {
	Service int `json:"service"`
}

// enqueueServiceReconcile records regionservice:reconcile for the region service VM vm is a
// replica of (nothing for a VM that is none), in client's transaction, at the time now. Every request within
// one ServiceBurst window shares one dedup key, so a burst of replica changes gives one task,
// delayed to the window's end.
func enqueueServiceReconcile(ctx context.Context, client *ent.Client, vm int, now time.Time) error {
	sys := system(ctx)
	svc, err := client.VirtualMachine.Query().Where(virtualmachine.ID(vm)).QueryRegionService().WithRegion().Only(sys)
	if ent.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("region service of VM %d: %w", vm, err)
	}
	return enqueueServiceTask(ctx, client, svc, now)
}

// enqueueServiceTask records regionservice:reconcile for svc, due at the end of the
// ServiceBurst window now falls in.
func enqueueServiceTask(ctx context.Context, client *ent.Client, svc *ent.RegionService, now time.Time) error {
	queue := ""
	if svc.Edges.Region != nil {
		queue = Queue(svc.Edges.Region.Name)
	}
	end := now.Truncate(ServiceBurst).Add(ServiceBurst)
	payload, _ := json.Marshal(ServicePayload{Service: svc.ID})
	return outbox.Enqueue(ctx, client, outbox.Task{Kind: TypeServiceReconcile, Queue: queue, Payload: payload,
		DedupKey: fmt.Sprintf("%s:%d:%d", TypeServiceReconcile, svc.ID, end.UnixMilli()), Delay: end.Sub(now)})
}

func decodeService(t *asynq.Task) (ServicePayload, error) {
	var p ServicePayload
	if err := json.Unmarshal(t.Payload(), &p); err != nil || p.Service <= 0 {
		return p, fmt.Errorf("decode %s payload %q: %v: %w", t.Type(), t.Payload(), err, asynq.SkipRetry)
	}
	return p, nil
}

// reconcileService serves regionservice:reconcile: it locks the service row (the only row
// it locks: it reads the replicas without locking them, so it cannot take rows in the
// reverse order of placement) and settles it. A service that is gone or DELETING is left
// alone; settling twice writes nothing the second time: the task is idempotent.
func (h *Handlers) reconcileService(ctx context.Context, t *asynq.Task) error {
	p, err := decodeService(t)
	if err != nil {
		return err
	}
	sys := system(ctx)
	_, err = dbtx.Run(sys, h.Client, func(c *ent.Client) error {
		q := c.RegionService.Query().Where(regionservice.ID(p.Service))
		q.Modify(rowlock.ForUpdate)
		svc, err := q.Only(sys)
		if ent.IsNotFound(err) {
			h.log().Info("reconcile of a region service that is gone: nothing to do", "service", p.Service)
			return nil
		}
		if err == nil {
			err = settle(ctx, c, svc, h.now())
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("reconcile region service %d: %w", p.Service, err)
	}
	return nil
}

// serviceFailed records, when regionservice:reconcile failed for the last time, why on the
// service's statusReason (its status stays as it was).
func (h *Handlers) serviceFailed(ctx context.Context, t *asynq.Task, err error) {
	retried, _ := asynq.GetRetryCount(ctx)
	maxRetry, _ := asynq.GetMaxRetry(ctx)
	if retried < maxRetry && !errors.Is(err, asynq.SkipRetry) {
		h.log().Warn("task failed; will retry", "task", t.Type(), "attempt", retried+1, "err", err)
		return
	}
	p, derr := decodeService(t)
	if derr != nil {
		h.log().Error("task failed for good and names no region service", "task", t.Type(), "err", err)
		return
	}
	msg := strings.TrimSuffix(err.Error(), ": "+asynq.SkipRetry.Error())
	reason := fmt.Sprintf("status reconcile failed after %d attempts: %v", retried+1, msg)
	reason = truncate.String(reason, maxReason)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if _, uerr := h.Client.RegionService.Update().Where(regionservice.ID(p.Service)).
		SetStatusReason(reason).Save(system(ctx)); uerr != nil {
		h.log().Error("could not record a failed task on its region service", "service", p.Service, "err", uerr, "task_err", err)
		return
	}
	h.log().Error("task failed for good", "task", t.Type(), "service", p.Service, "err", err)
}
