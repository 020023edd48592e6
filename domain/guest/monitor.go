package guest

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/virtflow/virtflow/controllers/alerting"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/domain/audit"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/event"
	"github.com/virtflow/virtflow/ent/schema/fieldtype"
	"github.com/virtflow/virtflow/ent/virtualmachine"
	"github.com/virtflow/virtflow/internal/platform/ratekey"
	"github.com/virtflow/virtflow/store/dbtx"
)

// EventCheck is the check name of the warning event of a guest that missed its deadline.
const EventCheck = "guest-ready"

// Overdue marks UNREACHABLE every VM whose guest has been BOOTING for longer than the
// deadline, each in a transaction of its own with its audit row (as audit.Guest) and a
// WARNING event (check guest-ready, on the VM's node, labelled with the VM's id and name).
// It returns how many it marked.
func (s *Service) Overdue(ctx context.Context) (int, error) {
	ctx = system(ctx)
	now := s.cfg.Now()
	cutoff := now.Add(-s.cfg.Deadline)
	late, err := s.client.VirtualMachine.Query().
		Where(virtualmachine.GuestStateEQ(virtualmachine.GuestStateBooting), virtualmachine.GuestStateChangedAtLT(cutoff)).
		WithNode().Limit(500).All(ctx)
	if err != nil {
		return 0, fmt.Errorf("overdue guests: %w", err)
	}
	n := 0
	for _, vm := range late {
		marked := false
		_, err := dbtx.Run(ctx, s.client, func(c *ent.Client) error {
			changed, err := c.VirtualMachine.Update().
				Where(virtualmachine.ID(vm.ID), virtualmachine.GuestStateEQ(virtualmachine.GuestStateBooting),
					virtualmachine.GuestStateChangedAtLT(cutoff)).
				SetGuestState(virtualmachine.GuestStateUnreachable).SetGuestStateChangedAt(now).Save(ctx)
			if err != nil || changed == 0 {
				return err
			}
			if err := auditVM(ctx, c, audit.Guest, "markGuestUnreachable", vm); err != nil {
				return err
			}
			ev := c.Event.Create().SetCheckName(EventCheck).SetStatus(event.StatusWarning).SetSource("guest").
				SetOutput(fmt.Sprintf("the guest of VM %s (id %d) did not report ready within %s of its start (BOOTING since %s)",
					vm.Name, vm.ID, s.cfg.Deadline, vm.GuestStateChangedAt.UTC().Format(time.RFC3339))).
				SetLabels(fieldtype.Labels{"vm": strconv.Itoa(vm.ID), "vm_name": vm.Name}).
				SetFirstSeenAt(now).SetLastSeenAt(now)
			if vm.Edges.Node != nil {
				ev.SetNodeID(vm.Edges.Node.ID)
			}
			if _, err := alerting.Record(ctx, c, ev); err != nil {
				return err
			}
			marked = true
			return nil
		})
		if err != nil {
			return n, fmt.Errorf("mark guest of VM %s unreachable: %w", vm.Name, err)
		}
		if marked {
			n++
		}
	}
	return n, nil
}

// Run calls Overdue every Config.Interval until ctx ends, logging failures. It runs in the
// worker: the deadline must be watched even when no request comes in.
func (s *Service) Run(ctx context.Context, log *slog.Logger) {
	t := time.NewTicker(s.cfg.Interval)
	defer t.Stop()
	for {
		if n, err := s.Overdue(ctx); err != nil && ctx.Err() == nil {
			log.Warn("guest deadline check failed", "err", err)
		} else if n > 0 {
			log.Info("guests missed their deadline", "unreachable", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// allow refuses a source that failed MaxFailuresPerSource times within FailureWindow.
func (s *Service) allow(ctx context.Context, ip string) error {
	if s.cfg.Redis == nil {
		return nil
	}
	key := s.cfg.RateLimitPrefix + "fail:" + ratekey.Source(ip)
	n, err := s.cfg.Redis.Get(ctx, key).Int()
	if err != nil || n < MaxFailuresPerSource {
		return nil // Redis down: the credential check still decides
	}
	wait, _ := s.cfg.Redis.PTTL(ctx, key).Result()
	if wait <= 0 {
		wait = FailureWindow
	}
	return &apierr.Error{Code: CodeRateLimited, Message: "too many calls with a bad guest credential; try again later",
		Extra: map[string]any{"retryAfterSeconds": int((wait + time.Second - 1) / time.Second)}}
}

// fail counts a failed call against its source.
func (s *Service) fail(ctx context.Context, ip string) {
	if s.cfg.Redis == nil {
		return
	}
	key := s.cfg.RateLimitPrefix + "fail:" + ratekey.Source(ip)
	pipe := s.cfg.Redis.TxPipeline()
	pipe.Incr(ctx, key)
	pipe.PExpire(ctx, key, FailureWindow)
	_, _ = pipe.Exec(ctx)
}
