package nodeagent

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"reflect"
	"strconv"
	"time"

	"github.com/virtflow/virtflow/agent/lbnet"
)

// DefaultLoadBalancerInterval is how often the agent syncs the load balancers it serves when
// Config.LoadBalancerInterval is zero.
const DefaultLoadBalancerInterval = time.Second

// lbReportEvery is how often an unchanged load-balancer state is reported again, so that the
// API sees the node is alive (traffic.DefaultStale is 15 s).
const lbReportEvery = 5 * time.Second

// lbSync realizes the load balancers the node serves (Config.LoadBalancers) and reports
// their state: it reads them from the API, reconciles the node's lbnet.Node, syncs it (VIPs
// announced while they forward) and reports each state that changed, or every
// lbReportEvery.
type lbSync struct {
	ag   *Agent
	node *lbnet.Node
	last map[int]lbnet.State
	sent map[int]time.Time
}

func (s *lbSync) sync(ctx context.Context) error {
	data, err := nodeLoadBalancers(ctx, s.ag.api, s.ag.NodeID())
	if err != nil {
		return fmt.Errorf("read load balancers: %w", err)
	}
	var specs []lbnet.Spec
	var errs []error
	for _, lb := range data.NodeLoadBalancers {
		spec, err := lbSpec(lb)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		specs = append(specs, spec)
	}
	if err := s.node.Reconcile(specs); err != nil {
		errs = append(errs, err)
	}
	states, err := s.node.Sync(ctx)
	if err != nil {
		errs = append(errs, err)
	}
	now := time.Now()
	for _, st := range states {
		prev, seen := s.last[st.ID]
		if seen && sameState(prev, st) && now.Sub(s.sent[st.ID]) < lbReportEvery {
			continue
		}
		if err := s.report(ctx, st); err != nil {
			errs = append(errs, err)
			continue
		}
		s.last[st.ID], s.sent[st.ID] = st, now
	}
	return errors.Join(errs...)
}

// sameState compares what a report carries, not when members were checked.
func sameState(a, b lbnet.State) bool {
	strip := func(s lbnet.State) lbnet.State {
		ms := make([]lbnet.MemberHealth, len(s.Members))
		for i, m := range s.Members {
			m.CheckedAt = time.Time{}
			ms[i] = m
		}
		s.Members = ms
		return s
	}
	return reflect.DeepEqual(strip(a), strip(b))
}

func (s *lbSync) report(ctx context.Context, st lbnet.State) error {
	in := LoadBalancerStateInput{LoadBalancerID: strconv.Itoa(st.ID), NodeID: s.ag.NodeID(), Announced: st.Announced,
		Forwarding: st.Forwarding, Members: []LoadBalancerMemberHealthInput{}}
	if st.Reason != "" {
		in.Reason = &st.Reason
	}
	for _, m := range st.Members {
		mh := LoadBalancerMemberHealthInput{VmID: m.ID, Health: m.Health}
		if m.Reason != "" {
			mh.Reason = &m.Reason
		}
		in.Members = append(in.Members, mh)
	}
	if _, err := reportLoadBalancerState(ctx, s.ag.api, in); err != nil {
		return fmt.Errorf("report load balancer %d: %w", st.ID, err)
	}
	return nil
}

// lbSpec is the lbnet form of a load balancer the API says the node serves.
func lbSpec(lb nodeLoadBalancersNodeLoadBalancersNodeLoadBalancer) (lbnet.Spec, error) {
	id, err := strconv.Atoi(lb.Id)
	if err != nil {
		return lbnet.Spec{}, fmt.Errorf("load balancer id %q: %w", lb.Id, err)
	}
	vip, err := netip.ParseAddr(lb.Vip)
	if err != nil {
		return lbnet.Spec{}, fmt.Errorf("load balancer %d: VIP %q: %w", id, lb.Vip, err)
	}
	spec := lbnet.Spec{ID: id, VIP: vip, Algorithm: lb.Algorithm,
		CheckInterval: time.Duration(lb.HealthCheckIntervalMs) * time.Millisecond}
	for _, l := range lb.Listeners {
		spec.Listeners = append(spec.Listeners, lbnet.Listener{Port: l.Port, Protocol: l.Protocol, TargetPort: l.TargetPort})
	}
	for _, m := range lb.Members {
		a, err := netip.ParseAddr(m.Address)
		if err != nil {
			return lbnet.Spec{}, fmt.Errorf("load balancer %d: member %d address %q: %w", id, m.VmID, m.Address, err)
		}
		spec.Members = append(spec.Members, lbnet.Member{ID: m.VmID, Address: a})
	}
	return spec, spec.Validate()
}

// runLoadBalancers syncs the node's load balancers every interval until ctx ends, then
// withdraws every VIP and stops the proxy. A Config.LoadBalancers without an Announcer
// announces through the agent's own table (Announcer("lb")).
func (ag *Agent) runLoadBalancers(ctx context.Context) {
	s := &lbSync{ag: ag, node: ag.cfg.LoadBalancers, last: map[int]lbnet.State{}, sent: map[int]time.Time{}}
	if s.node.Announcer == nil {
		// The VIPs go out through the node's BGP speaker with its VMs' /32s (routed mode);
		// without peers the table holds them and the route state says so.
		s.node.Announcer = ag.Announcer("lb")
	}
	d := ag.cfg.LoadBalancerInterval
	if d <= 0 {
		d = DefaultLoadBalancerInterval
	}
	ag.every(ctx, d, "load balancers", s.sync).wait()
	if err := s.node.Reconcile(nil); err != nil {
		ag.log.Warn("stop load balancers", "err", err)
	}
}
