package livestatus

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"sync"
	"time"

	"entgo.io/ent/dialect/sql"
	"github.com/redis/go-redis/v9"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/alert"
	"github.com/virtflow/virtflow/ent/assignment"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/regionservice"
	"github.com/virtflow/virtflow/ent/virtualmachine"
)

// watched are, per entity, the fields whose change is published (nil: any change).
var watched = map[string][]string{
	string(VirtualMachine): {virtualmachine.FieldStatus, virtualmachine.FieldStatusReason, virtualmachine.FieldGuestState,
		virtualmachine.FieldGuestHostname, virtualmachine.FieldGuestAddresses},
	string(ComputeNode): {computenode.FieldStatus, computenode.FieldStatusReason, computenode.FieldSchedulable,
		computenode.FieldCordonReason, computenode.FieldDrainState, computenode.FieldDrainMessage},
	string(RegionService): {regionservice.FieldStatus, regionservice.FieldStatusReason},
	string(Assignment):    nil,
	string(Alert):         nil,
}

// watchedEdges are edges whose change is published too: a VM moved to another node.
var watchedEdges = map[string][]string{
	string(VirtualMachine): {virtualmachine.EdgeNode},
}

// publishTimeout bounds one PUBLISH after a commit.
const publishTimeout = 5 * time.Second

// Publisher publishes status events to Redis.
type Publisher struct {
	// Channel is where events go (default Channel).
	Channel string
	rdb     redis.UniversalClient
	log     *slog.Logger
	txs     sync.Map // ent.Tx.Key() → *pending: the open transactions with changes to publish
}

// Install registers the publishing hook on client (and so on every transaction opened from
// it): creates and updates of VMs, nodes and region services that change a watched field,
// and every create or update of an assignment, are published to Channel once committed.
// Deletes are not published: a subscriber could not read the record any more.
//
// Changes to what a credential grants (see credentials.go) are published too, as
// Credentials events naming the users concerned, so that every replica ends the
// connections they no longer entitle.
func Install(client *ent.Client, rdb redis.UniversalClient, log *slog.Logger) *Publisher {
	p := &Publisher{Channel: Channel, rdb: rdb, log: log}
	client.Use(p.hook)
	return p
}

// mutation is what the hook needs of a generated mutation beyond ent.Mutation.
type mutation interface {
	ent.Mutation
	ID() (int, bool)
	IDs(context.Context) ([]int, error)
	Client() *ent.Client
	Tx() (*ent.Tx, error)
}

func (p *Publisher) hook(next ent.Mutator) ent.Mutator {
	return ent.MutateFunc(func(ctx context.Context, m ent.Mutation) (ent.Value, error) {
		mm, ok := m.(mutation)
		if !ok {
			return next.Mutate(ctx, m)
		}
		if _, ok := credentialWatched[m.Type()]; ok {
			return p.credentialHook(ctx, next, mm)
		}
		if !relevant(ctx, m) {
			return next.Mutate(ctx, m)
		}
		var ids []int
		if m.Op().Is(ent.OpUpdate) {
			// The rows an update-many touches are known only before it runs.
			var err error
			if ids, err = mm.IDs(ctx); err != nil {
				return nil, fmt.Errorf("livestatus: rows of %s update: %w", m.Type(), err)
			}
		}
		v, err := next.Mutate(ctx, m)
		if err != nil {
			return v, err
		}
		if id, ok := mm.ID(); ok && !m.Op().Is(ent.OpUpdate) {
			ids = []int{id}
		}
		if len(ids) == 0 {
			return v, nil
		}
		if tx, err := mm.Tx(); err == nil {
			p.pendingIn(tx).add(Type(m.Type()), ids)
			return v, nil
		}
		events, err := route(authz.Unrestricted(ctx), mm.Client(), Type(m.Type()), ids)
		if err != nil {
			return nil, err
		}
		p.Publish(context.WithoutCancel(ctx), events...)
		return v, nil
	})
}

// pending are the rows a transaction changed, by type, routed and published when it
// commits: a row changed twice (a VM created, then placed) is read and published once.
type pending struct {
	mu    sync.Mutex
	rows  map[Type][]int
	keys  []Type  // in order of first change
	ready []Event // events routed already (Credentials)
}

func (q *pending) addEvents(events []Event) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.ready = append(q.ready, events...)
}

func (q *pending) add(typ Type, ids []int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if _, ok := q.rows[typ]; !ok {
		q.keys = append(q.keys, typ)
	}
	for _, id := range ids {
		if !slices.Contains(q.rows[typ], id) {
			q.rows[typ] = append(q.rows[typ], id)
		}
	}
}

// pendingIn returns the pending rows of tx, registering on its first change the hooks that
// route them (one query per type, inside the transaction, just before it commits) and
// publish the events once it committed, or forget them when it rolls back.
func (p *Publisher) pendingIn(tx *ent.Tx) *pending {
	q := &pending{rows: map[Type][]int{}}
	key := tx.Key() // every mutation's Tx() is a new *ent.Tx of the same transaction
	if prior, loaded := p.txs.LoadOrStore(key, q); loaded {
		return prior.(*pending)
	}
	tx.OnCommit(func(next ent.Committer) ent.Committer {
		return ent.CommitFunc(func(ctx context.Context, tx *ent.Tx) error {
			defer p.txs.Delete(key)
			q.mu.Lock()
			defer q.mu.Unlock()
			events := q.ready
			for _, typ := range q.keys {
				// Publishing is best effort, as after the commit: a failed read costs the
				// events of that type (subscribers recover by reading), never the commit.
				e, err := route(authz.Unrestricted(ctx), tx.Client(), typ, q.rows[typ])
				if err != nil {
					p.log.Warn("route status events", "type", typ, "err", err)
					continue
				}
				events = append(events, e...)
			}
			if err := next.Commit(ctx, tx); err != nil {
				return err
			}
			p.Publish(context.WithoutCancel(ctx), events...)
			return nil
		})
	})
	tx.OnRollback(func(next ent.Rollbacker) ent.Rollbacker {
		return ent.RollbackFunc(func(ctx context.Context, tx *ent.Tx) error {
			p.txs.Delete(key)
			return next.Rollback(ctx, tx)
		})
	})
	return q
}

// relevant reports whether m is a create, or an update of a watched field or edge, of a
// watched entity. An update of one row that sets watched fields to the values they already
// have (a heartbeat repeating READY) is not a change.
func relevant(ctx context.Context, m ent.Mutation) bool {
	fields, ok := watched[m.Type()]
	if !ok || m.Op().Is(ent.OpDelete|ent.OpDeleteOne) {
		return false
	}
	if fields == nil || m.Op().Is(ent.OpCreate) {
		return true
	}
	if len(m.ClearedFields()) > 0 || len(m.ClearedEdges()) > 0 {
		for _, f := range m.ClearedFields() {
			if slices.Contains(fields, f) {
				return true
			}
		}
		for _, e := range m.ClearedEdges() {
			if slices.Contains(watchedEdges[m.Type()], e) {
				return true
			}
		}
	}
	for _, e := range m.AddedEdges() {
		if slices.Contains(watchedEdges[m.Type()], e) {
			return true
		}
	}
	for _, f := range m.Fields() {
		if !slices.Contains(fields, f) {
			continue
		}
		if !m.Op().Is(ent.OpUpdateOne) {
			return true
		}
		v, _ := m.Field(f)
		old, err := m.OldField(ctx, f) // one query per mutation, cached by ent
		if err != nil || !reflect.DeepEqual(old, v) {
			return true
		}
	}
	return false
}

// Publish sends events to p.Channel now. Failures are logged, not returned: the change is
// committed already, and subscribers recover by reading the current state.
func (p *Publisher) Publish(ctx context.Context, events ...Event) {
	ctx, cancel := context.WithTimeout(ctx, publishTimeout)
	defer cancel()
	for _, e := range events {
		if err := p.rdb.Publish(ctx, p.Channel, e.encode()).Err(); err != nil {
			p.log.Warn("publish status event", "type", e.Type, "id", e.ID, "err", err)
		}
	}
}

// routeRow is what subscribers filter on, read for the changed rows.
type routeRow struct {
	ID      int `sql:"id"`
	Tenant  int `sql:"tenant_id"`
	Cluster int `sql:"cluster_id"`
	Node    int `sql:"node_id"`
}

// route reads the tenant, cluster and node of the changed rows, in one query, through c (the
// transaction's client, just before it commits, or the mutation's own).
func route(ctx context.Context, c *ent.Client, typ Type, ids []int) ([]Event, error) {
	cols := func(tenant, cluster, node string) func(*sql.Selector) {
		return func(s *sql.Selector) {
			s.Select(s.C("id"))
			for _, col := range [][2]string{{tenant, "tenant_id"}, {cluster, "cluster_id"}, {node, "node_id"}} {
				expr := "0"
				switch col[0] {
				case "":
				case "id":
					expr = s.C("id")
				default:
					expr = fmt.Sprintf("COALESCE(%s, 0)", s.C(col[0]))
				}
				s.AppendSelectExprAs(sql.Expr(expr), col[1])
			}
		}
	}
	var (
		rows []routeRow
		err  error
	)
	switch typ {
	case VirtualMachine:
		err = c.VirtualMachine.Query().Where(virtualmachine.IDIn(ids...)).
			Modify(cols(virtualmachine.TenantColumn, virtualmachine.ClusterColumn, virtualmachine.NodeColumn)).Scan(ctx, &rows)
	case ComputeNode:
		err = c.ComputeNode.Query().Where(computenode.IDIn(ids...)).
			Modify(cols("", computenode.ClusterColumn, "id")).Scan(ctx, &rows)
	case RegionService:
		err = c.RegionService.Query().Where(regionservice.IDIn(ids...)).
			Modify(cols(regionservice.TenantColumn, "", "")).Scan(ctx, &rows)
	case Assignment:
		err = c.Assignment.Query().Where(assignment.IDIn(ids...)).
			Modify(cols("", "", assignment.NodeColumn)).Scan(ctx, &rows)
	case Alert:
		err = c.Alert.Query().Where(alert.IDIn(ids...)).
			Modify(cols("", "", alert.NodeColumn)).Scan(ctx, &rows)
	}
	if err != nil {
		return nil, fmt.Errorf("livestatus: route %s events: %w", typ, err)
	}
	out := make([]Event, len(rows))
	for i, r := range rows {
		out[i] = Event{Type: typ, ID: r.ID, TenantID: r.Tenant, ClusterID: r.Cluster, NodeID: r.Node}
	}
	return out, nil
}
