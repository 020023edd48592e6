package placement

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/computenode"
)

// nodeStateFields are the compute node fields a refresh reads again (nodeState); a change
// of another field a snapshot holds (the name) or of an edge makes the regions stale.
var nodeStateFields = []string{
	computenode.FieldStatus, computenode.FieldSchedulable, computenode.FieldLabels,
	computenode.FieldCPUCapacity, computenode.FieldCPUAllocated,
	computenode.FieldMemoryCapacityMB, computenode.FieldMemoryAllocatedMB,
	computenode.FieldDiskCapacityGB, computenode.FieldDiskAllocatedGB,
}

// layoutTypes are the entities a snapshot reads besides nodes and quotas: any change of one
// makes every cached region stale.
var layoutTypes = map[string]bool{
	ent.TypeCluster: true, ent.TypeRegion: true, ent.TypeHost: true, ent.TypeRack: true,
	ent.TypeFloor: true, ent.TypePowerZone: true, ent.TypeNetworkZone: true, ent.TypeRackZone: true,
	ent.TypeAvailabilityZone: true, ent.TypeHostGroup: true, ent.TypeProvider: true,
}

// rowsKey marks the context of placement's own conditional updates of nodes and quotas
// with the row IDs they write (so that the hook need not query them) and whether the
// decision was reserved in the cache already (rows).
type rowsKey struct{}

// rows is what rowsKey carries.
type rows struct {
	ids      []int
	reserved bool
}

// withRows is ctx saying that the update run with it writes the rows ids, reserved in the
// cache or not.
func withRows(ctx context.Context, reserved bool, ids ...int) context.Context {
	return context.WithValue(ctx, rowsKey{}, rows{ids: ids, reserved: reserved})
}

// idsMutation is what the hook needs of a generated mutation beyond ent.Mutation.
type idsMutation interface {
	ent.Mutation
	ID() (int, bool)
	IDs(context.Context) ([]int, error)
	Tx() (*ent.Tx, error)
}

// publishTimeout bounds one PUBLISH after a commit.
const publishTimeout = 5 * time.Second

// hook notices the changes that make cached snapshots stale and announces them once
// committed (see Snapshots).
func (s *Snapshots) hook(next ent.Mutator) ent.Mutator {
	return ent.MutateFunc(func(ctx context.Context, m ent.Mutation) (ent.Value, error) {
		mm, ok := m.(idsMutation)
		typ := m.Type()
		if !ok || (typ != ent.TypeComputeNode && typ != ent.TypeQuota && !layoutTypes[typ]) {
			return next.Mutate(ctx, m)
		}
		e := snapshotEvent{Origin: s.origin}
		switch {
		case layoutTypes[typ]:
			e.All = true
		case typ == ent.TypeComputeNode && (m.Op().Is(ent.OpCreate|ent.OpDelete|ent.OpDeleteOne) || layoutChange(m)):
			e.All = true
		case typ == ent.TypeComputeNode && !nodeStateChange(ctx, m):
			return next.Mutate(ctx, m)
		case typ == ent.TypeQuota && m.Op().Is(ent.OpDelete):
			e.All = true
		}
		var ids []int
		if !e.All && m.Op().Is(ent.OpUpdate) {
			if v, ok := ctx.Value(rowsKey{}).(rows); ok {
				ids = v.ids
			} else {
				// The rows an update-many touches are known only before it runs.
				var err error
				if ids, err = mm.IDs(ctx); err != nil {
					return nil, fmt.Errorf("placement: rows of %s update: %w", typ, err)
				}
			}
		}
		v, err := next.Mutate(ctx, m)
		if err != nil {
			return v, err
		}
		if id, ok := mm.ID(); ok && !m.Op().Is(ent.OpUpdate) {
			ids = []int{id}
		}
		if !e.All {
			if len(ids) == 0 {
				return v, nil
			}
			if typ == ent.TypeComputeNode {
				e.Nodes = ids
			} else {
				e.Quotas = ids
			}
		}
		// placement's own conditional updates were reserved in this process's cache when
		// decided (Snapshots.decide): once committed, only the other processes need to hear.
		own, _ := ctx.Value(rowsKey{}).(rows)
		s.afterCommit(ctx, mm, e, !own.reserved)
		return v, nil
	})
}

// layoutChange reports a node update that changes more than nodeStateFields: its name or
// an edge (host, cluster, zone, providers).
func layoutChange(m ent.Mutation) bool {
	if len(m.AddedEdges()) > 0 || len(m.RemovedEdges()) > 0 || len(m.ClearedEdges()) > 0 {
		return true
	}
	return slices.Contains(m.Fields(), computenode.FieldName)
}

// nodeStateChange reports a node update that changes a field of nodeStateFields. An update
// of one row that sets them to the values they have (a report repeating READY) is not one.
func nodeStateChange(ctx context.Context, m ent.Mutation) bool {
	if len(m.AddedFields()) > 0 {
		return true // allocations
	}
	for _, f := range m.ClearedFields() {
		if slices.Contains(nodeStateFields, f) {
			return true
		}
	}
	for _, f := range m.Fields() {
		if !slices.Contains(nodeStateFields, f) {
			continue
		}
		if !m.Op().Is(ent.OpUpdateOne) {
			return true
		}
		v, _ := m.Field(f)
		old, err := m.OldField(ctx, f) // one query per mutation, cached by ent (and shared with livestatus)
		if err != nil || !reflect.DeepEqual(old, v) {
			return true
		}
	}
	return false
}

// afterCommit applies e to this process's cache (unless local is false) and publishes it to
// the others once the transaction of m commits, or at once outside a transaction; on
// rollback it applies e here, which has the rows read again.
func (s *Snapshots) afterCommit(ctx context.Context, m idsMutation, e snapshotEvent, local bool) {
	tx, err := m.Tx()
	if err != nil {
		s.announce(context.WithoutCancel(ctx), e, local)
		return
	}
	tx.OnCommit(func(next ent.Committer) ent.Committer {
		return ent.CommitFunc(func(ctx context.Context, tx *ent.Tx) error {
			if err := next.Commit(ctx, tx); err != nil {
				return err
			}
			s.announce(context.WithoutCancel(ctx), e, local)
			return nil
		})
	})
	// Rolled back: what the decision reserved in this process's cache is read again.
	tx.OnRollback(func(next ent.Rollbacker) ent.Rollbacker {
		return ent.RollbackFunc(func(ctx context.Context, tx *ent.Tx) error {
			err := next.Rollback(ctx, tx)
			s.apply(e) // here only: nothing changed for the others
			return err
		})
	})
}

// announce applies e here (when local) and publishes it: through Run's publisher, which
// merges what queued up into one message off the committing request's path, or at once
// when there is none (or its queue is full).
func (s *Snapshots) announce(ctx context.Context, e snapshotEvent, local bool) {
	if local {
		s.apply(e)
	}
	if s.publishing.Load() {
		select {
		case s.outbox <- e:
			return
		default:
		}
	}
	s.publish(ctx, e)
}

// publish sends e on the channel. A failed publish is logged: the change is committed
// already, and the other processes catch up at their next full read (MaxAge).
func (s *Snapshots) publish(ctx context.Context, e snapshotEvent) {
	b, _ := json.Marshal(e)
	ctx, cancel := context.WithTimeout(ctx, publishTimeout)
	defer cancel()
	if err := s.cfg.Redis.Publish(ctx, s.cfg.Channel, b).Err(); err != nil {
		s.cfg.Log.Warn("publish placement snapshot event", "err", err)
	}
}

// publisher publishes the queued events until ctx ends, each batch that queued up while
// the last was sent as one message.
func (s *Snapshots) publisher(ctx context.Context) {
	defer s.publishing.Store(false)
	for {
		var e snapshotEvent
		select {
		case <-ctx.Done():
			return
		case e = <-s.outbox:
		}
	merge:
		for len(e.Nodes)+len(e.Quotas) < 1000 {
			select {
			case more := <-s.outbox:
				e.All = e.All || more.All
				e.Nodes = append(e.Nodes, more.Nodes...)
				e.Quotas = append(e.Quotas, more.Quotas...)
			default:
				break merge
			}
		}
		if e.All {
			e.Nodes, e.Quotas = nil, nil
		}
		s.publish(context.WithoutCancel(ctx), e)
	}
}
