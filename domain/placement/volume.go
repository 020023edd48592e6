package placement

import (
	"context"
	"fmt"

	"entgo.io/ent/dialect/sql"

	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/assignment"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/quota"
	"github.com/virtflow/virtflow/ent/virtualmachine"
	"github.com/virtflow/virtflow/ent/volume"
)

// ChargeVolume charges a volume of gb GiB of tenant tenantID to node nodeID, where it is being
// created: the node's disk (disk_allocated_gb within disk_capacity_gb) and the tenant's storage
// quota in the node's host group (the quota a VM on that node counts in, hostGroupFor), with
// the same conditional updates as a VM's placement, so concurrent charges never overcommit
// the node or exceed the quota. It runs in client's transaction, as the system (the caller
// decided the viewer may create the volume). A full node is NO_CAPACITY, a full quota
// QUOTA_EXCEEDED, both on field sizeGB; the reasons never name the node (tenants read them).
//
// A node whose disk_capacity_gb is 0 has not reported its disk: it takes no volume.
func ChargeVolume(ctx context.Context, client *ent.Client, tenantID, nodeID int, gb int64) error {
	sys := system(ctx)
	u := &nodeUsage{usage: usage{disk: gb}}
	n, err := client.ComputeNode.Update().Where(computenode.ID(nodeID), nodeFits(u)).
		AddDiskAllocatedGB(gb).Save(sys)
	if err != nil {
		return fmt.Errorf("charge volume to node %d: %w", nodeID, err)
	}
	if n == 0 {
		return &apierr.Error{Code: apierr.CodeNoCapacity, Field: "sizeGB", Message: fmt.Sprintf("the VM's node has no room for %d GiB more", gb)}
	}
	q, err := volumeQuota(sys, client, tenantID, nodeID)
	if err != nil || q == 0 {
		return err
	}
	n, err = client.Quota.Update().Where(quota.ID(q), quotaFits(&quotaUsage{usage: usage{disk: gb}})).AddUsedStorageGB(gb).Save(sys)
	if err != nil {
		return fmt.Errorf("charge volume to quota %d: %w", q, err)
	}
	if n == 0 {
		return &apierr.Error{Code: apierr.CodeQuotaExceeded, Field: "sizeGB", Message: fmt.Sprintf("%d GiB more storage would exceed the tenant's storage quota", gb)}
	}
	return nil
}

// ReleaseVolume gives back what ChargeVolume charged, when the volume's data is gone.
func ReleaseVolume(ctx context.Context, client *ent.Client, tenantID, nodeID int, gb int64) error {
	sys := system(ctx)
	if err := client.ComputeNode.UpdateOneID(nodeID).Modify(func(b *sql.UpdateBuilder) {
		b.Set(computenode.FieldDiskAllocatedGB, minus(computenode.FieldDiskAllocatedGB, gb))
	}).Exec(sys); err != nil {
		return fmt.Errorf("release volume on node %d: %w", nodeID, err)
	}
	q, err := volumeQuota(sys, client, tenantID, nodeID)
	if err != nil || q == 0 {
		return err
	}
	if err := client.Quota.UpdateOneID(q).Modify(func(b *sql.UpdateBuilder) {
		b.Set(quota.FieldUsedStorageGB, minus(quota.FieldUsedStorageGB, gb))
	}).Exec(sys); err != nil {
		return fmt.Errorf("release volume in quota %d: %w", q, err)
	}
	return nil
}

// volumeQuota is the id of the tenant's quota that storage on node counts in, 0 for none.
func volumeQuota(ctx context.Context, client *ent.Client, tenantID, nodeID int) (int, error) {
	quotas, err := loadQuotas(ctx, client, tenantID)
	if err != nil || len(quotas) == 0 {
		return 0, err
	}
	groups, err := nodeGroups(ctx, client, []int{nodeID})
	if err != nil {
		return 0, err
	}
	withQuota, quotaOf := map[int]bool{}, map[int]int{}
	for _, q := range quotas {
		withQuota[q.GroupID], quotaOf[q.GroupID] = true, q.ID
	}
	return quotaOf[hostGroupFor(groups[nodeID], withQuota)], nil
}

// keepVolumes detaches the volumes of VM id before its row is deleted: their data stays on
// their node, AVAILABLE (or CREATING while the node's agent has not created it yet), for the
// tenant to attach to another VM there or delete.
func keepVolumes(ctx context.Context, client *ent.Client, id int) error {
	sys := system(ctx)
	of := volume.HasVirtualMachineWith(virtualmachine.ID(id))
	created := volume.HasAssignmentsWith(assignment.StatusEQ(assignment.StatusApplied))
	reason := "its VM was deleted; the data is kept"
	if _, err := client.Volume.Update().Where(of, created).ClearVirtualMachine().
		SetStatus(volume.StatusAvailable).SetStatusReason(reason).Save(sys); err != nil {
		return fmt.Errorf("keep volumes of VM %d: %w", id, err)
	}
	if _, err := client.Volume.Update().Where(of).ClearVirtualMachine().
		SetStatus(volume.StatusCreating).SetStatusReason(reason).Save(sys); err != nil {
		return fmt.Errorf("keep volumes of VM %d: %w", id, err)
	}
	return nil
}
