package placement

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"entgo.io/ent/dialect/sql"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/domain/scheduler"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/cluster"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/region"
	"github.com/virtflow/virtflow/ent/regionservice"
	"github.com/virtflow/virtflow/ent/schema/fieldtype"
	"github.com/virtflow/virtflow/ent/tenant"
)

// ExplainInput is a placement request to explain.
type ExplainInput struct {
	TenantID, RegionID, FlavorID int
	Count                        int // 0 means 1
	Policy                       fieldtype.SchedulePolicy
	AllowPartial                 bool
	// RegionServiceID explains a scale-up of the service: its replicas count for zone
	// rules and spreading.
	RegionServiceID int
	// AvailabilityZoneID, when set, keeps the group in that zone of the region.
	AvailabilityZoneID int
}

// Explanation says where a request would go and why, or why it fits nowhere. The GraphQL
// type PlacementExplanation is bound to it (gqlgen.yml), as are Choice (PlacementChoice),
// Rejection (RejectionCount), NodeResult (NodeExplanation) and Score (PluginScore).
type Explanation struct {
	Placeable bool
	// ErrorCode is NO_CAPACITY or QUOTA_EXCEEDED when not placeable, and Message says why;
	// both nil when placeable.
	ErrorCode, Message *string
	// Cluster is the cluster chosen (nil when not placeable).
	Cluster    *ent.Cluster
	Placements []Choice
	Unplaced   int
	// Rejections counts the nodes each filter rejected (with its code), and the clusters
	// the policy or region excluded (filter "Cluster").
	Rejections []Rejection
	// Nodes explains every node of the chosen cluster in the last round of the decision,
	// or, when nothing fits, every node of every cluster tried.
	Nodes []NodeResult
	// Spread shows, per label key of the policy's anti-affinities and value, how many VMs
	// of the group (running replicas and those placed) are on nodes with that value. Empty
	// for viewers who may not read the compute fabric.
	Spread []LabelSpread
}

// LabelSpread is the group's VMs on nodes with one value of a label key the policy
// spreads over (GraphQL LabelSpread).
type LabelSpread struct {
	Key, Mode, Value string
	VMs, Nodes       int
}

// Choice is where one VM of the group would go.
type Choice struct {
	Node  *ent.ComputeNode
	Score float64
}

// Rejection counts the nodes a filter rejected with one code.
type Rejection struct {
	Filter, Code string
	Count        int
}

// NodeResult is one node's fate: rejected by a filter, or scored.
type NodeResult struct {
	Node                     *ent.ComputeNode
	RejectedBy, Code, Reason *string // nil when the node passed
	Scores                   []Score
	Total                    float64
}

// Score is one scorer's score of a node (0..100, before weighting).
type Score struct {
	Plugin string
	Score  float64
}

// Explain runs the scheduler on a fresh snapshot without writing anything. The viewer in
// ctx must be able to see the tenant (and the service); nodes and clusters are read as
// the viewer (one query each), so only those who may read the compute fabric get an
// explanation.
func (p *Placer) Explain(ctx context.Context, c *ent.Client, in ExplainInput) (*Explanation, error) {
	if in.Count == 0 {
		in.Count = 1
	}
	if in.Count < 0 || in.Count > MaxReplicas {
		return nil, apierr.Validation("count", "count must be between 1 and %d", MaxReplicas)
	}
	if err := in.Policy.Validate(); err != nil {
		return nil, apierr.Validation("schedulePolicy", "%v", err)
	}
	if err := visible(ctx, c.Tenant.Query().Where(tenant.ID(in.TenantID)).Exist, "tenant", in.TenantID); err != nil {
		return nil, err
	}
	if err := visible(ctx, c.Region.Query().Where(region.ID(in.RegionID)).Exist, "region", in.RegionID); err != nil {
		return nil, err
	}
	f, err := loadFlavor(ctx, c, in.FlavorID, "flavorID")
	if err != nil {
		return nil, err
	}
	req := Request{TenantID: in.TenantID, RegionID: in.RegionID, Flavor: f, Count: in.Count,
		Policy: in.Policy, AllowPartial: in.AllowPartial}
	if in.AvailabilityZoneID != 0 {
		id := in.AvailabilityZoneID
		if req.AvailabilityZone, err = chosenZone(ctx, c, &id, in.RegionID); err != nil {
			return nil, err
		}
	}
	if in.RegionServiceID != 0 {
		if err := visible(ctx, c.RegionService.Query().Where(regionservice.ID(in.RegionServiceID)).Exist,
			"region service", in.RegionServiceID); err != nil {
			return nil, err
		}
		svc, err := loadService(ctx, c, in.RegionServiceID)
		if err != nil {
			return nil, err
		}
		if svc.Tenant != in.TenantID || svc.Region != in.RegionID {
			return nil, apierr.Validation("regionServiceID", "region service %s belongs to another tenant or region", svc.Name)
		}
		running, err := replicasOf(ctx, c, svc)
		if err != nil {
			return nil, err
		}
		for _, r := range running {
			if r.Node != 0 {
				req.GroupNodeIDs = append(req.GroupNodeIDs, r.Node)
			}
		}
	}

	snap, err := Load(ctx, c, in.TenantID, in.RegionID)
	if err != nil {
		return nil, err
	}
	cfg := p.cfg.Scheduler
	cfg.Quiet, cfg.CompactExplain = false, false
	d, err := scheduler.Schedule(&snap.Snapshot, req.scheduler(), cfg)

	out := &Explanation{Spread: []LabelSpread{}}
	var nodeIDs []int
	var rejected []scheduler.NodeResult // when nothing fits: every node of every cluster tried
	var npe *scheduler.NoPlacementError
	switch {
	case err == nil:
		out.Placeable = true
		out.Unplaced = d.Unplaced
		counts := map[[2]string]int{}
		for _, nr := range d.Nodes {
			nodeIDs = append(nodeIDs, nr.NodeID)
			if nr.Rejected != "" {
				counts[[2]string{nr.Rejected, string(nr.Code)}]++
			}
		}
		for _, pl := range d.Placements {
			nodeIDs = append(nodeIDs, pl.NodeID)
		}
		out.Rejections = rejections(counts)
	case errors.As(err, &npe):
		e, _ := apierr.As(scheduleError(err))
		out.ErrorCode, out.Message = new(string(e.Code)), new(e.Message)
		counts := map[[2]string]int{}
		if npe.Explanation != nil {
			rejected = npe.Explanation.Nodes()
		}
		slices.SortFunc(rejected, func(a, b scheduler.NodeResult) int { return cmp.Compare(a.NodeID, b.NodeID) })
		for _, nr := range rejected {
			nodeIDs = append(nodeIDs, nr.NodeID)
			counts[[2]string{nr.Rejected, string(nr.Code)}]++
		}
		if n := npe.Reasons[scheduler.ReasonCluster]; n > 0 {
			counts[[2]string{scheduler.ReasonCluster, "CLUSTER_EXCLUDED"}] = n
		}
		out.Rejections = rejections(counts)
	default:
		return nil, scheduleError(err)
	}

	// A viewer who may not read the compute fabric (a tenant role) learns the verdict and how
	// many nodes each filter turned away, not which cluster or nodes.
	if !authz.FromContext(ctx).Can("ComputeNode", authz.ActRead) {
		return out, nil
	}
	nodes, err := nodesByID(ctx, c, nodeIDs)
	if err != nil {
		return nil, err
	}
	var placedIDs []int
	if out.Placeable {
		for _, pl := range d.Placements {
			placedIDs = append(placedIDs, pl.NodeID)
		}
	}
	out.Spread = spread(&snap.Snapshot, in.Policy, req.GroupNodeIDs, placedIDs)
	if out.Placeable {
		if out.Cluster, err = c.Cluster.Query().Where(cluster.ID(d.ClusterID)).Only(ctx); err != nil {
			return nil, fmt.Errorf("read cluster %d: %w", d.ClusterID, err)
		}
		for _, pl := range d.Placements {
			out.Placements = append(out.Placements, Choice{Node: nodes[pl.NodeID], Score: pl.Total})
		}
		for _, nr := range d.Nodes {
			out.Nodes = append(out.Nodes, nodeResult(nodes[nr.NodeID], nr))
		}
	} else {
		for _, nr := range rejected {
			out.Nodes = append(out.Nodes, nodeResult(nodes[nr.NodeID], nr))
		}
	}
	return out, nil
}

// spread counts, per label key the policy spreads over (HARD, then SOFT) and per value,
// the group's VMs (running, then placed) and the region's nodes with that value.
func spread(s *scheduler.Snapshot, pol fieldtype.SchedulePolicy, running, placed []int) []LabelSpread {
	byID := make(map[int]*scheduler.Node, len(s.Nodes))
	for i := range s.Nodes {
		byID[s.Nodes[i].ID] = &s.Nodes[i]
	}
	out := []LabelSpread{}
	for _, m := range []struct {
		mode string
		keys fieldtype.Labels
	}{{"HARD", pol.NodeLabelHardAntiAffinities}, {"SOFT", pol.NodeLabelSoftAntiAffinities}} {
		for _, key := range sortedStringKeys(m.keys) {
			vms, nodes := map[string]int{}, map[string]int{}
			for i := range s.Nodes {
				nodes[s.Nodes[i].Labels[key]]++
			}
			for _, id := range slices.Concat(running, placed) {
				if n := byID[id]; n != nil {
					vms[n.Labels[key]]++
				}
			}
			for _, v := range sortedStringKeys(nodes) {
				out = append(out, LabelSpread{Key: key, Mode: m.mode, Value: v, VMs: vms[v], Nodes: nodes[v]})
			}
		}
	}
	return out
}

// visible returns NOT_FOUND naming what when the viewer in ctx cannot see it.
func visible(ctx context.Context, exist func(context.Context) (bool, error), what string, id int) error {
	ok, err := exist(ctx)
	if err != nil {
		return err
	}
	if !ok {
		return apierr.NotFound("%s %d not found", what, id)
	}
	return nil
}

// nodesByID reads nodes as the viewer in ctx, in one query.
func nodesByID(ctx context.Context, c *ent.Client, ids []int) (map[int]*ent.ComputeNode, error) {
	out := map[int]*ent.ComputeNode{}
	if len(ids) == 0 {
		return out, nil
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	ns, err := c.ComputeNode.Query().
		Where(func(s *sql.Selector) { s.Where(sql.InInts(s.C(computenode.FieldID), ids...)) }).All(ctx)
	if err != nil {
		return nil, err
	}
	for _, n := range ns {
		out[n.ID] = n
	}
	return out, nil
}

func nodeResult(n *ent.ComputeNode, nr scheduler.NodeResult) NodeResult {
	out := NodeResult{Node: n, Total: nr.Total}
	if nr.Rejected != "" {
		out.RejectedBy, out.Code, out.Reason = new(nr.Rejected), new(string(nr.Code)), new(nr.Reason)
	}
	for _, name := range sortedStringKeys(nr.Scores) {
		out.Scores = append(out.Scores, Score{Plugin: name, Score: nr.Scores[name]})
	}
	return out
}

func rejections(counts map[[2]string]int) []Rejection {
	out := make([]Rejection, 0, len(counts))
	for k, n := range counts {
		out = append(out, Rejection{Filter: k[0], Code: k[1], Count: n})
	}
	slices.SortFunc(out, func(a, b Rejection) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Filter, b.Filter), cmp.Compare(a.Code, b.Code))
	})
	return out
}

func sortedStringKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
