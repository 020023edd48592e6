package placement

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"time"

	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/domain/scheduler"
)

// Placed is a committed decision: where each VM of the group went.
type Placed struct {
	Decision scheduler.Decision
	// Snapshot is what the decision was made against (before it was committed).
	Snapshot *Snapshot
	// Attempts is how many decisions it took (1 unless rows changed under it).
	Attempts int
	// Held is, per node, what an exclusive flavor's VM took of its exclusive_mask (0 for a
	// shared flavor): the VM records it (HeldBy) and gives it back on release.
	Held map[int]int64
}

// HeldBy is what the VM placed on node holds of its exclusive_mask, and the NUMA node it
// owns (nil unless an exclusive NUMA_NODE flavor).
func (p *Placed) HeldBy(node int) (mask int64, numa *int) {
	mask = p.Held[node]
	if mask != 0 && mask != scheduler.ExclusiveHostBit {
		n := bits.TrailingZeros64(uint64(mask)) - 1
		numa = &n
	}
	return mask, numa
}

// placedNodes are the nodes of a decision's placements.
func placedNodes(d scheduler.Decision) []int {
	ids := make([]int, len(d.Placements))
	for i, p := range d.Placements {
		ids[i] = p.NodeID
	}
	return ids
}

// quotaIDs are the IDs of a tenant's quota rows in the snapshot.
func (s *Snapshot) quotaIDs(tenantID int) []int {
	var ids []int
	for k, q := range s.quotas {
		if k.TenantID == tenantID {
			ids = append(ids, q.id)
		}
	}
	return ids
}

// NodeName returns the name of a node of the snapshot.
func (p *Placed) NodeName(id int) string { return p.Snapshot.nodes[id].name }

// place decides where the request's VMs go and commits the decision in t: node
// allocations and quota usage. It decides again on a fresh snapshot when a row changed
// under the decision, at most MaxAttempts times. Creating the VMs themselves is the
// caller's part of the same transaction.
func (p *Placer) place(ctx context.Context, t *txn, req Request) (placed *Placed, err error) {
	if p.cfg.Observe != nil {
		start := time.Now()
		defer func() { p.cfg.Observe(time.Since(start), err) }()
	}
	r := req.scheduler()
	cfg := p.commitConfig()
	if req.Move {
		cfg = withoutQuota(cfg)
	}
	var last outcome
	// Decide on a snapshot loaded in the transaction without a cache, when the transaction
	// holds rows it wrote (an earlier placement of the same mutation: the cache must not
	// read them uncommitted), and for a move: the drain cordoned the VM's node in this very
	// transaction, which no cache can know yet, and the commit does not re-check cordons.
	fresh := p.cfg.Snapshots == nil || t.locks.wrote() || req.Move
	for attempt := 1; attempt <= p.cfg.MaxAttempts; attempt++ {
		var snap *Snapshot
		var d scheduler.Decision
		var err error
		if !fresh {
			d, snap, err = p.cfg.Snapshots.decide(ctx, t.c, req.TenantID, req.RegionID, r, cfg)
			var npe *scheduler.NoPlacementError
			switch {
			case errors.Is(err, errNotCached):
				fresh = true
			case errors.As(err, &npe):
				// A cached snapshot may be behind: only a fresh one may refuse.
				fresh = true
			case err != nil && !errors.Is(err, scheduler.ErrInvalidRequest):
				return nil, collision(err)
			}
		}
		if fresh {
			snap, err = Load(ctx, t.c, req.TenantID, req.RegionID)
			if err != nil {
				return nil, collision(err)
			}
			d, err = scheduler.Schedule(&snap.Snapshot, r, cfg)
		}
		if err != nil {
			return nil, scheduleError(err)
		}
		var quotaIDs []int
		var held map[int]int64
		last, quotaIDs, held, err = t.commit(ctx, snap, r, d, !req.Move, p.cfg.Scheduler.RequireQuota)
		if err != nil {
			if p.cfg.Snapshots != nil {
				p.cfg.Snapshots.invalidate(req.RegionID, placedNodes(d), append(snap.quotaIDs(req.TenantID), quotaIDs...))
			}
			return nil, collision(err)
		}
		if last == committed {
			return &Placed{Decision: d, Snapshot: snap, Attempts: attempt, Held: held}, nil
		}
		if p.cfg.Snapshots != nil {
			p.cfg.Snapshots.invalidate(req.RegionID, placedNodes(d), append(snap.quotaIDs(req.TenantID), quotaIDs...))
		}
		// The wait grows with the square of the attempt up to 64 ms (1, 4, 9 … 64, 64 … ms,
		// with jitter): many placements colliding on the same node rows drift apart instead
		// of colliding again, which linear waits of a few ms and 8 attempts did not do on a
		// loaded machine (two servers placing 1,000 replicas at once: TestPlacementTwoServers).
		if err := sleep(ctx, min(attempt*attempt, 64)); err != nil {
			return nil, err
		}
	}
	return nil, exhausted(last, p.cfg.MaxAttempts)
}

// scheduleError maps the scheduler's errors to API errors: NO_CAPACITY or QUOTA_EXCEEDED
// with the rejections counted per filter in extensions.reasons, VALIDATION for a request
// that makes no sense.
func scheduleError(err error) error {
	var npe *scheduler.NoPlacementError
	if errors.As(err, &npe) {
		code := apierr.CodeNoCapacity
		msg := "no node can take the request"
		if errors.Is(err, scheduler.ErrQuotaExceeded) {
			code = apierr.CodeQuotaExceeded
			msg = "the tenant's quota does not allow the request"
		}
		if npe.Placed > 0 {
			msg += fmt.Sprintf(" (%d of the group would fit)", npe.Placed)
		}
		reasons := map[string]any{}
		for k, v := range npe.Reasons {
			reasons[k] = v
		}
		return &apierr.Error{Code: code, Message: msg + ": " + reasonText(npe.Reasons),
			Extra: map[string]any{"reasons": reasons}}
	}
	if errors.Is(err, scheduler.ErrInvalidRequest) {
		return apierr.Validation("flavorID", "the flavor cannot be placed: %v", err)
	}
	return fmt.Errorf("schedule: %w", err)
}

// exhausted is the error after every attempt found a row changed under its decision: the
// capacity or quota went to concurrent placements.
func exhausted(last outcome, attempts int) error {
	code, msg, reason := apierr.CodeNoCapacity, "the last capacity was taken by concurrent placements", "Conflict"
	if last == quotaFull {
		code, msg, reason = apierr.CodeQuotaExceeded, "the last quota was taken by concurrent placements", "Quota"
	}
	return &apierr.Error{Code: code, Message: fmt.Sprintf("%s (%d attempts)", msg, attempts),
		Extra: map[string]any{"reasons": map[string]any{reason: attempts}}}
}

// reasonText renders rejection counts in name order: "CPUFit: 3, Ready: 1".
func reasonText(reasons map[string]int) string {
	keys := make([]string, 0, len(reasons))
	for k := range reasons {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := ""
	for i, k := range keys {
		if i > 0 {
			out += ", "
		}
		out += fmt.Sprintf("%s: %d", k, reasons[k])
	}
	if out == "" {
		return "no cluster in the region"
	}
	return out
}

// withoutQuota is c without the quota filter (and without requiring quotas): a VM that
// moves is not new usage, so its tenant's quota has no say.
func withoutQuota(c scheduler.Config) scheduler.Config {
	filters := c.Filters
	if filters == nil {
		filters = scheduler.DefaultFilters()
	}
	c.Filters = slices.DeleteFunc(slices.Clone(filters), func(f scheduler.Filter) bool {
		_, q := f.(scheduler.QuotaFit)
		return q
	})
	c.RequireQuota = false
	return c
}
