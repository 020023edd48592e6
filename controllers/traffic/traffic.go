package traffic

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/controllers/gslb"
	"github.com/virtflow/virtflow/controllers/kubecluster"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/domain/audit"
	"github.com/virtflow/virtflow/domain/placement"
	"github.com/virtflow/virtflow/domain/scheduler"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/globalservice"
	"github.com/virtflow/virtflow/ent/ipaddress"
	"github.com/virtflow/virtflow/ent/kubernetescluster"
	"github.com/virtflow/virtflow/ent/loadbalancer"
	"github.com/virtflow/virtflow/ent/port"
	"github.com/virtflow/virtflow/ent/regionservice"
	"github.com/virtflow/virtflow/ent/schema/fieldtype"
	"github.com/virtflow/virtflow/ent/virtualmachine"
	"github.com/virtflow/virtflow/store/dbtx"
	"github.com/virtflow/virtflow/store/rowlock"
)

// NodesPerLB is how many nodes serve one load balancer by default.
const NodesPerLB = 2

// footprint is the size the scheduler checks a node has room for when it chooses the nodes
// of a load balancer (a request needs a flavor): HAProxy's share of a node. It is not
// allocated: a load balancer's proxy is the node's overhead, not a tenant's VM.
func footprint() scheduler.Flavor { return scheduler.Flavor{VCPUs: 1, MemoryMB: 256} }

// DefaultStale is how old a node's report may be and still count.
const DefaultStale = 15 * time.Second

// Config configures the loop.
type Config struct {
	// NodesPerLB is how many nodes to choose per load balancer (NodesPerLB when 0).
	NodesPerLB int
	// Stale is the age after which a node's report no longer counts (DefaultStale when 0).
	Stale time.Duration
	// Publisher serves GSLB global services; nil leaves them NOT_SERVED with a reason.
	Publisher *gslb.Publisher
	// Clock is the time source (time.Now when nil).
	Clock func() time.Time
}

func (c Config) now() time.Time {
	if c.Clock != nil {
		return c.Clock()
	}
	return time.Now()
}

func (c Config) stale() time.Duration {
	if c.Stale > 0 {
		return c.Stale
	}
	return DefaultStale
}

func system(ctx context.Context) context.Context { return authz.SystemContext(ctx, "traffic") }

// ChooseNodes picks the nodes that serve load balancer lb: a group of n zero-size members
// scheduled in the region of its region service (or of the Kubernetes cluster whose API it
// serves) under RACK anti-affinity (partial: fewer
// racks, fewer nodes). It returns the node ids, best first; none when the region has no
// node that may take work.
func ChooseNodes(ctx context.Context, c *ent.Client, lb *ent.LoadBalancer, n int) ([]int, error) {
	ctx = system(ctx)
	region, err := regionOf(ctx, c, lb)
	if err != nil {
		return nil, err
	}
	tenantID, err := lb.QueryTenant().OnlyID(ctx)
	if err != nil {
		return nil, fmt.Errorf("tenant of load balancer %d: %w", lb.ID, err)
	}
	snap, err := placement.Load(ctx, c, tenantID, region)
	if err != nil {
		return nil, err
	}
	cfg := scheduler.DefaultConfig()
	cfg.Quiet = true
	d, err := scheduler.Schedule(&snap.Snapshot, scheduler.Request{TenantID: tenantID, Region: fmt.Sprint(region),
		Count: n, AllowPartial: true, Flavor: footprint(),
		Policy: scheduler.Policy{Zones: []scheduler.ZoneRule{{Kind: scheduler.ZoneRack, Mode: scheduler.ZoneAntiAffinity}}}}, cfg)
	if err != nil {
		return nil, err
	}
	ids := make([]int, 0, len(d.Placements))
	for _, p := range d.Placements {
		if !slices.Contains(ids, p.NodeID) {
			ids = append(ids, p.NodeID)
		}
	}
	return ids, nil
}

// regionOf is the region whose nodes serve lb: its region service's, or that of the
// Kubernetes cluster whose API it serves.
func regionOf(ctx context.Context, c *ent.Client, lb *ent.LoadBalancer) (int, error) {
	id, err := lb.QueryRegionService().QueryRegion().OnlyID(ctx)
	if ent.IsNotFound(err) {
		id, err = c.KubernetesCluster.Query().Where(kubernetescluster.APILoadBalancerID(lb.ID)).QueryRegion().FirstID(ctx)
	}
	if err != nil {
		return 0, fmt.Errorf("region of load balancer %d (neither a region service's nor a Kubernetes API's): %w", lb.ID, err)
	}
	return id, nil
}

// members are the backends of load balancer lb with their addresses (sorted by VM id, then
// address), keeping the health recorded in old for an unchanged VM and address: the replicas
// of its region service, or the control planes of the Kubernetes cluster whose API it serves.
func members(ctx context.Context, c *ent.Client, lb *ent.LoadBalancer, old []fieldtype.LBMember) ([]fieldtype.LBMember, error) {
	var backends []fieldtype.LBMember
	if rs := lb.Edges.RegionService; rs != nil {
		ips, err := c.IPAddress.Query().Where(ipaddress.HasPortWith(port.HasVirtualMachineWith(
			virtualmachine.HasRegionServiceWith(regionservice.ID(rs.ID)), virtualmachine.StatusNEQ(virtualmachine.StatusDeleted)))).
			WithPort(func(q *ent.PortQuery) { q.WithVirtualMachine() }).All(ctx)
		if err != nil {
			return nil, fmt.Errorf("replica addresses of region service %d: %w", rs.ID, err)
		}
		for _, ip := range ips {
			if vm := ip.Edges.Port.Edges.VirtualMachine; vm != nil {
				backends = append(backends, fieldtype.LBMember{VMID: vm.ID, Address: ip.Address})
			}
		}
	} else {
		cps, err := kubecluster.APILoadBalancerMembers(ctx, c, lb.ID)
		if err != nil {
			return nil, err
		}
		for _, m := range cps {
			if m.Address != "" {
				backends = append(backends, fieldtype.LBMember{VMID: m.VMID, Address: m.Address})
			}
		}
	}
	prev := map[string]fieldtype.LBMember{}
	for _, m := range old {
		prev[fmt.Sprint(m.VMID, m.Address)] = m
	}
	out := make([]fieldtype.LBMember, 0, len(backends))
	for _, b := range backends {
		m, ok := prev[fmt.Sprint(b.VMID, b.Address)]
		if !ok {
			m = fieldtype.LBMember{VMID: b.VMID, Address: b.Address, Health: fieldtype.HealthUnknown, Reason: "not checked yet"}
		}
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b fieldtype.LBMember) int {
		return cmp.Or(cmp.Compare(a.VMID, b.VMID), cmp.Compare(a.Address, b.Address))
	})
	return out, nil
}

// status is the status a load balancer with these node states may say at now.
func status(nodes []fieldtype.LBNode, listeners []fieldtype.LBListener, vip string, now time.Time, stale time.Duration) (loadbalancer.Status, string) {
	if vip == "" {
		return loadbalancer.StatusNotRealized, "no VIP"
	}
	if len(listeners) == 0 {
		return loadbalancer.StatusNotRealized, fmt.Sprintf("VIP %s allocated; no listeners: add one (port, protocol, target port)", vip)
	}
	if len(nodes) == 0 {
		return loadbalancer.StatusNotRealized, fmt.Sprintf("VIP %s allocated; no node chosen to serve it yet", vip)
	}
	var why []string
	for _, n := range nodes {
		at, err := time.Parse(time.RFC3339Nano, n.ReportedAt)
		switch {
		case n.ReportedAt == "" || err != nil:
			why = append(why, n.NodeName+": no report yet")
		case now.Sub(at) > stale:
			why = append(why, fmt.Sprintf("%s: last report %s ago", n.NodeName, now.Sub(at).Round(time.Second)))
		case n.Announced && n.Forwarding:
			return loadbalancer.StatusActive, fmt.Sprintf("VIP %s announced and forwarding on %s", vip, activeNames(nodes, now, stale))
		default:
			why = append(why, n.NodeName+": "+cmp.Or(n.Reason, "not forwarding"))
		}
	}
	return loadbalancer.StatusNotRealized, fmt.Sprintf("VIP %s not served: %s", vip, strings.Join(why, "; "))
}

func activeNames(nodes []fieldtype.LBNode, now time.Time, stale time.Duration) string {
	var names []string
	for _, n := range nodes {
		if at, err := time.Parse(time.RFC3339Nano, n.ReportedAt); err == nil && now.Sub(at) <= stale && n.Announced && n.Forwarding {
			names = append(names, n.NodeName)
		}
	}
	return strings.Join(names, ", ")
}

// Report is what a serving node's agent observed of one load balancer.
type Report struct {
	LoadBalancerID, NodeID int
	Announced, Forwarding  bool
	Reason                 string
	Members                []MemberReport
}

// MemberReport is the health a node observed of one member.
type MemberReport struct {
	VMID   int
	Health string
	Reason string
}

// ApplyNodeReport records r as the node's state and its members' health and recomputes the
// status. Only a node chosen to serve the load balancer may report (NOT_FOUND otherwise,
// naming nothing else); the viewer in ctx must be that node's agent or an administrator.
func ApplyNodeReport(ctx context.Context, c *ent.Client, cfg Config, r Report) (*ent.LoadBalancer, error) {
	v := authz.FromContext(ctx)
	// The node's own agent (it may write its node) or whoever may write any load balancer.
	if !v.Can("LoadBalancer", authz.ActWrite) && !slices.Contains(v.Domains("node", "ComputeNode", authz.ActWrite), r.NodeID) {
		return nil, apierr.NotFound("load balancer %d not found", r.LoadBalancerID)
	}
	sys := system(ctx)
	lb, err := c.LoadBalancer.Query().Where(loadbalancer.ID(r.LoadBalancerID), loadbalancer.HasNodesWith(computenode.ID(r.NodeID))).
		WithVip().WithNodes().Only(sys)
	if ent.IsNotFound(err) {
		return nil, apierr.NotFound("load balancer %d not found", r.LoadBalancerID)
	}
	if err != nil {
		return nil, err
	}
	for _, m := range r.Members {
		if m.Health != fieldtype.HealthUp && m.Health != fieldtype.HealthDown && m.Health != fieldtype.HealthUnknown {
			return nil, apierr.Validation("members", "health %q is not UP, DOWN or UNKNOWN", m.Health)
		}
	}
	now := cfg.now().UTC()
	stamp := now.Format(time.RFC3339Nano)
	nodes := nodeStates(lb)
	for i := range nodes {
		if nodes[i].NodeID == r.NodeID {
			nodes[i].Announced, nodes[i].Forwarding, nodes[i].Reason, nodes[i].ReportedAt = r.Announced, r.Forwarding, r.Reason, stamp
		}
	}
	health := map[int]MemberReport{}
	for _, m := range r.Members {
		health[m.VMID] = m
	}
	ms := slices.Clone(lb.Members)
	for i := range ms {
		if h, ok := health[ms[i].VMID]; ok {
			ms[i].Health, ms[i].Reason, ms[i].LastCheck = h.Health, h.Reason, stamp
		}
	}
	st, why := status(nodes, lb.Listeners, vipOf(lb), now, cfg.stale())
	return c.LoadBalancer.UpdateOne(lb).SetNodeStates(nodes).SetMembers(ms).SetStatus(st).SetStatusReason(truncate(why)).Save(sys)
}

func vipOf(lb *ent.LoadBalancer) string {
	if lb.Edges.Vip == nil {
		return ""
	}
	return lb.Edges.Vip.Address
}

func truncate(s string) string {
	if len(s) > 1024 {
		return s[:1021] + "..."
	}
	return s
}

// nodeStates lists lb's serving nodes (Edges.Nodes loaded) with their last states.
func nodeStates(lb *ent.LoadBalancer) []fieldtype.LBNode {
	prev := map[int]fieldtype.LBNode{}
	for _, n := range lb.NodeStates {
		prev[n.NodeID] = n
	}
	out := make([]fieldtype.LBNode, 0, len(lb.Edges.Nodes))
	for _, n := range lb.Edges.Nodes {
		s, ok := prev[n.ID]
		if !ok {
			s = fieldtype.LBNode{NodeID: n.ID}
		}
		s.NodeName = n.Name
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b fieldtype.LBNode) int { return cmp.Compare(a.NodeID, b.NodeID) })
	return out
}

// Loop realizes load balancers and global services in the API (see the package comment).
type Loop struct {
	Client *ent.Client
	Config Config
	Log    *slog.Logger
}

func (l *Loop) log() *slog.Logger {
	if l.Log != nil {
		return l.Log
	}
	return slog.Default()
}

// Run calls Once every interval until ctx ends.
func (l *Loop) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if err := l.Once(ctx); err != nil {
			l.log().Warn("traffic reconcile", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Once reconciles every load balancer of a region service or of a Kubernetes cluster's API,
// then every global service.
func (l *Loop) Once(ctx context.Context) error {
	sys := system(ctx)
	apis, err := kubecluster.APILoadBalancerIDs(sys, l.Client)
	if err != nil {
		return err
	}
	lbs, err := l.Client.LoadBalancer.Query().Where(loadbalancer.Or(loadbalancer.HasRegionService(), loadbalancer.IDIn(apis...)),
		loadbalancer.StatusNotIn(loadbalancer.StatusDeleting)).WithVip().WithNodes().WithRegionService().
		Order(ent.Asc(loadbalancer.FieldID)).All(sys)
	if err != nil {
		return fmt.Errorf("load balancers: %w", err)
	}
	var errs []error
	for _, lb := range lbs {
		if err := l.reconcileLB(ctx, lb); err != nil {
			errs = append(errs, fmt.Errorf("load balancer %d: %w", lb.ID, err))
		}
	}
	gss, err := l.Client.GlobalService.Query().Where(globalservice.StatusNotIn(globalservice.StatusDeleting)).
		Order(ent.Asc(globalservice.FieldID)).All(sys)
	if err != nil {
		return errors.Join(append(errs, fmt.Errorf("global services: %w", err))...)
	}
	for _, gs := range gss {
		if err := l.reconcileGlobal(ctx, gs); err != nil {
			errs = append(errs, fmt.Errorf("global service %d: %w", gs.ID, err))
		}
	}
	return errors.Join(errs...)
}

func (l *Loop) reconcileLB(ctx context.Context, lb *ent.LoadBalancer) error {
	sys := system(ctx)
	var add []int
	if len(lb.Edges.Nodes) == 0 {
		ids, err := ChooseNodes(ctx, l.Client, lb, cmp.Or(l.Config.NodesPerLB, NodesPerLB))
		if err != nil {
			return err
		}
		if len(ids) > 0 {
			nodes, err := l.Client.ComputeNode.Query().Where(computenode.IDIn(ids...)).All(sys)
			if err != nil {
				return err
			}
			lb.Edges.Nodes, add = nodes, ids
		}
	}
	ms, err := members(sys, l.Client, lb, lb.Members)
	if err != nil {
		return err
	}
	nodes := nodeStates(lb)
	st, why := status(nodes, lb.Listeners, vipOf(lb), l.Config.now(), l.Config.stale())
	why = truncate(why)
	if len(add) == 0 && slices.Equal(ms, lb.Members) && slices.Equal(nodes, lb.NodeStates) && st == lb.Status && why == lb.StatusReason {
		return nil
	}
	_, err = dbtx.Run(ctx, l.Client, func(c *ent.Client) error {
		// The row lock makes the choice of nodes once per load balancer, whatever the number
		// of workers: one that chose while another had already chosen drops its choice and
		// takes the winner's next round.
		locked, err := c.LoadBalancer.Query().Where(loadbalancer.ID(lb.ID)).Modify(rowlock.ForUpdate).Only(sys)
		if err != nil {
			return err
		}
		if len(add) > 0 {
			n, err := locked.QueryNodes().Count(sys)
			if err != nil {
				return err
			}
			if n > 0 {
				return nil
			}
		}
		after, err := c.LoadBalancer.UpdateOne(lb).AddNodeIDs(add...).SetMembers(ms).SetNodeStates(nodes).
			SetStatus(st).SetStatusReason(why).Save(sys)
		if err != nil {
			return err
		}
		return audit.Write(ctx, c, audit.Entry{System: audit.Traffic, Action: "realizeLoadBalancer", Subject: after, Before: lb, After: after})
	})
	return err
}

func (l *Loop) reconcileGlobal(ctx context.Context, gs *ent.GlobalService) error {
	sys := system(ctx)
	svcs, err := gs.QueryRegionServices().WithLoadBalancer(func(q *ent.LoadBalancerQuery) { q.WithVip() }).
		Order(ent.Asc(regionservice.FieldID)).All(sys)
	if err != nil {
		return err
	}
	var ms []gslb.Member
	why := map[string]string{}
	for _, s := range svcs {
		lb := s.Edges.LoadBalancer
		if lb == nil || lb.Edges.Vip == nil {
			why[s.Name] = "no load balancer with a VIP"
			continue
		}
		vip, err := netip.ParseAddr(lb.Edges.Vip.Address)
		if err != nil {
			why[s.Name] = "VIP " + lb.Edges.Vip.Address + " unreadable"
			continue
		}
		m := gslb.Member{Name: s.Name, VIP: vip, Forwarding: lb.Status == loadbalancer.StatusActive}
		if len(lb.Listeners) > 0 {
			m.Port = lb.Listeners[0].Port
		}
		ms = append(ms, m)
	}
	var answer []netip.Addr
	switch {
	case gs.Mode == globalservice.ModeAnycast:
		shared, err := AnycastVIP(ctx, l.Client, gs)
		if err != nil {
			return err
		}
		vip, _ := netip.ParseAddr(shared)
		for _, m := range ms {
			if m.Forwarding && vip.IsValid() {
				answer = []netip.Addr{vip}
			} else if !m.Forwarding {
				why[m.Name] = "its load balancer does not announce " + shared
			}
		}
	case gs.Fqdn == "":
		why[""] = "no FQDN to answer for"
	case l.Config.Publisher == nil:
		why[""] = "no GSLB DNS server configured (VIRTFLOW_GSLB_*)"
	default:
		res, err := l.Config.Publisher.Sync(ctx, gslb.Service{FQDN: gs.Fqdn, TTL: gs.TTL, Members: ms})
		if err != nil {
			why[""] = err.Error()
		} else {
			answer = res.Answer
			for k, v := range res.Unhealthy {
				why[k] = v
			}
		}
	}
	strs := make([]string, len(answer))
	for i, a := range answer {
		strs[i] = a.String()
	}
	st, reason := globalservice.StatusActive, ""
	if len(answer) == 0 {
		st = globalservice.StatusNotServed
	}
	if len(why) > 0 {
		var parts []string
		for k, v := range why {
			parts = append(parts, strings.TrimPrefix(k+": "+v, ": "))
		}
		slices.Sort(parts)
		reason = truncate(strings.Join(parts, "; "))
	}
	if st == gs.Status && reason == gs.StatusReason && slices.Equal(strs, gs.DNSAnswer) {
		return nil
	}
	_, err = dbtx.Run(ctx, l.Client, func(c *ent.Client) error {
		after, err := c.GlobalService.UpdateOne(gs).SetStatus(st).SetStatusReason(reason).SetDNSAnswer(strs).Save(sys)
		if err != nil {
			return err
		}
		return audit.Write(ctx, c, audit.Entry{System: audit.Traffic, Action: "publishGlobalService", Subject: after, Before: gs, After: after})
	})
	return err
}

// AnycastVIP is the VIP a global service in ANYCAST mode is reached at: the VIP of the load
// balancer of its first member (lowest region service id) that has one; "" when none has.
// The load balancers of all its members serve and announce it instead of their own VIP (see
// ForNode), so the routers see one address from every region; a member detached serves its
// own VIP again and its nodes withdraw the shared one.
func AnycastVIP(ctx context.Context, c *ent.Client, gs *ent.GlobalService) (string, error) {
	svcs, err := gs.QueryRegionServices().WithLoadBalancer(func(q *ent.LoadBalancerQuery) { q.WithVip() }).
		Order(ent.Asc(regionservice.FieldID)).All(system(ctx))
	if err != nil {
		return "", fmt.Errorf("members of global service %d: %w", gs.ID, err)
	}
	for _, s := range svcs {
		if lb := s.Edges.LoadBalancer; lb != nil && lb.Edges.Vip != nil {
			return lb.Edges.Vip.Address, nil
		}
	}
	return "", nil
}

// NodeLB is a load balancer as a node serving it must realize it.
type NodeLB struct {
	ID              int
	VIP             string
	Algorithm       string
	CheckIntervalMs int
	Listeners       []fieldtype.LBListener
	Members         []fieldtype.LBMember
}

// ForNode lists the load balancers node serves (by id), for its agent or an administrator
// (NOT_FOUND for anyone else, naming nothing), with their VIPs and members.
func ForNode(ctx context.Context, c *ent.Client, node int) ([]NodeLB, error) {
	v := authz.FromContext(ctx)
	if !v.Can("LoadBalancer", authz.ActRead) && !slices.Contains(v.Domains("node", "ComputeNode", authz.ActWrite), node) {
		return nil, apierr.NotFound("compute node %d not found", node)
	}
	sys := system(ctx)
	lbs, err := c.LoadBalancer.Query().Where(loadbalancer.HasNodesWith(computenode.ID(node)),
		loadbalancer.StatusNotIn(loadbalancer.StatusDeleting)).WithVip().
		WithRegionService(func(q *ent.RegionServiceQuery) { q.WithGlobalService() }).
		Order(ent.Asc(loadbalancer.FieldID)).All(sys)
	if err != nil {
		return nil, fmt.Errorf("load balancers of node %d: %w", node, err)
	}
	out := make([]NodeLB, 0, len(lbs))
	// Every VIP a load balancer of the node owns is served by it; a shared anycast VIP only
	// by a load balancer of the node that does not own it when no other one serves it yet.
	handed := map[string]bool{}
	for _, lb := range lbs {
		if lb.Edges.Vip != nil {
			handed[lb.Edges.Vip.Address] = true
		}
	}
	for _, lb := range lbs {
		if lb.Edges.Vip == nil {
			continue
		}
		vip := lb.Edges.Vip.Address
		if rs := lb.Edges.RegionService; rs != nil && rs.Edges.GlobalService != nil && rs.Edges.GlobalService.Mode == globalservice.ModeAnycast {
			shared, err := AnycastVIP(sys, c, rs.Edges.GlobalService)
			if err != nil {
				return nil, err
			}
			// One node serves an address once: a member served by a node that already
			// serves the shared VIP (the same region's) keeps its own.
			if shared != "" && !handed[shared] {
				vip, handed[shared] = shared, true
			}
		}
		out = append(out, NodeLB{ID: lb.ID, VIP: vip, Algorithm: string(lb.Algorithm),
			CheckIntervalMs: lb.HealthCheckIntervalMs, Listeners: lb.Listeners, Members: lb.Members})
	}
	return out, nil
}
