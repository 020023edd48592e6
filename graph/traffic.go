package graph

import (
	"context"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/controllers/traffic"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/schema/fieldtype"
	"github.com/virtflow/virtflow/graph/model"
)

// lbReport is the traffic report of a reportLoadBalancerState input.
func lbReport(in model.LoadBalancerStateInput) traffic.Report {
	r := traffic.Report{LoadBalancerID: in.LoadBalancerID, NodeID: in.NodeID, Announced: in.Announced, Forwarding: in.Forwarding}
	if in.Reason != nil {
		r.Reason = *in.Reason
	}
	for _, m := range in.Members {
		mr := traffic.MemberReport{VMID: m.VMID, Health: m.Health}
		if m.Reason != nil {
			mr.Reason = *m.Reason
		}
		r.Members = append(r.Members, mr)
	}
	return r
}

// nodeLoadBalancers is the GraphQL form of the load balancers a node serves.
func nodeLoadBalancers(lbs []traffic.NodeLB) []*model.NodeLoadBalancer {
	out := make([]*model.NodeLoadBalancer, len(lbs))
	for i, lb := range lbs {
		m := &model.NodeLoadBalancer{ID: lb.ID, Vip: lb.VIP, Algorithm: lb.Algorithm, HealthCheckIntervalMs: lb.CheckIntervalMs,
			Listeners: []*fieldtype.LBListener{}, Members: []*fieldtype.LBMember{}}
		for _, l := range lb.Listeners {
			m.Listeners = append(m.Listeners, &l)
		}
		for _, mb := range lb.Members {
			m.Members = append(m.Members, &mb)
		}
		out[i] = m
	}
	return out
}

// deleteLoadBalancer deletes a load balancer for the caller. The serving nodes the traffic
// loop chose (as the system) are the load balancer's own state, not a reference that should
// block its deletion (SafeDelete would refuse, and tenants may not unlink nodes): they are let
// go as the system in the mutation's transaction; the caller's delete still decides, and its
// refusal rolls the whole mutation back.
func (r *Resolver) deleteLoadBalancer(ctx context.Context, id int) error {
	if err := r.ent(ctx).LoadBalancer.UpdateOneID(id).ClearNodes().Exec(authz.SystemContext(ctx, "traffic")); err != nil && !ent.IsNotFound(err) {
		return err
	}
	return r.ent(ctx).LoadBalancer.SafeDelete(ctx, id)
}
