package placement

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"entgo.io/ent/dialect/sql"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/domain/metering"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/network"
	"github.com/virtflow/virtflow/ent/regionservice"
	"github.com/virtflow/virtflow/ent/schema/fieldtype"
	"github.com/virtflow/virtflow/ent/virtualmachine"
)

// ServiceLabel is the label every replica of a region service carries, with the service's
// name as its value.
const ServiceLabel = "virtflow.io/region-service"

// MaxReplicas is the most replicas a region service may have (the schema's limit).
const MaxReplicas = 10000

// CreateService creates the region service of input as the viewer in ctx and its replicas
// VMs, named <service>-1, <service>-2, …, placed as one group under the service's schedule
// policy (zone anti-affinity holds across the group). A group that does not fit in full is
// not created at all, unless the service allows partial placement: then as many replicas
// as fit are created and replicas says how many.
func (p *Placer) CreateService(ctx context.Context, client *ent.Client, input ent.CreateRegionServiceInput) (*ent.RegionService, error) {
	replicas := 1
	if input.Replicas != nil {
		replicas = *input.Replicas
	}
	if replicas > 0 && input.FlavorID == nil {
		return nil, apierr.Validation("flavorID", "a region service with replicas needs a flavor")
	}
	var svc *ent.RegionService
	netIDs := input.NetworkIDs // linked by placement once checked (networksFor), as for a VM
	input.NetworkIDs = nil
	own, err := inTx(ctx, client, func(t *txn) error {
		created, err := t.c.RegionService.Create().SetInput(input).SetStatusChangedAt(p.cfg.Clock()).Save(ctx)
		if err != nil {
			return err
		}
		if len(netIDs) > 0 {
			if _, err := networksFor(ctx, t.c, input.TenantID, input.RegionID, netIDs, "networkIDs"); err != nil {
				return err
			}
			if err := t.c.RegionService.UpdateOne(created).AddNetworkIDs(netIDs...).Exec(system(ctx)); err != nil {
				return err
			}
		}
		svc = created
		if created.LoadBalanced {
			if _, err := t.createLoadBalancer(ctx, created, input.TenantID, input.RegionID, p.cfg.Clock()); err != nil {
				return err
			}
		}
		if replicas == 0 {
			return nil
		}
		f, err := loadFlavor(ctx, t.c, *input.FlavorID, "flavorID")
		if err != nil {
			return err
		}
		if f.Disabled {
			return apierr.Validation("flavorID", "flavor %s is disabled for new VMs", f.Name)
		}
		row, err := loadService(ctx, t.c, created.ID)
		if err != nil {
			return err
		}
		svc, err = p.growTo(ctx, t, created.ID, row, f, nil, replicas, svc)
		return err
	})
	if err != nil {
		return nil, collision(err)
	}
	if own && svc != nil {
		svc = svc.Unwrap()
	}
	return svc, nil
}

// ScaleService sets a region service's replicas: more places the new VMs as a group next
// to the running ones (their nodes count for zone rules and spreading), fewer deletes the
// highest-numbered replicas, 0 deletes the service and returns nil. Concurrent scales of
// one service take turns on its row lock.
func (p *Placer) ScaleService(ctx context.Context, client *ent.Client, id, replicas int) (*ent.RegionService, error) {
	if replicas < 0 || replicas > MaxReplicas {
		return nil, apierr.Validation("replicas", "replicas must be between 0 and %d", MaxReplicas)
	}
	var svc *ent.RegionService
	own, err := inTx(ctx, client, func(t *txn) error {
		if err := t.lockService(ctx, id); err != nil {
			return err
		}
		row, err := loadService(ctx, t.c, id)
		if err != nil {
			return err
		}
		running, err := replicasOf(ctx, t.c, row)
		if err != nil {
			return err
		}
		switch {
		case replicas == 0:
			return p.deleteService(ctx, t, id, running)
		case replicas < len(running):
			if svc, err = t.c.RegionService.UpdateOneID(id).SetReplicas(replicas).Save(ctx); err != nil {
				return err
			}
			_, err = p.deleteReplicas(ctx, t, running[replicas:])
			return err
		case replicas > len(running):
			// The viewer's update first: it checks the viewer may change the service.
			if svc, err = t.c.RegionService.UpdateOneID(id).SetReplicas(replicas).Save(ctx); err != nil {
				return err
			}
			if row.Flavor == 0 {
				return apierr.Validation("replicas", "region service %s has no flavor to create replicas of", row.Name)
			}
			f, err := loadFlavor(ctx, t.c, row.Flavor, "replicas")
			if err != nil {
				return err
			}
			svc, err = p.growTo(ctx, t, id, row, f, running, replicas, svc)
			return err
		default:
			svc, err = t.c.RegionService.UpdateOneID(id).SetReplicas(replicas).Save(ctx)
			return err
		}
	})
	if err != nil {
		return nil, collision(err)
	}
	if own && svc != nil {
		svc = svc.Unwrap()
	}
	return svc, nil
}

// DeleteService deletes a region service and all its VMs as the viewer in ctx, giving
// back what they held.
func (p *Placer) DeleteService(ctx context.Context, client *ent.Client, id int) error {
	_, err := inTx(ctx, client, func(t *txn) error {
		if err := t.lockService(ctx, id); err != nil {
			return err
		}
		row, err := loadService(ctx, t.c, id)
		if err != nil {
			return err
		}
		running, err := replicasOf(ctx, t.c, row)
		if err != nil {
			return err
		}
		return p.deleteService(ctx, t, id, running)
	})
	return collision(err)
}

// lockService checks the viewer may see the service (NOT_FOUND otherwise) and locks its
// row for the rest of the transaction.
func (t *txn) lockService(ctx context.Context, id int) error {
	if ok, err := t.c.RegionService.Query().Where(regionservice.ID(id)).Exist(ctx); err != nil {
		return err
	} else if !ok {
		return apierr.NotFound("region service %d not found", id)
	}
	return t.take(ctx, rowKey{classService, id})
}

// deleteService deletes the replicas and then the service, as the viewer. When
// Config.ReplicaRemover took some replicas over, the service stays DELETING until the last of them
// is gone (settleReplicas deletes it then).
func (p *Placer) deleteService(ctx context.Context, t *txn, id int, running []replica) error {
	taken, err := p.deleteReplicas(ctx, t, running)
	if err != nil {
		return err
	}
	if taken > 0 {
		return t.c.RegionService.UpdateOneID(id).SetReplicas(0).SetStatus(regionservice.StatusDeleting).
			SetStatusChangedAt(p.cfg.Clock()).
			SetStatusReason(fmt.Sprintf("deleting: waiting for %d replicas to be removed from their nodes", taken)).Exec(system(ctx))
	}
	if err := t.deleteLoadBalancers(ctx, id, p.cfg.Clock()); err != nil {
		return err
	}
	return t.c.RegionService.SafeDelete(ctx, id)
}

// deleteReplicas deletes VMs of a service as the viewer, in id order (the lock order),
// and then frees what they held; it returns how many Config.ReplicaRemover took over instead.
func (p *Placer) deleteReplicas(ctx context.Context, t *txn, rs []replica) (taken int, err error) {
	if len(rs) == 0 {
		return 0, nil
	}
	all := make([]int, len(rs))
	for i, r := range rs {
		all[i] = r.ID
	}
	slices.Sort(all)
	ids := make([]int, 0, len(all))
	for _, id := range all {
		if p.cfg.ReplicaRemover != nil {
			took, err := p.cfg.ReplicaRemover(ctx, t.c, id)
			if err != nil {
				return 0, err
			}
			if took {
				taken++
				continue
			}
		}
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		return taken, nil
	}
	held, err := allocations(ctx, t.c, func(s *sql.Selector) { s.Where(sql.InInts(s.C(virtualmachine.FieldID), ids...)) })
	if err != nil {
		return 0, err
	}
	if err := t.releaseNICs(ctx, ids); err != nil {
		return 0, err
	}
	for _, id := range ids {
		if err := t.c.VirtualMachine.SafeDelete(ctx, id); err != nil {
			return 0, err
		}
		t.locks.hold(rowKey{classVM, id})
	}
	if err := metering.Close(ctx, t.c, p.cfg.Clock(), metering.KindVM, ids...); err != nil {
		return 0, err
	}
	return taken, t.release(ctx, held)
}

// settleReplicas sets a service's replicas to the VMs it has left after one was deleted
// directly, and deletes the service when none is left. It acts as the system: it follows
// from a delete the viewer was allowed to make.
func (t *txn) settleReplicas(ctx context.Context, id int, now time.Time) error {
	sys := system(ctx)
	n, err := t.c.VirtualMachine.Query().
		Where(func(s *sql.Selector) { s.Where(sql.EQ(s.C(virtualmachine.RegionServiceColumn), id)) }).Count(sys)
	if err != nil {
		return err
	}
	if n == 0 {
		// Its load balancer and VIP go with it (they used to block the delete: CONFLICT).
		if err := t.deleteLoadBalancers(ctx, id, now); err != nil {
			return err
		}
		return t.c.RegionService.SafeDelete(sys, id)
	}
	return t.c.RegionService.UpdateOneID(id).SetReplicas(n).Exec(sys)
}

// growTo grows the service id to want replicas (grow); when fewer fit, as allowPartial
// permits, it records how many did and why, and returns the updated service, else svc.
func (p *Placer) growTo(ctx context.Context, t *txn, id int, row serviceRow, f *ent.Flavor, running []replica, want int, svc *ent.RegionService) (*ent.RegionService, error) {
	n, err := p.grow(ctx, t, row, f, running, want)
	if err != nil || n >= want {
		return svc, err
	}
	return t.c.RegionService.UpdateOneID(id).SetReplicas(n).
		SetStatusReason(fmt.Sprintf("placed %d of %d replicas: the rest fit nowhere", n, want)).Save(system(ctx))
}

// grow places want-len(running) new replicas of the service as a group next to the running
// ones and creates their VMs; it returns how many replicas the service then has.
func (p *Placer) grow(ctx context.Context, t *txn, svc serviceRow, f *ent.Flavor, running []replica, want int) (int, error) {
	group := make([]int, 0, len(running))
	next := 1
	for _, r := range running {
		if r.Node != 0 {
			group = append(group, r.Node)
		}
		next = max(next, r.number()+1)
	}
	pol := svc.policy()
	// A service never spans two clusters (SPEC.md §4, seed 001: no scheduling across
	// clusters): new replicas go to the cluster of the running ones or nowhere.
	home, err := serviceCluster(ctx, t.c, svc.ID, 0)
	if err != nil {
		return 0, err
	}
	if home != "" {
		pol.ClusterNames = []string{home}
	}
	placed, err := p.place(ctx, t, Request{TenantID: svc.Tenant, RegionID: svc.Region, Flavor: f,
		Count: want - len(running), Policy: pol, AllowPartial: svc.AllowPartial, GroupNodeIDs: group})
	if e, ok := apierr.As(err); ok && e.Code == apierr.CodeNoCapacity && home != "" {
		return 0, &apierr.Error{Code: apierr.CodeNoCapacity, Field: "replicas", Extra: e.Extra, Message: fmt.Sprintf(
			"region service %s cannot grow to %d replicas: its cluster %s has no room for %d more, and a service never spans two clusters: %s",
			svc.Name, want, home, want-len(running), e.Message)}
	}
	if err != nil {
		return 0, err
	}
	d := placed.Decision
	builders := make([]*ent.VirtualMachineCreate, len(d.Placements))
	for i, pl := range d.Placements {
		n := next + i
		mask, numa := placed.HeldBy(pl.NodeID)
		b := t.c.VirtualMachine.Create().SetStatusChangedAt(p.cfg.Clock()).
			SetName(fmt.Sprintf("%s-%d", svc.Name, n)).
			SetDescription(fmt.Sprintf("replica %d of region service %s", n, svc.Name)).
			SetTenantID(svc.Tenant).SetRegionID(svc.Region).SetFlavorID(f.ID).
			SetLabels(fieldtype.Labels{ServiceLabel: svc.Name}).SetSchedulePolicy(svc.policy()).
			SetRegionServiceID(svc.ID).SetNodeID(pl.NodeID).SetClusterID(d.ClusterID).
			SetAllocatedVcpus(f.Vcpus).SetAllocatedMemoryMB(f.MemoryMB).SetAllocatedDiskGB(f.DiskGB).
			SetExclusiveMask(mask).SetNillableNumaNode(numa).
			SetStatusReason("placed; waiting to be provisioned")
		if svc.Image != 0 {
			b.SetImageID(svc.Image)
		}
		builders[i] = b
	}
	// As the system: the viewer may not link nodes; its right to change the service was
	// checked when the service was created or updated.
	vms, err := t.c.VirtualMachine.CreateBulk(builders...).Save(system(ctx))
	if err != nil {
		return 0, fmt.Errorf("create replicas of %s: %w", svc.Name, err)
	}
	netIDs, err := t.c.RegionService.Query().Where(regionservice.ID(svc.ID)).QueryNetworks().
		Order(network.ByID()).IDs(authz.Unrestricted(ctx))
	if err != nil {
		return 0, fmt.Errorf("networks of region service %s: %w", svc.Name, err)
	}
	nets, err := networksFor(ctx, t.c, svc.Tenant, svc.Region, netIDs, "networkIDs")
	if err != nil {
		return 0, err
	}
	ids := make([]int, len(vms))
	for i, vm := range vms {
		ids[i] = vm.ID
	}
	if err := metering.OpenVMs(ctx, t.c, p.cfg.Clock(), ids...); err != nil {
		return 0, err
	}
	if err := t.attachNICs(ctx, ids, nets, "networkIDs"); err != nil {
		return 0, err
	}
	return len(running) + len(d.Placements), nil
}

// serviceRow is a region service with its foreign keys.
type serviceRow struct {
	ID             int    `sql:"id"`
	Name           string `sql:"name"`
	AllowPartial   bool   `sql:"allow_partial"`
	SchedulePolicy []byte `sql:"schedule_policy"`
	Tenant         int    `sql:"tenant_id"`
	Region         int    `sql:"region_id"`
	Flavor         int    `sql:"flavor_id"`
	Image          int    `sql:"image_id"`
	pol            fieldtype.SchedulePolicy
}

func (s serviceRow) policy() fieldtype.SchedulePolicy { return s.pol }

// loadService reads a region service with its foreign keys, whoever may see it.
func loadService(ctx context.Context, c *ent.Client, id int) (serviceRow, error) {
	var rows []serviceRow
	err := c.RegionService.Query().Where(regionservice.ID(id)).Modify(func(s *sql.Selector) {
		s.Select(s.Columns(regionservice.FieldID, regionservice.FieldName, regionservice.FieldAllowPartial,
			regionservice.FieldSchedulePolicy)...)
		s.AppendSelectAs(s.C(regionservice.TenantColumn), "tenant_id")
		s.AppendSelectAs(s.C(regionservice.RegionColumn), "region_id")
		s.AppendSelectAs(s.C(regionservice.FlavorColumn), "flavor_id")
		s.AppendSelectAs(s.C(regionservice.ImageColumn), "image_id")
	}).Scan(authz.Unrestricted(ctx), &rows)
	if err != nil {
		return serviceRow{}, fmt.Errorf("load region service %d: %w", id, err)
	}
	if len(rows) == 0 {
		return serviceRow{}, apierr.NotFound("region service %d not found", id)
	}
	r := rows[0]
	if len(r.SchedulePolicy) > 0 && string(r.SchedulePolicy) != "null" {
		if err := json.Unmarshal(r.SchedulePolicy, &r.pol); err != nil {
			return serviceRow{}, fmt.Errorf("schedule policy of region service %d: %w", id, err)
		}
	}
	return r, nil
}

// replica is a VM of a region service.
type replica struct {
	ID   int    `sql:"id"`
	Name string `sql:"name"`
	Node int    `sql:"node_id"`
	svc  string
}

// number is the replica's number: N of <service>-N, 0 when renamed.
func (r replica) number() int {
	n, err := strconv.Atoi(strings.TrimPrefix(r.Name, r.svc+"-"))
	if err != nil || !strings.HasPrefix(r.Name, r.svc+"-") {
		return 0
	}
	return n
}

// replicasOf returns the service's VMs, lowest number first (renamed ones first, by id),
// whoever may see them.
func replicasOf(ctx context.Context, c *ent.Client, svc serviceRow) ([]replica, error) {
	id := svc.ID
	var rs []replica
	err := c.VirtualMachine.Query().
		Where(func(s *sql.Selector) { s.Where(sql.EQ(s.C(virtualmachine.RegionServiceColumn), id)) }).
		Modify(func(s *sql.Selector) {
			s.Select(s.Columns(virtualmachine.FieldID, virtualmachine.FieldName)...)
			s.AppendSelectExprAs(sql.Expr(fmt.Sprintf("COALESCE(%s, 0)", s.C(virtualmachine.NodeColumn))), "node_id")
		}).Scan(authz.Unrestricted(ctx), &rs)
	if err != nil {
		return nil, fmt.Errorf("replicas of region service %d: %w", id, err)
	}
	for i := range rs {
		rs[i].svc = svc.Name
	}
	slices.SortFunc(rs, func(a, b replica) int {
		return cmp.Or(cmp.Compare(a.number(), b.number()), cmp.Compare(a.ID, b.ID))
	})
	return rs, nil
}
