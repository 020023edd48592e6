package placement

import (
	"context"
	"fmt"
	"time"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/domain/ipam"
	"github.com/virtflow/virtflow/domain/metering"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/datacenter"
	"github.com/virtflow/virtflow/ent/ipaddress"
	"github.com/virtflow/virtflow/ent/loadbalancer"
	"github.com/virtflow/virtflow/ent/network"
	"github.com/virtflow/virtflow/ent/region"
	"github.com/virtflow/virtflow/ent/regionservice"
)

// ReasonLBNotRealized is the status reason of a load balancer recorded with its VIP: no node
// forwards traffic for it yet (realizing load balancing on nodes is future work), so it
// says so instead of staying INITIALIZING.
const ReasonLBNotRealized = "VIP %s allocated; load balancing is not realized on nodes yet: traffic to the VIP is not forwarded to the replicas"

// createLoadBalancer creates the load balancer of a load-balanced region service in t: named
// after the service, with a VIP allocated by IPAM in the lowest-id SERVICE network of the
// service's region (VALIDATION on loadBalanced when the region has none), status
// NOT_REALIZED with ReasonLBNotRealized. It acts as the system: the viewer was allowed to
// create the service, and the load balancer belongs to it.
func (t *txn) createLoadBalancer(ctx context.Context, svc *ent.RegionService, tenantID, regionID int, now time.Time) (*ent.LoadBalancer, error) {
	sys := system(ctx)
	netID, err := t.c.Network.Query().Where(network.PurposeEQ(network.PurposeService),
		network.HasDatacenterWith(datacenter.HasRegionWith(region.ID(regionID)))).
		Order(ent.Asc(network.FieldID)).FirstID(authz.Unrestricted(ctx))
	if ent.IsNotFound(err) {
		return nil, apierr.Validation("loadBalanced", "the region has no SERVICE network to allocate the load balancer's VIP in")
	}
	if err != nil {
		return nil, fmt.Errorf("service network of region %d: %w", regionID, err)
	}
	lb, err := t.c.LoadBalancer.Create().SetName(svc.Name).SetTenantID(tenantID).SetRegionServiceID(svc.ID).Save(sys)
	if err != nil {
		return nil, fmt.Errorf("create load balancer of region service %s: %w", svc.Name, err)
	}
	vip, err := ipam.Allocate(sys, t.c, ipam.Request{NetworkID: netID, LoadBalancerID: &lb.ID,
		Description: new("VIP of region service " + svc.Name)})
	if err != nil {
		return nil, err
	}
	// The ledger: the load balancer and its VIP are reserved from now on.
	if err := metering.Open(ctx, t.c, now,
		metering.Interval{Kind: metering.KindLoadBalancer, ResourceID: lb.ID, Name: lb.Name, TenantID: tenantID, RegionID: regionID},
		metering.Interval{Kind: metering.KindIPAddress, ResourceID: vip.ID, Name: vip.Address, TenantID: tenantID, RegionID: regionID, IOClass: "VIP"},
	); err != nil {
		return nil, err
	}
	return t.c.LoadBalancer.UpdateOne(lb).SetStatus(loadbalancer.StatusNotRealized).
		SetStatusReason(fmt.Sprintf(ReasonLBNotRealized, vip.Address)).Save(sys)
}

// deleteLoadBalancers deletes the load balancers of region service id with their VIPs
// (releasing the addresses), so the service itself can go. It acts as the system: it
// follows from deleting the service.
func (t *txn) deleteLoadBalancers(ctx context.Context, id int, now time.Time) error {
	sys := system(ctx)
	lbs, err := t.c.LoadBalancer.Query().Where(loadbalancer.HasRegionServiceWith(regionservice.ID(id))).IDs(sys)
	if err != nil {
		return fmt.Errorf("load balancers of region service %d: %w", id, err)
	}
	for _, lb := range lbs {
		vips, err := t.c.IPAddress.Query().Where(ipaddress.HasLoadBalancerWith(loadbalancer.ID(lb))).IDs(sys)
		if err != nil {
			return fmt.Errorf("VIP of load balancer %d: %w", lb, err)
		}
		if err := metering.Close(ctx, t.c, now, metering.KindIPAddress, vips...); err != nil {
			return err
		}
		if err := metering.Close(ctx, t.c, now, metering.KindLoadBalancer, lb); err != nil {
			return err
		}
		if _, err := t.c.IPAddress.Delete().Where(ipaddress.HasLoadBalancerWith(loadbalancer.ID(lb))).Exec(sys); err != nil {
			return fmt.Errorf("release VIP of load balancer %d: %w", lb, err)
		}
		if err := t.c.LoadBalancer.DeleteOneID(lb).Exec(sys); err != nil {
			return fmt.Errorf("delete load balancer %d: %w", lb, err)
		}
	}
	return nil
}
