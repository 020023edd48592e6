package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/virtflow/virtflow/clients/apiclient"
)

// Snapshots and backups of a VM's root disk (controllers/provision/copies.go). Neither has an update
// mutation: every argument replaces the copy. A create waits until the node's agent copied
// the disk (AVAILABLE) and fails with the agent's reason on ERROR; a delete waits until the
// copy is gone.

// ---------------------------------------------------------------- virtflow_snapshot

type snapshotModel struct {
	ID               types.String `tfsdk:"id"`
	Name             types.String `tfsdk:"name"`
	Description      types.String `tfsdk:"description"`
	VirtualMachineID types.String `tfsdk:"virtual_machine_id"`
	SizeGB           types.Int64  `tfsdk:"size_gb"`
	Reverts          types.Int64  `tfsdk:"reverts"`
	Status           types.String `tfsdk:"status"`
}

func (m *snapshotModel) set(f *apiclient.SnapshotFields) {
	m.ID, m.Name, m.Description = types.StringValue(f.Id), types.StringValue(f.Name), str(f.Description)
	m.SizeGB, m.Reverts, m.Status = types.Int64Value(int64(f.SizeGB)), types.Int64Value(int64(f.Reverts)), types.StringValue(string(f.Status))
	if f.VirtualMachine != nil {
		m.VirtualMachineID = types.StringValue(f.VirtualMachine.Id)
	}
}

// getSnapshot reads snapshot id; nil when it is gone.
func getSnapshot(ctx context.Context, c *apiclient.Client, id string) (*apiclient.SnapshotFields, error) {
	r, err := apiclient.GetSnapshot(ctx, c, id)
	if err != nil || len(r.Snapshots.Edges) == 0 || r.Snapshots.Edges[0].Node == nil {
		return nil, err
	}
	return &r.Snapshots.Edges[0].Node.SnapshotFields, nil
}

func snapshotResource() resource.Resource {
	return newResource(crud[snapshotModel]{
		name: "snapshot",
		schema: schema.Schema{Description: "A snapshot of a VM's root disk, kept on the VM's node. Created once the node's agent " +
			"copied the disk (AVAILABLE); every change replaces it. Reverting is an action, not state: use the API or `virtflow snapshot revert`.",
			Attributes: map[string]schema.Attribute{
				"id":                 idAttribute(),
				"name":               stringAttr("Name, unique among the VM's snapshots.", required, replace),
				"description":        stringAttr("Description.", optional, replace),
				"virtual_machine_id": stringAttr("The VM whose root disk it copies.", required, replace),
				"size_gb":            intAttr("The storage charged to the tenant's snapshot quota (GiB).", computed),
				"reverts":            intAttr("How many times the VM was reverted to it.", computed),
				"status":             stringAttr("Status.", computed),
			}},
		fields: map[string]string{"virtualMachineID": "virtual_machine_id"},
		id:     func(m *snapshotModel) string { return m.ID.ValueString() },
		create: func(ctx context.Context, c *apiclient.Client, m *snapshotModel) error {
			r, err := apiclient.CreateSnapshot(ctx, c, apiclient.CreateSnapshotInput{VirtualMachineID: m.VirtualMachineID.ValueString(),
				Name: m.Name.ValueString(), Description: strPtr(m.Description)})
			if err != nil {
				return err
			}
			m.set(&r.CreateSnapshot.SnapshotFields)
			id := m.ID.ValueString()
			err = waitFor(ctx, defaultCreateTimeout, "snapshot "+id+" to be AVAILABLE", func() (bool, error) {
				f, err := getSnapshot(ctx, c, id)
				switch {
				case err != nil:
					return false, err
				case f == nil:
					return false, fmt.Errorf("snapshot %s is gone", id)
				case f.Status == apiclient.SnapshotStatusError:
					return false, fmt.Errorf("snapshot %s: %s", id, deref(f.StatusReason))
				}
				m.set(f)
				return f.Status == apiclient.SnapshotStatusAvailable, nil
			})
			if err != nil {
				return &partialError{err}
			}
			return nil
		},
		read: func(ctx context.Context, c *apiclient.Client, m *snapshotModel) (bool, error) {
			f, err := getSnapshot(ctx, c, m.ID.ValueString())
			if err != nil || f == nil {
				return false, err
			}
			m.set(f)
			return true, nil
		},
		update: func(ctx context.Context, c *apiclient.Client, p, s *snapshotModel) error {
			// Every argument replaces: only the computed attributes can differ.
			f, err := getSnapshot(ctx, c, s.ID.ValueString())
			if err != nil {
				return err
			}
			if f == nil {
				return fmt.Errorf("snapshot %s is gone", s.ID.ValueString())
			}
			p.set(f)
			return nil
		},
		delete: func(ctx context.Context, c *apiclient.Client, s *snapshotModel) error {
			id := s.ID.ValueString()
			if _, err := apiclient.DeleteSnapshot(ctx, c, id); err != nil {
				return err
			}
			return waitFor(ctx, defaultDeleteTimeout, "snapshot "+id+" to be deleted", func() (bool, error) {
				f, err := getSnapshot(ctx, c, id)
				if apiclient.IsNotFound(err) {
					return true, nil
				}
				return err == nil && f == nil, err
			})
		},
	})
}

// ---------------------------------------------------------------- virtflow_backup

type backupModel struct {
	ID               types.String `tfsdk:"id"`
	Name             types.String `tfsdk:"name"`
	Description      types.String `tfsdk:"description"`
	VirtualMachineID types.String `tfsdk:"virtual_machine_id"`
	TenantID         types.String `tfsdk:"tenant_id"`
	RegionID         types.String `tfsdk:"region_id"`
	SizeGB           types.Int64  `tfsdk:"size_gb"`
	Scheduled        types.Bool   `tfsdk:"scheduled"`
	Status           types.String `tfsdk:"status"`
}

func (m *backupModel) set(f *apiclient.BackupFields) {
	m.ID, m.Name, m.Description = types.StringValue(f.Id), types.StringValue(f.Name), str(f.Description)
	m.TenantID, m.RegionID = types.StringValue(f.Tenant.Id), types.StringValue(f.Region.Id)
	m.SizeGB, m.Scheduled, m.Status = types.Int64Value(int64(f.SizeGB)), types.BoolValue(f.Scheduled), types.StringValue(string(f.Status))
	// A backup outlives its VM: once the VM is deleted the state keeps the id it was taken of.
	if f.VirtualMachine != nil {
		m.VirtualMachineID = types.StringValue(f.VirtualMachine.Id)
	}
}

// getBackup reads backup id; nil when it is gone.
func getBackup(ctx context.Context, c *apiclient.Client, id string) (*apiclient.BackupFields, error) {
	r, err := apiclient.GetBackup(ctx, c, id)
	if err != nil || len(r.Backups.Edges) == 0 || r.Backups.Edges[0].Node == nil {
		return nil, err
	}
	return &r.Backups.Edges[0].Node.BackupFields, nil
}

func backupResource() resource.Resource {
	return newResource(crud[backupModel]{
		name: "backup",
		schema: schema.Schema{Description: "A backup of a VM's root disk on its region's backup target; it outlives the VM. " +
			"Created once the node's agent copied the disk (AVAILABLE); every change replaces it. Restore it into a new VM with " +
			"the API's restoreBackup or `virtflow backup restore`.",
			Attributes: map[string]schema.Attribute{
				"id":                 idAttribute(),
				"name":               stringAttr("Name, unique in the tenant.", required, replace),
				"description":        stringAttr("Description.", optional, replace),
				"virtual_machine_id": stringAttr("The VM whose root disk it copies (kept once the VM is deleted).", required, replace),
				"tenant_id":          stringAttr("The VM's tenant.", computed),
				"region_id":          stringAttr("The region whose backup target holds it.", computed),
				"size_gb":            intAttr("The storage charged to the tenant's backup quota (GiB).", computed),
				"scheduled":          boolAttr("Whether the VM's backup schedule took it.", computed),
				"status":             stringAttr("Status.", computed),
			}},
		fields: map[string]string{"virtualMachineID": "virtual_machine_id"},
		id:     func(m *backupModel) string { return m.ID.ValueString() },
		create: func(ctx context.Context, c *apiclient.Client, m *backupModel) error {
			r, err := apiclient.CreateBackup(ctx, c, apiclient.CreateBackupInput{VirtualMachineID: m.VirtualMachineID.ValueString(),
				Name: m.Name.ValueString(), Description: strPtr(m.Description)})
			if err != nil {
				return err
			}
			m.set(&r.CreateBackup.BackupFields)
			id := m.ID.ValueString()
			err = waitFor(ctx, defaultCreateTimeout, "backup "+id+" to be AVAILABLE", func() (bool, error) {
				f, err := getBackup(ctx, c, id)
				switch {
				case err != nil:
					return false, err
				case f == nil:
					return false, fmt.Errorf("backup %s is gone", id)
				case f.Status == apiclient.BackupStatusError:
					return false, fmt.Errorf("backup %s: %s", id, deref(f.StatusReason))
				}
				m.set(f)
				return f.Status == apiclient.BackupStatusAvailable, nil
			})
			if err != nil {
				return &partialError{err}
			}
			return nil
		},
		read: func(ctx context.Context, c *apiclient.Client, m *backupModel) (bool, error) {
			f, err := getBackup(ctx, c, m.ID.ValueString())
			if err != nil || f == nil {
				return false, err
			}
			m.set(f)
			return true, nil
		},
		update: func(ctx context.Context, c *apiclient.Client, p, s *backupModel) error {
			f, err := getBackup(ctx, c, s.ID.ValueString())
			if err != nil {
				return err
			}
			if f == nil {
				return fmt.Errorf("backup %s is gone", s.ID.ValueString())
			}
			p.set(f)
			return nil
		},
		delete: func(ctx context.Context, c *apiclient.Client, s *backupModel) error {
			id := s.ID.ValueString()
			if _, err := apiclient.DeleteBackup(ctx, c, id); err != nil {
				return err
			}
			return waitFor(ctx, defaultDeleteTimeout, "backup "+id+" to be deleted", func() (bool, error) {
				f, err := getBackup(ctx, c, id)
				if apiclient.IsNotFound(err) {
					return true, nil
				}
				return err == nil && f == nil, err
			})
		},
	})
}
