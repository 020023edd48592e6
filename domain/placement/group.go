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
	"github.com/virtflow/virtflow/ent/schema/fieldtype"
	"github.com/virtflow/virtflow/ent/virtualmachine"
)

// GroupVM is one VM of a Group.
type GroupVM struct {
	Name, Description string
	Type              virtualmachine.Type
	UserData          string
	Labels            fieldtype.Labels
}

// Group is VMs of one flavor and image placed together under one policy, for a system
// workflow (package kubecluster): the caller has checked the tenant's right to what the
// VMs are for.
type Group struct {
	TenantID, RegionID, FlavorID int
	ImageID                      int // 0: none
	Policy                       fieldtype.SchedulePolicy
	// AvailabilityZone, when set, keeps the group in the zone of this name.
	AvailabilityZone string
	// GroupNodeIDs are the nodes of the group's VMs that already run (zone rules count them).
	GroupNodeIDs []int
	// KubernetesClusterID links the VMs to their cluster (0: none).
	KubernetesClusterID int
	// SSHKeyIDs are put on every VM's config drive.
	SSHKeyIDs []int
	VMs       []GroupVM
}

// CreateGroup places g's VMs as one group and creates them, with their NICs on the tenant's
// default VM network, in client's transaction (one of its own when client is not a
// transaction's). Quota and capacity are checked by the database as for any placement: when
// the group does not fit in full, the error is NO_CAPACITY or QUOTA_EXCEEDED and nothing of
// it is written (the caller's transaction must roll back). It acts as the system.
func (p *Placer) CreateGroup(ctx context.Context, client *ent.Client, g Group) ([]*ent.VirtualMachine, error) {
	if len(g.VMs) == 0 {
		return nil, nil
	}
	var vms []*ent.VirtualMachine
	own, err := inTx(ctx, client, func(t *txn) error {
		sys := system(ctx)
		f, err := loadFlavor(ctx, t.c, g.FlavorID, "flavorID")
		if err != nil {
			return err
		}
		if f.Disabled {
			return apierr.Validation("flavorID", "flavor %s is disabled for new VMs", f.Name)
		}
		placed, err := p.place(ctx, t, Request{TenantID: g.TenantID, RegionID: g.RegionID, Flavor: f,
			Count: len(g.VMs), Policy: g.Policy, AvailabilityZone: g.AvailabilityZone, GroupNodeIDs: g.GroupNodeIDs})
		if err != nil {
			return err
		}
		d := placed.Decision
		builders := make([]*ent.VirtualMachineCreate, len(d.Placements))
		for i, pl := range d.Placements {
			v := g.VMs[i]
			mask, numa := placed.HeldBy(pl.NodeID)
			b := t.c.VirtualMachine.Create().SetStatusChangedAt(p.cfg.Clock()).
				SetName(v.Name).SetDescription(v.Description).SetType(v.Type).
				SetTenantID(g.TenantID).SetRegionID(g.RegionID).SetFlavorID(f.ID).
				SetLabels(v.Labels).SetSchedulePolicy(g.Policy).
				SetNodeID(pl.NodeID).SetClusterID(d.ClusterID).
				SetAllocatedVcpus(f.Vcpus).SetAllocatedMemoryMB(f.MemoryMB).SetAllocatedDiskGB(f.DiskGB).
				SetExclusiveMask(mask).SetNillableNumaNode(numa).
				SetStatusReason("placed; waiting to be provisioned")
			if zone := placed.Snapshot.nodes[pl.NodeID].azID; zone != 0 {
				b.SetAvailabilityZoneID(zone)
			}
			if v.UserData != "" {
				b.SetUserData(v.UserData)
			}
			if g.ImageID != 0 {
				b.SetImageID(g.ImageID)
			}
			if g.KubernetesClusterID != 0 {
				b.SetKubernetesClusterID(g.KubernetesClusterID)
			}
			if len(g.SSHKeyIDs) > 0 {
				b.AddSSHKeyIDs(g.SSHKeyIDs...)
			}
			builders[i] = b
		}
		if vms, err = t.c.VirtualMachine.CreateBulk(builders...).Save(sys); err != nil {
			return fmt.Errorf("create VMs %s…: %w", g.VMs[0].Name, err)
		}
		ids := make([]int, len(vms))
		for i, vm := range vms {
			ids[i] = vm.ID
		}
		if err := metering.OpenVMs(ctx, t.c, p.cfg.Clock(), ids...); err != nil {
			return err
		}
		nets, err := networksFor(ctx, t.c, g.TenantID, g.RegionID, nil, "networkIDs")
		if err != nil {
			return err
		}
		return t.attachNICs(ctx, ids, nets, "networkIDs")
	})
	if err != nil {
		return nil, collision(err)
	}
	if own {
		for i := range vms {
			vms[i] = vms[i].Unwrap()
		}
	}
	return vms, nil
}

// CreateVIPLoadBalancer creates a load balancer named name for the tenant with a VIP
// allocated by IPAM in the lowest-id SERVICE network of the region (VALIDATION on field when
// the region has none), status NOT_REALIZED with ReasonLBNotRealized, in client's
// transaction, as the system. It is how a Kubernetes cluster gets its API endpoint.
func (p *Placer) CreateVIPLoadBalancer(ctx context.Context, client *ent.Client, name, description, field string, tenantID, regionID int) (*ent.LoadBalancer, *ent.IPAddress, error) {
	var lb *ent.LoadBalancer
	var vip *ent.IPAddress
	own, err := inTx(ctx, client, func(t *txn) error {
		sys := system(ctx)
		netID, err := t.c.Network.Query().Where(network.PurposeEQ(network.PurposeService),
			network.HasDatacenterWith(datacenter.HasRegionWith(region.ID(regionID)))).
			Order(ent.Asc(network.FieldID)).FirstID(authz.Unrestricted(ctx))
		if ent.IsNotFound(err) {
			return apierr.Validation(field, "the region has no SERVICE network to allocate the VIP in")
		}
		if err != nil {
			return fmt.Errorf("service network of region %d: %w", regionID, err)
		}
		created, err := t.c.LoadBalancer.Create().SetName(name).SetTenantID(tenantID).Save(sys)
		if err != nil {
			return fmt.Errorf("create load balancer %s: %w", name, err)
		}
		vip, err = ipam.Allocate(sys, t.c, ipam.Request{NetworkID: netID, LoadBalancerID: &created.ID, Description: new(description)})
		if err != nil {
			return err
		}
		if err := metering.Open(ctx, t.c, p.cfg.Clock(),
			metering.Interval{Kind: metering.KindLoadBalancer, ResourceID: created.ID, Name: created.Name, TenantID: tenantID, RegionID: regionID},
			metering.Interval{Kind: metering.KindIPAddress, ResourceID: vip.ID, Name: vip.Address, TenantID: tenantID, RegionID: regionID, IOClass: "VIP"},
		); err != nil {
			return err
		}
		lb, err = t.c.LoadBalancer.UpdateOne(created).SetStatus(loadbalancer.StatusNotRealized).
			SetStatusReason(fmt.Sprintf(ReasonLBNotRealized, vip.Address)).Save(sys)
		return err
	})
	if err != nil {
		return nil, nil, collision(err)
	}
	if own {
		lb, vip = lb.Unwrap(), vip.Unwrap()
	}
	return lb, vip, nil
}

// DeleteVIPLoadBalancer deletes load balancer id and releases its VIPs, closing their
// ledger intervals, as the system; a load balancer that is gone is no error.
func (p *Placer) DeleteVIPLoadBalancer(ctx context.Context, client *ent.Client, id int, now time.Time) error {
	_, err := inTx(ctx, client, func(t *txn) error {
		sys := system(ctx)
		vips, err := t.c.IPAddress.Query().Where(ipaddress.HasLoadBalancerWith(loadbalancer.ID(id))).IDs(sys)
		if err != nil {
			return fmt.Errorf("VIP of load balancer %d: %w", id, err)
		}
		if err := metering.Close(ctx, t.c, now, metering.KindIPAddress, vips...); err != nil {
			return err
		}
		if err := metering.Close(ctx, t.c, now, metering.KindLoadBalancer, id); err != nil {
			return err
		}
		if _, err := t.c.IPAddress.Delete().Where(ipaddress.HasLoadBalancerWith(loadbalancer.ID(id))).Exec(sys); err != nil {
			return fmt.Errorf("release VIP of load balancer %d: %w", id, err)
		}
		if _, err := t.c.LoadBalancer.Delete().Where(loadbalancer.ID(id)).Exec(sys); err != nil {
			return fmt.Errorf("delete load balancer %d: %w", id, err)
		}
		return nil
	})
	return err
}
