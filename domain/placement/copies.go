package placement

import (
	"context"
	"fmt"

	"entgo.io/ent/dialect/sql"

	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/quota"
)

// CopyKind says which quota a copy of a VM's disk counts in: snapshots (kept in the node's
// storage pool) or backups (kept on the region's backup target).
type CopyKind int

// The kinds of disk copies.
const (
	SnapshotStorage CopyKind = iota
	BackupStorage
)

// columns are the quota's limit and usage columns of k.
func (k CopyKind) columns() (limit, used, what string) {
	if k == BackupStorage {
		return quota.FieldBackupGB, quota.FieldUsedBackupGB, "backup"
	}
	return quota.FieldSnapshotGB, quota.FieldUsedSnapshotGB, "snapshot"
}

// ChargeCopy charges gb GiB of snapshot or backup storage (k) to tenant tenantID's quota in
// the host group of node nodeID (the quota the VM copied counts in, like a volume's). One
// conditional UPDATE decides: the row changes only while used + gb stays within the limit
// (0 is no limit), so concurrent charges never exceed it — the database decides, as for
// every quota. A full quota is QUOTA_EXCEEDED on field virtualMachineID. A tenant without a
// quota in that group is not limited. Runs in client's transaction as the system.
func ChargeCopy(ctx context.Context, client *ent.Client, k CopyKind, tenantID, nodeID int, gb int64) error {
	sys := system(ctx)
	q, err := volumeQuota(sys, client, tenantID, nodeID)
	if err != nil || q == 0 || gb == 0 {
		return err
	}
	limit, used, what := k.columns()
	n, err := client.Quota.Update().Where(quota.ID(q), func(s *sql.Selector) {
		s.Where(sql.Or(sql.EQ(s.C(limit), 0), fits(s.C(used), gb, s.C(limit))))
	}).Modify(func(u *sql.UpdateBuilder) {
		u.Add(used, gb)
	}).Save(sys)
	if err != nil {
		return fmt.Errorf("charge %s storage to quota %d: %w", what, q, err)
	}
	if n == 0 {
		return &apierr.Error{Code: apierr.CodeQuotaExceeded, Field: "virtualMachineID",
			Message: fmt.Sprintf("%d GiB more %s storage would exceed the tenant's %s quota", gb, what, what)}
	}
	return nil
}

// ReleaseCopy gives back what ChargeCopy charged, once the copy's data is gone.
func ReleaseCopy(ctx context.Context, client *ent.Client, k CopyKind, tenantID, nodeID int, gb int64) error {
	sys := system(ctx)
	q, err := volumeQuota(sys, client, tenantID, nodeID)
	if err != nil || q == 0 || gb == 0 {
		return err
	}
	_, used, what := k.columns()
	if err := client.Quota.UpdateOneID(q).Modify(func(b *sql.UpdateBuilder) {
		b.Set(used, minus(used, gb))
	}).Exec(sys); err != nil {
		return fmt.Errorf("release %s storage in quota %d: %w", what, q, err)
	}
	return nil
}
