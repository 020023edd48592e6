package placement

import (
	"context"
	"fmt"
	"math"
	"time"

	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/sql"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/hostgroup"
	"github.com/virtflow/virtflow/ent/quota"
	"github.com/virtflow/virtflow/ent/tenant"
	"github.com/virtflow/virtflow/ent/virtualmachine"
)

// QuotaInput sets a tenant's quota in a host group; nil limits keep their value (or take
// the default on a new quota: 100% of the group's cores, everything else unlimited).
type QuotaInput struct {
	TenantID, HostGroupID int
	CPUPercent            *float64
	VCPUs                 *int
	MemoryMB, StorageGB   *int64
}

// SetQuota creates or changes the tenant's quota in the host group as the viewer in ctx,
// in one statement (an upsert on the quota's unique tenant and host group), so concurrent
// calls cannot create two. Usage is left as it is; a limit below it stops new placements.
func SetQuota(ctx context.Context, c *ent.Client, in QuotaInput) (*ent.Quota, error) {
	if err := in.validate(); err != nil {
		return nil, err
	}
	if err := lockGroupNodes(ctx, c, in.HostGroupID); err != nil {
		return nil, err
	}
	existed, err := c.Quota.Query().Where(func(s *sql.Selector) {
		s.Where(sql.And(sql.EQ(s.C(quota.TenantColumn), in.TenantID), sql.EQ(s.C(quota.HostGroupColumn), in.HostGroupID)))
	}).Exist(authz.Unrestricted(ctx))
	if err != nil {
		return nil, fmt.Errorf("read quota: %w", err)
	}
	create := c.Quota.Create().SetTenantID(in.TenantID).SetHostGroupID(in.HostGroupID).
		SetNillableCPUPercent(in.CPUPercent).SetNillableVcpus(in.VCPUs).
		SetNillableMemoryMB(in.MemoryMB).SetNillableStorageGB(in.StorageGB)
	id, err := create.OnConflictColumns(quota.TenantColumn, quota.HostGroupColumn).
		Update(func(u *ent.QuotaUpsert) {
			u.SetUpdatedAt(time.Now())
			if in.CPUPercent != nil {
				u.SetCPUPercent(*in.CPUPercent)
			}
			if in.VCPUs != nil {
				u.SetVcpus(*in.VCPUs)
			}
			if in.MemoryMB != nil {
				u.SetMemoryMB(*in.MemoryMB)
			}
			if in.StorageGB != nil {
				u.SetStorageGB(*in.StorageGB)
			}
		}).ID(ctx)
	if err != nil {
		return nil, err
	}
	if !existed {
		if err := countExisting(ctx, c, in.TenantID, in.HostGroupID, id); err != nil {
			return nil, err
		}
	}
	return c.Quota.Get(ctx, id)
}

// CreateQuota is createQuota: SetQuota's rules for a quota that must be new (a second quota
// of the tenant in the group is CONFLICT, from the unique index), so that a quota made
// through the generic mutation is charged with the tenant's VMs too.
func CreateQuota(ctx context.Context, c *ent.Client, in ent.CreateQuotaInput) (*ent.Quota, error) {
	qi := QuotaInput{TenantID: in.TenantID, HostGroupID: in.HostGroupID, CPUPercent: in.CPUPercent,
		VCPUs: in.Vcpus, MemoryMB: in.MemoryMB, StorageGB: in.StorageGB}
	if err := qi.validate(); err != nil {
		return nil, err
	}
	if err := lockGroupNodes(ctx, c, in.HostGroupID); err != nil {
		return nil, err
	}
	q, err := c.Quota.Create().SetInput(in).Save(ctx)
	if err != nil {
		return nil, err
	}
	if err := countExisting(ctx, c, in.TenantID, in.HostGroupID, q.ID); err != nil {
		return nil, err
	}
	return c.Quota.Get(ctx, q.ID)
}

// UpdateQuota is updateQuota: its limits may change, not its tenant or host group (the
// usage it holds belongs to them: delete it and set a new one instead).
func UpdateQuota(ctx context.Context, c *ent.Client, id int, in ent.UpdateQuotaInput) (*ent.Quota, error) {
	qi := QuotaInput{CPUPercent: in.CPUPercent, VCPUs: in.Vcpus, MemoryMB: in.MemoryMB, StorageGB: in.StorageGB}
	if err := qi.validate(); err != nil {
		return nil, err
	}
	if in.TenantID != nil || in.HostGroupID != nil {
		// Read as the viewer: one who may not read the quota learns nothing here.
		cur, err := c.Quota.Query().Where(quota.ID(id)).WithTenant(func(q *ent.TenantQuery) { q.Select(tenant.FieldID) }).
			WithHostGroup(func(q *ent.HostGroupQuery) { q.Select(hostgroup.FieldID) }).Only(ctx)
		if err != nil {
			return nil, err
		}
		if in.TenantID != nil && (cur.Edges.Tenant == nil || *in.TenantID != cur.Edges.Tenant.ID) {
			return nil, apierr.Validation("tenantID", "a quota's tenant cannot change: delete the quota and set a new one")
		}
		if in.HostGroupID != nil && (cur.Edges.HostGroup == nil || *in.HostGroupID != cur.Edges.HostGroup.ID) {
			return nil, apierr.Validation("hostGroupID", "a quota's host group cannot change: delete the quota and set a new one")
		}
		in.TenantID, in.HostGroupID = nil, nil
	}
	return c.Quota.UpdateOneID(id).SetInput(in).Save(ctx)
}

// lockGroupNodes locks the compute nodes of the host group's hosts (SELECT … FOR NO KEY
// UPDATE, in id order as placements take them; nothing on SQLite, whose writers run one at
// a time) before a quota of the group is created. A placement writes its node rows before
// it reads which quotas apply (commit), so either it waits here and then sees the new quota,
// or the quota waits for it and countExisting then counts its VM: no VM escapes a quota set
// while it is placed.
func lockGroupNodes(ctx context.Context, c *ent.Client, group int) error {
	_, err := c.ComputeNode.Query().Modify(func(s *sql.Selector) {
		hgh := sql.Table(hostgroup.HostsTable).As("hgh")
		s.Join(hgh).On(s.C(computenode.HostColumn), hgh.C(hostgroup.HostsPrimaryKey[1]))
		s.Where(sql.EQ(hgh.C(hostgroup.HostsPrimaryKey[0]), group))
		s.Select(s.C(computenode.FieldID))
		s.OrderBy(s.C(computenode.FieldID))
		if s.Dialect() != dialect.SQLite {
			s.For(sql.LockNoKeyUpdate, sql.WithLockTables(computenode.Table))
		}
	}).Strings(authz.Unrestricted(ctx))
	if err != nil {
		return fmt.Errorf("lock the nodes of host group %d: %w", group, err)
	}
	return nil
}

// validate checks the limits that are set.
func (in QuotaInput) validate() error {
	switch {
	case in.CPUPercent != nil && (math.IsNaN(*in.CPUPercent) || *in.CPUPercent < 0 || *in.CPUPercent > 100):
		return apierr.Validation("cpuPercent", "cpuPercent must be between 0 and 100")
	case in.VCPUs != nil && *in.VCPUs < 0:
		return apierr.Validation("vcpus", "vcpus must not be negative (0 is unlimited)")
	case in.MemoryMB != nil && *in.MemoryMB < 0:
		return apierr.Validation("memoryMB", "memoryMB must not be negative (0 is unlimited)")
	case in.StorageGB != nil && *in.StorageGB < 0:
		return apierr.Validation("storageGB", "storageGB must not be negative (0 is unlimited)")
	}
	return nil
}

// countExisting charges a new quota (id, the tenant's in host group group) with the VMs the
// tenant already has in the group, created before the quota was set: those on nodes that
// now count in this group (hostGroupFor). A VM that counted in another of the tenant's
// quotas until now (its host is in both groups, this one the lower) moves its usage here.
// It acts as the system: setting the quota was allowed, this is its bookkeeping. Run it in
// the transaction of the quota's insert (every GraphQL mutation has one), so placements
// in the meantime wait on the quota row.
func countExisting(ctx context.Context, c *ent.Client, tenantID, group, id int) error {
	sys := system(ctx)
	held, err := allocations(sys, c, func(s *sql.Selector) {
		s.Where(sql.And(sql.EQ(s.C(virtualmachine.TenantColumn), tenantID), sql.NotNull(s.C(virtualmachine.NodeColumn))))
	})
	if err != nil || len(held) == 0 {
		return err
	}
	quotas, err := loadQuotas(sys, c, tenantID)
	if err != nil {
		return err
	}
	before, after, quotaOf := map[int]bool{}, map[int]bool{}, map[int]int{}
	for _, q := range quotas {
		after[q.GroupID], quotaOf[q.GroupID] = true, q.ID
		if q.GroupID != group {
			before[q.GroupID] = true
		}
	}
	nodeIDs := make([]int, 0, len(held))
	for _, a := range held {
		nodeIDs = append(nodeIDs, a.Node)
	}
	groups, err := nodeGroups(sys, c, nodeIDs)
	if err != nil {
		return err
	}
	var add usage
	from := map[int]*usage{} // quota id → usage moving away from it
	for _, a := range held {
		if hostGroupFor(groups[a.Node], after) != group {
			continue
		}
		add.add(a.flavor())
		if g := hostGroupFor(groups[a.Node], before); before[g] {
			if from[quotaOf[g]] == nil {
				from[quotaOf[g]] = &usage{}
			}
			from[quotaOf[g]].add(a.flavor())
		}
	}
	if err := c.Quota.UpdateOneID(id).AddUsedVcpus(add.cpu).AddUsedMemoryMB(add.mem).
		AddUsedStorageGB(add.disk).Exec(sys); err != nil {
		return fmt.Errorf("count existing VMs in quota %d: %w", id, err)
	}
	for qid, u := range from {
		if err := c.Quota.UpdateOneID(qid).AddUsedVcpus(-u.cpu).AddUsedMemoryMB(-u.mem).
			AddUsedStorageGB(-u.disk).Exec(sys); err != nil {
			return fmt.Errorf("move usage out of quota %d: %w", qid, err)
		}
	}
	return nil
}

// Usage is a tenant's quota in a host group with what it uses; the GraphQL type QuotaUsage
// is bound to it (gqlgen.yml).
type Usage struct {
	Quota                    *ent.Quota
	TenantID                 int
	TenantName               string
	HostGroupID              int
	HostGroupName            string
	GroupCores               int
	VCPULimit                int // the tighter of vcpus and cpuPercent of GroupCores; 0 unlimited
	UsedVCPUs                int
	MemoryMB, UsedMemoryMB   int64
	StorageGB, UsedStorageGB int64
}

// QuotaUsage lists the quotas the viewer in ctx may read (a tenant only its own), filtered
// by tenant and host group when given, with usage, the group's cores and the effective
// vCPU limit, in three queries.
func QuotaUsage(ctx context.Context, c *ent.Client, tenantID, hostGroupID *int) ([]*Usage, error) {
	q := c.Quota.Query().Order(ent.Asc(quota.FieldID))
	if tenantID != nil {
		q.Where(func(s *sql.Selector) { s.Where(sql.EQ(s.C(quota.TenantColumn), *tenantID)) })
	}
	if hostGroupID != nil {
		q.Where(func(s *sql.Selector) { s.Where(sql.EQ(s.C(quota.HostGroupColumn), *hostGroupID)) })
	}
	quotas, err := q.All(ctx)
	if err != nil {
		return nil, err
	}
	if len(quotas) == 0 {
		return []*Usage{}, nil
	}
	ids := make([]int, len(quotas))
	for i, qt := range quotas {
		ids[i] = qt.ID
	}
	// The names of the tenant and the host group, which a tenant may not read otherwise.
	var rows []struct {
		ID        int    `sql:"id"`
		TenantID  int    `sql:"tenant_id"`
		Tenant    string `sql:"tenant_name"`
		GroupID   int    `sql:"group_id"`
		GroupName string `sql:"group_name"`
	}
	err = c.Quota.Query().Where(quota.IDIn(ids...)).Modify(func(s *sql.Selector) {
		tn, hg := sql.Table(tenant.Table).As("tn"), sql.Table(hostgroup.Table).As("hg")
		s.Join(tn).On(s.C(quota.TenantColumn), tn.C(tenant.FieldID))
		s.Join(hg).On(s.C(quota.HostGroupColumn), hg.C(hostgroup.FieldID))
		s.Select(s.C(quota.FieldID))
		s.AppendSelectAs(tn.C(tenant.FieldID), "tenant_id")
		s.AppendSelectAs(tn.C(tenant.FieldName), "tenant_name")
		s.AppendSelectAs(hg.C(hostgroup.FieldID), "group_id")
		s.AppendSelectAs(hg.C(hostgroup.FieldName), "group_name")
	}).Scan(authz.Unrestricted(ctx), &rows)
	if err != nil {
		return nil, fmt.Errorf("read tenants and host groups of quotas: %w", err)
	}
	type names struct {
		tenant, group       int
		tenantName, grpName string
	}
	byID := map[int]names{}
	var groups []int
	for _, r := range rows {
		byID[r.ID] = names{r.TenantID, r.GroupID, r.Tenant, r.GroupName}
		groups = append(groups, r.GroupID)
	}
	cores, err := groupCores(authz.Unrestricted(ctx), c, groups)
	if err != nil {
		return nil, err
	}
	out := make([]*Usage, 0, len(quotas))
	for _, qt := range quotas {
		n := byID[qt.ID]
		out = append(out, &Usage{
			Quota: qt, TenantID: n.tenant, TenantName: n.tenantName, HostGroupID: n.group, HostGroupName: n.grpName,
			GroupCores: cores[n.group], VCPULimit: vcpuLimit(qt.Vcpus, qt.CPUPercent, cores[n.group]),
			UsedVCPUs: qt.UsedVcpus, MemoryMB: qt.MemoryMB, UsedMemoryMB: qt.UsedMemoryMB,
			StorageGB: qt.StorageGB, UsedStorageGB: qt.UsedStorageGB,
		})
	}
	return out, nil
}

// vcpuLimit is the most vCPUs a quota allows: the tighter of its vCPU count and its
// percentage of the group's cores (as the scheduler's Quota filter counts: n vCPUs fit
// while n × 100 ≤ percent × cores), 0 when neither limits.
func vcpuLimit(vcpus int, percent float64, cores int) int {
	limit := vcpus
	if percent > 0 && cores > 0 {
		byPercent := int(math.Floor(percent * float64(cores) / 100))
		for byPercent > 0 && float64(byPercent)*100 > percent*float64(cores) {
			byPercent--
		}
		if limit == 0 || byPercent < limit {
			limit = byPercent
		}
	}
	return limit
}
