package nodestatus

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/sql"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/controllers/alerting"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/event"
	"github.com/virtflow/virtflow/ent/predicate"
	"github.com/virtflow/virtflow/ent/provider"
	"github.com/virtflow/virtflow/ent/schema/fieldtype"
	"github.com/virtflow/virtflow/store/truncate"
)

// Report is one heartbeat of a node agent. Nil capacities and version leave the recorded
// values as they are.
type Report struct {
	NodeID           int
	CPUCapacity      *int
	MemoryCapacityMB *int
	DiskCapacityGB   *int
	AgentVersion     *string
	// ReservedCPUs is how many host CPUs the agent keeps for the host (not in CPUCapacity);
	// NUMANodes the host's NUMA nodes. Nil leaves the recorded ones.
	ReservedCPUs *int
	NUMANodes    []fieldtype.NUMANode
	// OSName, OSVersion, KernelVersion and DomainType are the host's facts as the agent
	// reads them; nil leaves the recorded ones.
	OSName, OSVersion, KernelVersion, DomainType *string
	// Providers is what the node offers: the node is linked to every Provider of a listed
	// kind and driver and unlinked from the others. Nil leaves the links as they are.
	Providers []ProviderOffer
	// Healthy marks the node READY; false marks it NOT_READY with Message as the reason.
	Healthy bool
	Message *string
	// RequestCordon asks for the node to be cordoned. It is honoured when the node has
	// auto_cordon set; otherwise the request is recorded in status_reason for an operator.
	RequestCordon *bool
	// IDOnly says the caller needs nothing of the node back but its ID (the node agent asks
	// for `{ id }`). A routine heartbeat then costs a single UPDATE, and Apply returns a node
	// whose only field set is ID; anything else it returns the node as it is now.
	IDOnly bool
	// At is when the heartbeat arrived, by the caller's clock (the resolver's, injected by
	// internal/app or a test); zero means time.Now().
	At time.Time
}

// ProviderOffer is a kind of resource the node realizes and the driver that realizes it.
type ProviderOffer struct {
	Kind   provider.Kind
	Driver provider.Driver
}

// CapacityCheck is the check name of the warning event recorded when an agent reports a
// capacity below what is already allocated on its node.
const CapacityCheck = "node-capacity"

// maxReason is the size in bytes of the status and cordon reason columns (ent/schema).
const maxReason = 1024

// DefaultCordonReason is the cordon reason when the agent gives no message.
const DefaultCordonReason = "cordoned at the node agent's request"

// Apply records r on its node through c (the mutation's transaction client, so that privacy
// applies) and returns the updated node and whether the report changed anything beyond the
// heartbeat time: status, reason, capacity, agent version or cordon. A routine heartbeat
// that changes nothing writes only last_heartbeat_at, so it publishes no status event and,
// in package graph, leaves no audit row (at 5,000 nodes every 10 s those would be 43 million
// rows a day).
//
// A routine heartbeat takes a fast path (see routine): one conditional UPDATE that writes the
// time only if nothing else would change, committed without waiting for the WAL flush on
// PostgreSQL. When it matches no row — something changed, the node is not the caller's, or
// it does not exist — Apply reads the node and takes the full path below, which decides and
// reports exactly as if there were no fast path.
func Apply(ctx context.Context, c *ent.Client, r Report) (*ent.ComputeNode, bool, error) {
	if err := r.validate(); err != nil {
		return nil, false, err
	}
	if r.At.IsZero() {
		r.At = time.Now()
	}
	if ok, err := routine(ctx, c, r); err != nil {
		return nil, false, fmt.Errorf("record heartbeat of node %d: %w", r.NodeID, err)
	} else if ok {
		if r.IDOnly {
			return &ent.ComputeNode{ID: r.NodeID}, false, nil
		}
		n, err := c.ComputeNode.Get(ctx, r.NodeID)
		if err != nil {
			return nil, false, fmt.Errorf("read node %d after its heartbeat: %w", r.NodeID, err)
		}
		return n, false, nil
	}
	node, err := c.ComputeNode.Query().Where(computenode.ID(r.NodeID)).
		Select(computenode.FieldStatus, computenode.FieldStatusReason, computenode.FieldSchedulable,
			computenode.FieldAutoCordon, computenode.FieldCPUCapacity, computenode.FieldMemoryCapacityMB,
			computenode.FieldDiskCapacityGB, computenode.FieldAgentVersion, computenode.FieldCPUAllocated,
			computenode.FieldMemoryAllocatedMB, computenode.FieldDiskAllocatedGB, computenode.FieldOsName,
			computenode.FieldOsVersion, computenode.FieldKernelVersion, computenode.FieldDomainType,
			computenode.FieldReservedCpus, computenode.FieldNumaNodes).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, false, apierr.NotFound("compute node %d not found", r.NodeID)
	}
	if err != nil {
		return nil, false, err
	}

	changed := false
	u := c.ComputeNode.UpdateOneID(r.NodeID).SetLastHeartbeatAt(r.At)
	if r.CPUCapacity != nil && *r.CPUCapacity != node.CPUCapacity {
		u.SetCPUCapacity(*r.CPUCapacity)
		changed = true
	}
	if r.MemoryCapacityMB != nil && int64(*r.MemoryCapacityMB) != node.MemoryCapacityMB {
		u.SetMemoryCapacityMB(int64(*r.MemoryCapacityMB))
		changed = true
	}
	if r.DiskCapacityGB != nil && int64(*r.DiskCapacityGB) != node.DiskCapacityGB {
		u.SetDiskCapacityGB(int64(*r.DiskCapacityGB))
		changed = true
	}
	if r.AgentVersion != nil && *r.AgentVersion != node.AgentVersion {
		u.SetAgentVersion(*r.AgentVersion)
		changed = true
	}
	if r.ReservedCPUs != nil && *r.ReservedCPUs != node.ReservedCpus {
		if *r.ReservedCPUs < 0 {
			return nil, false, apierr.Validation("reservedCPUs", "must not be negative")
		}
		u.SetReservedCpus(*r.ReservedCPUs)
		changed = true
	}
	if r.NUMANodes != nil && !reflect.DeepEqual(r.NUMANodes, node.NumaNodes) {
		if err := fieldtype.ValidateNUMANodes(r.NUMANodes); err != nil {
			return nil, false, apierr.Validation("numaNodes", "%v", err)
		}
		u.SetNumaNodes(r.NUMANodes)
		changed = true
	}
	for _, f := range []struct {
		v   *string
		old string
		set func(string) *ent.ComputeNodeUpdateOne
	}{
		{r.OSName, node.OsName, u.SetOsName}, {r.OSVersion, node.OsVersion, u.SetOsVersion},
		{r.KernelVersion, node.KernelVersion, u.SetKernelVersion}, {r.DomainType, node.DomainType, u.SetDomainType},
	} {
		if f.v != nil && *f.v != f.old {
			f.set(*f.v)
			changed = true
		}
	}
	if r.Providers != nil {
		// The node was read above under the caller's privacy (an agent reads only its own);
		// the provider catalog, which an agent may not read, is matched as the system.
		linked, err := linkProviders(authz.SystemContext(ctx, "nodestatus: provider links"), c, r.NodeID, r.Providers)
		if err != nil {
			return nil, false, err
		}
		changed = changed || linked
	}
	below := belowAllocated(node, r)
	msg := ""
	if r.Message != nil {
		msg = strings.TrimSpace(*r.Message)
	}
	status, reason := computenode.StatusReady, ""
	if !r.Healthy {
		status, reason = computenode.StatusNotReady, msg
		if reason == "" {
			reason = "the node agent reports the node unhealthy"
		}
	}
	if r.RequestCordon != nil && *r.RequestCordon {
		switch {
		case !node.AutoCordon:
			reason = joinReason(reason, "the node asks to be cordoned; auto-cordon is off, so an operator must cordon it")
		case node.Schedulable:
			cr := msg
			if cr == "" {
				cr = DefaultCordonReason
			}
			u.SetSchedulable(false).SetCordonReason(truncate.String(cr, maxReason))
			changed = true
		}
	}
	if status != node.Status {
		u.SetStatus(status)
		changed = true
	}
	if reason = truncate.String(reason, maxReason); reason != node.StatusReason {
		if reason == "" {
			u.ClearStatusReason()
		} else {
			u.SetStatusReason(reason)
		}
		changed = true
	}
	n, err := u.Save(ctx)
	if ent.IsNotFound(err) {
		return nil, false, apierr.NotFound("compute node %d not found", r.NodeID)
	}
	if err != nil {
		return nil, false, fmt.Errorf("record heartbeat of node %d: %w", r.NodeID, err)
	}
	if below != "" {
		// The capacity is recorded as the host has it (the scheduler then places nothing
		// more), and an operator is told: VMs already there hold more than the host has.
		_, err := alerting.Record(ctx, c, c.Event.Create().SetCheckName(CapacityCheck).
			SetStatus(event.StatusWarning).SetSource("heartbeat").SetNodeID(r.NodeID).
			SetOutput(truncate.String("the node agent reports less capacity than is allocated: "+below, maxReason)).
			SetFirstSeenAt(r.At).SetLastSeenAt(r.At))
		if err != nil {
			return nil, false, err
		}
	}
	if status == computenode.StatusReady && node.Status != computenode.StatusReady {
		// Back from NOT_READY or DOWN: a SUCCESS for the node monitor's check, so the rules
		// resolve what its silence raised.
		_, err := alerting.Record(ctx, c, c.Event.Create().SetCheckName(alerting.NodeHeartbeatCheck).
			SetStatus(event.StatusSuccess).SetSource("heartbeat").SetNodeID(r.NodeID).
			SetOutput(fmt.Sprintf("node is READY again (was %s)", node.Status)).SetFirstSeenAt(r.At).SetLastSeenAt(r.At))
		if err != nil {
			return nil, false, err
		}
	}
	return n, changed, nil
}

// routine records r as a routine heartbeat — one that changes nothing but
// last_heartbeat_at — if it is one, in a single statement:
//
//	UPDATE compute_nodes SET updated_at = $1, last_heartbeat_at = $2
//	WHERE id = $3 AND status = 'READY' AND (status_reason IS NULL OR status_reason = '')
//	  AND cpu_capacity = $4 AND ... AND <the privacy policy's own-node filter>
//	RETURNING set_config('synchronous_commit', 'off', true)
//
// and reports whether it matched the node. The conditions are those under which the full
// path of Apply would set nothing but the time: a healthy report (READY, no reason), no cordon
// request, and every capacity and the agent version reported equal to the recorded ones. The
// UPDATE goes through ent, so the privacy policy narrows it to the nodes the viewer may write
// (an agent's own node): another node's id matches nothing and falls to the full path, which
// answers NOT_FOUND as before.
//
// Durability: on PostgreSQL the RETURNING clause, evaluated only for the row actually updated,
// turns synchronous_commit off for the rest of this transaction (set_config with is_local is
// SET LOCAL), so its COMMIT does not wait for the WAL to reach the disk. A crash can then
// lose the last fraction of a second (at most about three times wal_writer_delay, 200 ms by
// default) of committed heartbeat times, never anything else: such a transaction wrote only
// last_heartbeat_at and updated_at, the database stays consistent, and a lost time is
// replaced by the node's next heartbeat 10 s later — far inside the node monitor's 50 s grace
// before NOT_READY. Transactions that change anything else (a status, a capacity, a cordon, an
// audit row) never reach this clause and commit durably.
func routine(ctx context.Context, c *ent.Client, r Report) (bool, error) {
	if !r.Healthy || (r.RequestCordon != nil && *r.RequestCordon) || r.NUMANodes != nil {
		return false, nil // NUMA nodes come with the first heartbeat and changes only
	}
	where := []predicate.ComputeNode{
		computenode.ID(r.NodeID),
		computenode.StatusEQ(computenode.StatusReady),
		computenode.Or(computenode.StatusReasonIsNil(), computenode.StatusReasonEQ("")),
	}
	if r.CPUCapacity != nil {
		where = append(where, computenode.CPUCapacity(*r.CPUCapacity))
	}
	if r.MemoryCapacityMB != nil {
		where = append(where, computenode.MemoryCapacityMB(int64(*r.MemoryCapacityMB)))
	}
	if r.DiskCapacityGB != nil {
		where = append(where, computenode.DiskCapacityGB(int64(*r.DiskCapacityGB)))
	}
	if r.ReservedCPUs != nil {
		where = append(where, computenode.ReservedCpus(*r.ReservedCPUs))
	}
	for _, f := range []struct {
		v     *string
		isNil func() predicate.ComputeNode
		eq    func(string) predicate.ComputeNode
	}{
		{r.AgentVersion, computenode.AgentVersionIsNil, computenode.AgentVersion},
		{r.OSName, computenode.OsNameIsNil, computenode.OsName},
		{r.OSVersion, computenode.OsVersionIsNil, computenode.OsVersion},
		{r.KernelVersion, computenode.KernelVersionIsNil, computenode.KernelVersion},
		{r.DomainType, computenode.DomainTypeIsNil, computenode.DomainType},
	} {
		switch {
		case f.v == nil:
		case *f.v == "":
			where = append(where, computenode.Or(f.isNil(), f.eq("")))
		default:
			where = append(where, f.eq(*f.v))
		}
	}
	if r.Providers != nil {
		where = append(where, providersLinked(r.Providers))
	}
	n, err := c.ComputeNode.Update().Where(where...).SetLastHeartbeatAt(r.At).
		Modify(func(u *sql.UpdateBuilder) {
			if u.Dialect() == dialect.Postgres {
				u.Returning("set_config('synchronous_commit', 'off', true)")
			}
		}).
		Save(ctx)
	if err != nil {
		return false, err
	}
	return n == 1, nil
}

// offerMatch is the predicate on the providers table of the offers: kind and driver of one
// of them.
func offerMatch(t *sql.SelectTable, offers []ProviderOffer) *sql.Predicate {
	ors := make([]*sql.Predicate, 0, len(offers))
	for _, o := range offers {
		ors = append(ors, sql.And(sql.EQ(t.C(provider.FieldKind), o.Kind), sql.EQ(t.C(provider.FieldDriver), o.Driver)))
	}
	if len(ors) == 0 {
		return sql.False()
	}
	return sql.Or(ors...)
}

// providersLinked matches a node linked to exactly the providers the offers match: none
// linked that no offer matches, none matched that is not linked. The routine heartbeat's
// UPDATE carries it, so unchanged providers cost no write and no extra statement.
func providersLinked(offers []ProviderOffer) predicate.ComputeNode {
	return func(s *sql.Selector) {
		links := sql.Table(computenode.ProvidersTable)
		p := sql.Table(provider.Table)
		linked := sql.Select(links.C(computenode.ProvidersPrimaryKey[1])).From(links).
			Where(sql.ColumnsEQ(links.C(computenode.ProvidersPrimaryKey[0]), s.C(computenode.FieldID)))
		extra := sql.Select(p.C(provider.FieldID)).From(p).
			Where(sql.And(sql.In(p.C(provider.FieldID), linked), sql.Not(offerMatch(p, offers))))
		p2 := sql.Table(provider.Table).As("p2")
		links2 := sql.Table(computenode.ProvidersTable).As("l2")
		linked2 := sql.Select(links2.C(computenode.ProvidersPrimaryKey[1])).From(links2).
			Where(sql.ColumnsEQ(links2.C(computenode.ProvidersPrimaryKey[0]), s.C(computenode.FieldID)))
		missing := sql.Select(p2.C(provider.FieldID)).From(p2).
			Where(sql.And(offerMatch(p2, offers), sql.NotIn(p2.C(provider.FieldID), linked2)))
		s.Where(sql.And(sql.Not(sql.Exists(extra)), sql.Not(sql.Exists(missing))))
	}
}

// providerChanges returns the providers to link to the node and to unlink from it so that
// it is linked to exactly those the offers match.
func providerChanges(ctx context.Context, c *ent.Client, nodeID int, offers []ProviderOffer) (add, remove []int, err error) {
	want, err := c.Provider.Query().Where(func(s *sql.Selector) { s.Where(offerMatch(s.Table(), offers)) }).IDs(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("read providers: %w", err)
	}
	have, err := c.ComputeNode.Query().Where(computenode.ID(nodeID)).QueryProviders().IDs(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("read providers of node %d: %w", nodeID, err)
	}
	for _, id := range want {
		if !slices.Contains(have, id) {
			add = append(add, id)
		}
	}
	for _, id := range have {
		if !slices.Contains(want, id) {
			remove = append(remove, id)
		}
	}
	return add, remove, nil
}

// LinkProviders links node nodeID to exactly the providers offers match (registerNode). ctx
// must allow reading providers and writing the node (the system's).
func LinkProviders(ctx context.Context, c *ent.Client, nodeID int, offers []ProviderOffer) error {
	_, err := linkProviders(ctx, c, nodeID, offers)
	return err
}

// linkProviders is LinkProviders, also saying whether any link changed.
func linkProviders(ctx context.Context, c *ent.Client, nodeID int, offers []ProviderOffer) (bool, error) {
	add, remove, err := providerChanges(ctx, c, nodeID, offers)
	if err != nil || len(add)+len(remove) == 0 {
		return false, err
	}
	if err := c.ComputeNode.UpdateOneID(nodeID).AddProviderIDs(add...).RemoveProviderIDs(remove...).Exec(ctx); err != nil {
		return false, fmt.Errorf("link providers of node %d: %w", nodeID, err)
	}
	return true, nil
}

// belowAllocated says which capacities r lowers below what node has allocated, as they
// change ("" when none): such a report is recorded, with a warning event.
func belowAllocated(node *ent.ComputeNode, r Report) string {
	var out []string
	if r.CPUCapacity != nil && *r.CPUCapacity != node.CPUCapacity && *r.CPUCapacity < node.CPUAllocated {
		out = append(out, fmt.Sprintf("%d vCPUs (%d allocated)", *r.CPUCapacity, node.CPUAllocated))
	}
	if r.MemoryCapacityMB != nil && int64(*r.MemoryCapacityMB) != node.MemoryCapacityMB && int64(*r.MemoryCapacityMB) < node.MemoryAllocatedMB {
		out = append(out, fmt.Sprintf("%d MB of memory (%d MB allocated)", *r.MemoryCapacityMB, node.MemoryAllocatedMB))
	}
	if r.DiskCapacityGB != nil && int64(*r.DiskCapacityGB) != node.DiskCapacityGB && int64(*r.DiskCapacityGB) < node.DiskAllocatedGB {
		out = append(out, fmt.Sprintf("%d GB of disk (%d GB allocated)", *r.DiskCapacityGB, node.DiskAllocatedGB))
	}
	return strings.Join(out, ", ")
}

// validate checks the numbers of r; errors name the GraphQL input fields.
func (r Report) validate() error {
	for _, f := range []struct {
		name string
		v    *int
	}{{"cpuCapacity", r.CPUCapacity}, {"memoryCapacityMB", r.MemoryCapacityMB}, {"diskCapacityGB", r.DiskCapacityGB}} {
		if f.v != nil && *f.v < 0 {
			return apierr.Validation(f.name, "must not be negative")
		}
	}
	for _, f := range []struct {
		name string
		v    *string
		max  int
	}{{"agentVersion", r.AgentVersion, 64}, {"osName", r.OSName, 64}, {"osVersion", r.OSVersion, 64},
		{"kernelVersion", r.KernelVersion, 128}, {"domainType", r.DomainType, 16}} {
		if f.v != nil && len(*f.v) > f.max {
			return apierr.Validation(f.name, "at most %d characters", f.max)
		}
	}
	return nil
}

// joinReason appends b to a, separated by "; ".
func joinReason(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
