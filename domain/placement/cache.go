package placement

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"entgo.io/ent/dialect/sql"
	"github.com/redis/go-redis/v9"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/scheduler"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/quota"
)

// SnapshotChannel is the Redis pub/sub channel the changes that make cached snapshots stale
// travel on (SnapshotsConfig.Channel defaults to it).
const SnapshotChannel = "virtflow:placement"

// SnapshotsConfig configures a process's snapshot cache.
type SnapshotsConfig struct {
	// Client is hooked to notice changes (and so are the transactions opened from it).
	Client *ent.Client
	// Redis carries the changes between processes.
	Redis redis.UniversalClient
	// Channel is the pub/sub channel (default SnapshotChannel; tests use their own).
	Channel string
	// MaxAge is how long a snapshot is used before it is read again in full, whatever the
	// events said (default one minute): a safety net for events lost without a reconnect.
	MaxAge time.Duration
	// Clock gives the time for MaxAge (default time.Now).
	Clock func() time.Time
	// Log reports lost subscriptions and failed publishes.
	Log *slog.Logger
}

// Snapshots keeps the placement snapshot of each region in memory, so that a placement does
// not read every node of its region again in its write transaction. internal/app makes one
// per process (NewSnapshots, then Run) and gives it to the Placer (Config.Snapshots).
//
// The cache follows the database through change events, published after commit on
// SnapshotChannel by a hook on Config.Client (in every process that writes):
//
//   - a compute node's status, schedulable flag, labels, capacities or allocations changed
//     (placements, releases, node reports): that node is read again, with the others that
//     changed, in one query before the next decision in its region;
//   - a quota was set, used or released: likewise, one query for the changed quotas;
//   - anything else a snapshot is made of (clusters, regions, hosts, racks, floors, zones,
//     host groups, providers, nodes created or deleted or moved): every region is read again
//     in full before its next decision.
//
// A process applies its own events at once and the others' when Redis delivers them. When
// events may have been missed — before the first subscription, after Redis reconnected, or
// MaxAge after the last full read — the region is read again in full; while the subscription
// is down the cache is not used at all (every attempt loads, as without a cache).
//
// A snapshot that is behind the database is safe, because the commit's conditional UPDATEs
// re-check every node and quota row (see the package comment): an allocation the cache does
// not know yet makes the commit fail and the attempt decide again, with the rows it lost on
// read again. A stale snapshot is never trusted to refuse: when the scheduler finds no room
// in a cached snapshot, the attempt decides again on a snapshot loaded in the transaction.
//
// A region where some host is in several host groups is not cached (which group a node
// counts in then depends on the tenant): its placements load their snapshot as before.
type Snapshots struct {
	cfg    SnapshotsConfig
	origin string // this process's name in events, to skip its own when Redis echoes them

	mu      sync.Mutex
	regions map[int]*regionCache
	live    bool // subscribed: events arrive

	loads, refreshes atomic.Int64 // full reads and partial re-reads, for tests and metrics

	outbox     chan snapshotEvent // events for Run's publisher
	publishing atomic.Bool        // the publisher runs
}

// regionCache is the cached snapshot of one region.
type regionCache struct {
	// mu is held for reading while a decision runs on snap and for writing while snap is
	// refreshed or replaced.
	mu       sync.RWMutex
	snap     *Snapshot // nil until loaded; loaded with every tenant's quotas (tenant 0)
	loadedAt time.Time
	pos      map[int]int  // node ID → index in snap.Nodes
	cores    map[int]int  // host group → its physical cores, for the groups with quotas
	groups   map[int]bool // the host groups the region's nodes count in

	// What events said since, under Snapshots.mu.
	stale       bool
	dirtyNodes  map[int]bool
	dirtyQuotas map[int]bool
}

// NewSnapshots returns an empty cache and hooks cfg.Client so that its changes are
// published. Nothing is cached before Run has subscribed.
func NewSnapshots(cfg SnapshotsConfig) *Snapshots {
	if cfg.Channel == "" {
		cfg.Channel = SnapshotChannel
	}
	if cfg.MaxAge <= 0 {
		cfg.MaxAge = time.Minute
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	s := &Snapshots{cfg: cfg, origin: hex.EncodeToString(b), regions: map[int]*regionCache{},
		outbox: make(chan snapshotEvent, 4096)}
	cfg.Client.Use(s.hook)
	return s
}

// Loads is how many times a region was read in full; Refreshes how many partial re-reads
// of changed nodes and quotas were made.
func (s *Snapshots) Loads() int64     { return s.loads.Load() }
func (s *Snapshots) Refreshes() int64 { return s.refreshes.Load() }

// snapshotEvent is what travels on the channel.
type snapshotEvent struct {
	Origin string `json:"o"`
	Nodes  []int  `json:"n,omitempty"`
	Quotas []int  `json:"q,omitempty"`
	All    bool   `json:"all,omitempty"`
}

// Run subscribes to the channel and applies the events until ctx ends. It returns once
// the first subscription is confirmed (or fails), and keeps running in the background.
func (s *Snapshots) Run(ctx context.Context) error {
	ps := s.cfg.Redis.Subscribe(ctx, s.cfg.Channel)
	if _, err := ps.Receive(ctx); err != nil {
		_ = ps.Close()
		return fmt.Errorf("subscribe to %s: %w", s.cfg.Channel, err)
	}
	s.resync(true)
	s.publishing.Store(true)
	go s.publisher(ctx)
	go func() {
		defer ps.Close()
		defer s.resync(false)
		age := time.NewTicker(s.cfg.MaxAge)
		defer age.Stop()
		for ctx.Err() == nil {
			select {
			case <-age.C:
				s.expire()
			default:
			}
			msg, err := ps.ReceiveTimeout(ctx, 10*time.Second)
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				var nerr interface{ Timeout() bool }
				if errors.As(err, &nerr) && nerr.Timeout() {
					// Quiet channel: make sure the connection is still there.
					if err := ps.Ping(ctx); err == nil {
						continue
					}
				}
				s.resync(false) // events may be lost until the subscription is back
				s.cfg.Log.Warn("placement snapshot events interrupted", "err", err)
				select {
				case <-ctx.Done():
				case <-time.After(time.Second):
				}
				continue
			}
			switch m := msg.(type) {
			case *redis.Subscription:
				if m.Kind == "subscribe" { // again, after a reconnect
					s.resync(true)
				}
			case *redis.Message:
				var e snapshotEvent
				if json.Unmarshal([]byte(m.Payload), &e) == nil && e.Origin != s.origin {
					s.apply(e)
				}
			}
		}
	}()
	return nil
}

// resync marks every region stale and says whether events arrive from now on.
func (s *Snapshots) resync(live bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.live = live
	for _, r := range s.regions {
		r.stale = true
	}
}

// expire marks stale the regions read in full longer than MaxAge ago.
func (s *Snapshots) expire() {
	now := s.cfg.Clock()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.regions {
		r.mu.RLock()
		old := r.snap != nil && now.Sub(r.loadedAt) >= s.cfg.MaxAge
		r.mu.RUnlock()
		if old {
			r.stale = true
		}
	}
}

// apply records what an event says changed.
func (s *Snapshots) apply(e snapshotEvent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.regions {
		if e.All {
			r.stale = true
			continue
		}
		for _, id := range e.Nodes {
			r.dirtyNodes[id] = true
		}
		for _, id := range e.Quotas {
			r.dirtyQuotas[id] = true
		}
	}
}

// errNotCached says the cache cannot serve a region now: the caller loads its snapshot.
var errNotCached = errors.New("snapshot not cached")

// decide runs the scheduler on the region's cached snapshot, bringing it up to date first
// (a full read when stale, else one query each for the changed nodes and quotas) through c:
// the deciding transaction's client, so that a placement needs no second connection (a
// pool held by transactions that wait for one would never give it). The caller makes sure
// the transaction has not written nodes or quotas itself (they would be read uncommitted). It returns
// the decision and a view of the snapshot that commit may use after the cache moved on.
// errNotCached means the cache cannot be used for this region now.
func (s *Snapshots) decide(ctx context.Context, c *ent.Client, tenantID, regionID int, r scheduler.Request, cfg scheduler.Config) (scheduler.Decision, *Snapshot, error) {
	s.mu.Lock()
	if !s.live {
		s.mu.Unlock()
		return scheduler.Decision{}, nil, errNotCached
	}
	rc := s.regions[regionID]
	if rc == nil {
		rc = &regionCache{stale: true, dirtyNodes: map[int]bool{}, dirtyQuotas: map[int]bool{}}
		s.regions[regionID] = rc
	}
	// Take what events marked, and leave fresh maps for the events to come: the taken maps
	// are this call's alone (events write the region's maps under s.mu, at any time).
	stale, nodes, quotas := rc.stale, rc.dirtyNodes, rc.dirtyQuotas
	changed := stale || len(nodes) > 0 || len(quotas) > 0
	if changed {
		rc.stale, rc.dirtyNodes, rc.dirtyQuotas = false, map[int]bool{}, map[int]bool{}
	}
	s.mu.Unlock()

	if changed {
		if err := s.refresh(ctx, c, rc, regionID, stale, nodes, quotas); err != nil {
			// Read it all again next time: what was marked is consumed.
			s.mu.Lock()
			rc.stale = true
			s.mu.Unlock()
			return scheduler.Decision{}, nil, err
		}
	}

	rc.mu.RLock()
	snap := rc.snap
	if snap == nil || snap.multiGroup {
		rc.mu.RUnlock()
		return scheduler.Decision{}, nil, errNotCached
	}
	d, err := scheduler.Schedule(&snap.Snapshot, r, cfg)
	rc.mu.RUnlock()
	if err != nil {
		return d, nil, err
	}
	// Reserve what the decision takes until the commit's event (or a failure) has the
	// rows read again, so that concurrent placements of this process choose other nodes
	// instead of queueing on this one's row lock.
	rc.mu.Lock()
	defer rc.mu.Unlock()
	// An exclusive NUMA_NODE placement's NUMA node is chosen now, from the nodes the view
	// has not got.
	cells := numaCells(&snap.Snapshot, r, d, func(id int) (int, bool) { i, ok := rc.pos[id]; return int(i), ok })
	reserved := rc.snap == snap && snap.Apply(r, d) == nil
	if reserved {
		// The exclusive bits go with the reservation (a refresh reads them again).
		for _, p := range d.Placements {
			if i, ok := rc.pos[p.NodeID]; ok {
				snap.Nodes[i].ExclusiveMask |= takeOf(r.Flavor, cells, p.NodeID)
			}
		}
	}
	// The view commit reads: the node facts never change in a loaded snapshot; the
	// tenant's quota rows are copied, since refreshes change the map.
	view := &Snapshot{TenantID: tenantID, RegionID: regionID, nodes: snap.nodes,
		quotas: map[scheduler.QuotaKey]quotaInfo{}, reserved: reserved, cells: cells}
	for k, q := range snap.quotas {
		if k.TenantID == tenantID {
			view.quotas[k] = q
		}
	}
	return d, view, nil
}

// invalidate marks the nodes and quotas of a decision whose commit failed: the next
// decision reads them again (undoing what decide reserved).
func (s *Snapshots) invalidate(regionID int, nodeIDs, quotaIDs []int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rc := s.regions[regionID]
	if rc == nil {
		return
	}
	for _, id := range nodeIDs {
		rc.dirtyNodes[id] = true
	}
	for _, id := range quotaIDs {
		rc.dirtyQuotas[id] = true
	}
}

// refresh brings a region's snapshot up to date: in full when stale (or never loaded),
// else the changed nodes and quotas. The queries run without holding rc.mu, so decisions
// go on meanwhile; what they read is put in under it.
func (s *Snapshots) refresh(ctx context.Context, c *ent.Client, rc *regionCache, regionID int, full bool, nodes, quotas map[int]bool) error {
	ctx = authz.Unrestricted(ctx)
	rc.mu.RLock()
	loaded := rc.snap != nil
	rc.mu.RUnlock()
	if full || !loaded {
		return s.reload(ctx, c, rc, regionID)
	}
	s.refreshes.Add(1)
	if len(nodes) > 0 {
		ok, err := s.refreshNodes(ctx, c, rc, sortedKeys(nodes))
		if err != nil || !ok {
			if err == nil {
				err = s.reload(ctx, c, rc, regionID)
			}
			return err
		}
	}
	if len(quotas) > 0 {
		ok, err := s.refreshQuotas(ctx, c, rc, sortedKeys(quotas))
		if err != nil || !ok {
			if err == nil {
				err = s.reload(ctx, c, rc, regionID)
			}
			return err
		}
	}
	return nil
}

// reload reads the region in full and puts it in.
func (s *Snapshots) reload(ctx context.Context, c *ent.Client, rc *regionCache, regionID int) error {
	s.loads.Add(1)
	snap, err := load(ctx, c, 0, regionID)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if err != nil {
		rc.snap = nil
		return err
	}
	rc.snap, rc.loadedAt = snap, s.cfg.Clock()
	rc.pos = make(map[int]int, len(snap.Nodes))
	for i, n := range snap.Nodes {
		rc.pos[n.ID] = i
	}
	rc.cores, rc.groups = map[int]int{}, map[int]bool{}
	for k, q := range snap.quotas {
		rc.cores[k.HostGroupID] = q.groupCores
	}
	for _, n := range snap.nodes {
		if n.hostGroupID != 0 {
			rc.groups[n.hostGroupID] = true
		}
	}
	return nil
}

// nodeState is what a node's row says that changes without changing the region's layout.
type nodeState struct {
	ID                int    `sql:"id"`
	Status            string `sql:"status"`
	Schedulable       bool   `sql:"schedulable"`
	Labels            []byte `sql:"labels"`
	CPUCapacity       int    `sql:"cpu_capacity"`
	CPUAllocated      int    `sql:"cpu_allocated"`
	MemoryMB          int64  `sql:"memory_capacity_mb"`
	MemoryAllocatedMB int64  `sql:"memory_allocated_mb"`
	DiskGB            int64  `sql:"disk_capacity_gb"`
	DiskAllocatedGB   int64  `sql:"disk_allocated_gb"`
	ExclusiveMask     int64  `sql:"exclusive_mask"`
	NUMANodes         []byte `sql:"numa_nodes"`
	ClusterID         int    `sql:"cluster_id"`
}

// refreshNodes reads the changed nodes of the region again, in one query.
// Nodes of other regions are ignored; false means the region's layout changed (a node
// gone or moved to another cluster) and it must be read in full.
func (s *Snapshots) refreshNodes(ctx context.Context, c *ent.Client, rc *regionCache, ids []int) (bool, error) {
	mine := ids[:0]
	rc.mu.RLock()
	snap := rc.snap
	for _, id := range ids {
		if _, ok := rc.pos[id]; ok {
			mine = append(mine, id)
		}
	}
	rc.mu.RUnlock()
	if len(mine) == 0 {
		return true, nil
	}
	var rows []nodeState
	err := c.ComputeNode.Query().Where(computenode.IDIn(mine...)).Modify(func(q *sql.Selector) {
		q.Select(q.Columns(computenode.FieldID, computenode.FieldStatus, computenode.FieldSchedulable,
			computenode.FieldLabels, computenode.FieldCPUCapacity, computenode.FieldCPUAllocated,
			computenode.FieldMemoryCapacityMB, computenode.FieldMemoryAllocatedMB,
			computenode.FieldDiskCapacityGB, computenode.FieldDiskAllocatedGB,
			computenode.FieldExclusiveMask, computenode.FieldNumaNodes)...)
		q.AppendSelectExprAs(sql.Expr(fmt.Sprintf("COALESCE(%s, 0)", q.C(computenode.ClusterColumn))), "cluster_id")
	}).Scan(ctx, &rows)
	if err != nil {
		return false, fmt.Errorf("refresh nodes: %w", err)
	}
	if len(rows) != len(mine) {
		return false, nil // a node was deleted
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.snap != snap {
		return true, nil // read in full meanwhile
	}
	relabelled, cpuChanged := false, false
	for _, r := range rows {
		n := &snap.Nodes[rc.pos[r.ID]]
		if r.ClusterID != n.ClusterID {
			return false, nil
		}
		var labels map[string]string
		if len(r.Labels) > 0 && string(r.Labels) != "null" {
			if err := json.Unmarshal(r.Labels, &labels); err != nil {
				return false, fmt.Errorf("labels of node %d: %w", r.ID, err)
			}
		}
		if !maps.Equal(labels, n.Labels) {
			n.Labels, relabelled = labels, true
		}
		n.Ready = r.Status == computenode.StatusReady.String()
		n.Schedulable = r.Schedulable
		// The scheduler keeps per-AZ CPU sums; a commit of this process was applied to
		// them already (decide), so only a change made elsewhere needs a recount.
		cpuChanged = cpuChanged || n.CPUCapacity != r.CPUCapacity || n.CPUAllocated != r.CPUAllocated
		n.CPUCapacity, n.CPUAllocated = r.CPUCapacity, r.CPUAllocated
		n.MemoryMB, n.MemoryAllocatedMB = r.MemoryMB, r.MemoryAllocatedMB
		n.DiskGB, n.DiskAllocatedGB = r.DiskGB, r.DiskAllocatedGB
		n.DedicatedCoresFree = dedicatedFree(r.CPUCapacity, r.CPUAllocated, snap.nodes[r.ID].threadsPerCore)
		numa, err := numaNodes(r.NUMANodes)
		if err != nil {
			return false, fmt.Errorf("NUMA nodes of node %d: %w", r.ID, err)
		}
		n.ExclusiveMask, n.NUMANodes = r.ExclusiveMask, numa
	}
	if relabelled {
		snap.Invalidate() // labels are indexed
	} else if cpuChanged {
		snap.AllocationsChanged()
	}
	return true, nil
}

// refreshQuotas reads the changed quotas again, in one query: updated ones
// replace theirs, deleted ones go. false means a quota of a host group the snapshot does
// not know the cores of appeared; the region must be read in full.
func (s *Snapshots) refreshQuotas(ctx context.Context, c *ent.Client, rc *regionCache, ids []int) (bool, error) {
	var rows []quotaRow
	err := c.Quota.Query().Where(quota.IDIn(ids...)).Modify(selectQuotaRow).Scan(ctx, &rows)
	if err != nil {
		return false, fmt.Errorf("refresh quotas: %w", err)
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	snap := rc.snap
	found := map[int]bool{}
	for _, q := range rows {
		found[q.ID] = true
	}
	for k, q := range snap.quotas { // deleted, or moved to another tenant or group
		if slices.Contains(ids, q.id) && !found[q.id] {
			delete(snap.quotas, k)
			delete(snap.Quotas, k)
		}
	}
	for _, q := range rows {
		if !rc.groups[q.GroupID] {
			continue // a group without nodes in this region
		}
		cores, ok := rc.cores[q.GroupID]
		if !ok {
			return false, nil
		}
		for k, old := range snap.quotas {
			if old.id == q.ID {
				delete(snap.quotas, k)
				delete(snap.Quotas, k)
			}
		}
		snap.setQuota(q, cores)
	}
	return true, nil
}
