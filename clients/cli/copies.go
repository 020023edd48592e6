package cli

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/virtflow/virtflow/clients/apiclient"
)

// Snapshots, backups, restores and clones of a VM's root disk (issue 29; the server side is
// controllers/provision/copies.go). Every object is named like elsewhere in the CLI, by name or id: a
// snapshot's name is unique per VM, so a snapshot named by name needs its VM (--vm); a
// backup's name is unique per tenant, so one named by name needs --tenant when the token
// sees several tenants' backups of that name.

var (
	snapshotColumns = []string{"id", "name", "status", "sizeGB", "virtualMachine", "statusReason"}
	backupColumns   = []string{"id", "name", "status", "sizeGB", "scheduled", "virtualMachine", "statusReason"}
)

// runSnapshot is `virtflow snapshot list|create|revert|delete`.
func runSnapshot(ctx context.Context, a *app, args []string) error {
	const usage = "snapshot list --vm VM | create VM --name NAME [--description TEXT] [--wait] | revert SNAPSHOT [--vm VM] [--wait] | delete SNAPSHOT [--vm VM]   (names or ids)"
	if len(args) == 0 {
		return usagef("%s", usage)
	}
	verb, args := args[0], args[1:]
	fs := flag.NewFlagSet("snapshot "+verb, flag.ContinueOnError)
	vmFlag := fs.String("vm", "", "the VM (name or id): needed to name a snapshot by its name")
	name := fs.String("name", "", "create: the snapshot's name (a slug, unique among the VM's snapshots)")
	description := fs.String("description", "", "create: a description")
	wait := fs.Bool("wait", false, "create, revert: wait until the snapshot is AVAILABLE")
	timeout := fs.Duration("timeout", 10*time.Minute, "how long --wait waits")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	switch {
	case verb == "list" && (*vmFlag == "" || len(pos) != 0),
		verb == "create" && (len(pos) != 1 || *name == ""),
		(verb == "revert" || verb == "delete") && len(pos) != 1:
		return usagef("%s", usage)
	}
	c, err := a.api()
	if err != nil {
		return err
	}
	var vm string
	if verb == "create" {
		*vmFlag = pos[0]
	}
	if *vmFlag != "" {
		if vm, err = a.ref(ctx, c, "vm", *vmFlag); err != nil {
			return err
		}
	}
	switch verb {
	case "list":
		r, err := apiclient.ListSnapshots(ctx, c, vm, nil)
		if err != nil {
			return err
		}
		rows := []apiclient.SnapshotFields{}
		for _, e := range r.Snapshots.Edges {
			if e.Node != nil {
				rows = append(rows, e.Node.SnapshotFields)
			}
		}
		return a.show(rows, snapshotColumns)
	case "create":
		r, err := apiclient.CreateSnapshot(ctx, c, apiclient.CreateSnapshotInput{VirtualMachineID: vm, Name: *name, Description: optional(*description)})
		if err != nil {
			return err
		}
		return a.showSnapshot(ctx, c, &r.CreateSnapshot.SnapshotFields, *wait, *timeout)
	case "revert", "delete":
		id, err := a.snapshotRef(ctx, c, vm, pos[0])
		if err != nil {
			return err
		}
		if verb == "delete" {
			if _, err := apiclient.DeleteSnapshot(ctx, c, id); err != nil {
				return err
			}
			fmt.Fprintf(a.io.Stdout, "deleting snapshot %s\n", id)
			return nil
		}
		r, err := apiclient.RevertSnapshot(ctx, c, id)
		if err != nil {
			return err
		}
		return a.showSnapshot(ctx, c, &r.RevertSnapshot.SnapshotFields, *wait, *timeout)
	}
	return usagef("%s", usage)
}

// snapshotRef resolves a snapshot's id or name; a name is looked up among VM vm's snapshots.
func (a *app) snapshotRef(ctx context.Context, c *apiclient.Client, vm, s string) (string, error) {
	if isID(s) {
		return s, nil
	}
	if vm == "" {
		return "", usagef("snapshot %q: give its id, or its VM with --vm (snapshot names are unique per VM)", s)
	}
	r, err := apiclient.ListSnapshots(ctx, c, vm, &s)
	if err != nil {
		return "", fmt.Errorf("look up snapshot %q: %w", s, err)
	}
	if len(r.Snapshots.Edges) != 1 || r.Snapshots.Edges[0].Node == nil {
		return "", fmt.Errorf("VM %s has no snapshot named %q (or the token may not read it)", vm, s)
	}
	return r.Snapshots.Edges[0].Node.Id, nil
}

// showSnapshot prints snap, after waiting until it is AVAILABLE when wait is set.
func (a *app) showSnapshot(ctx context.Context, c *apiclient.Client, snap *apiclient.SnapshotFields, wait bool, timeout time.Duration) error {
	if wait {
		var err error
		snap, err = await(ctx, timeout, "snapshot "+snap.Name, snap,
			func(s *apiclient.SnapshotFields) (apiclient.SnapshotStatus, *string) { return s.Status, s.StatusReason },
			apiclient.SnapshotStatusAvailable, apiclient.SnapshotStatusError,
			func(ctx context.Context) (*apiclient.SnapshotFields, bool, error) {
				r, err := apiclient.GetSnapshot(ctx, c, snap.Id)
				if err != nil || len(r.Snapshots.Edges) == 0 || r.Snapshots.Edges[0].Node == nil {
					return nil, false, err
				}
				return &r.Snapshots.Edges[0].Node.SnapshotFields, true, nil
			})
		if err != nil {
			return err
		}
	}
	return a.show(snap, snapshotColumns)
}

// runBackup is `virtflow backup list|create|delete|restore`.
func runBackup(ctx context.Context, a *app, args []string) error {
	const usage = "backup list [--vm VM | --tenant TENANT] | create VM --name NAME [--description TEXT] [--wait] | delete BACKUP [--tenant TENANT] | " +
		"restore BACKUP --name NEW_VM [--flavor FLAVOR] [--image IMAGE] [--network NETWORK]... [--ssh-key KEY]... [--tenant TENANT] [--wait]   (names or ids)"
	if len(args) == 0 {
		return usagef("%s", usage)
	}
	verb, args := args[0], args[1:]
	fs := flag.NewFlagSet("backup "+verb, flag.ContinueOnError)
	vmFlag := fs.String("vm", "", "list: the VM (name or id) whose backups to list")
	tenant := fs.String("tenant", "", "the tenant (name or id): lists its backups, or names the backup's tenant")
	name := fs.String("name", "", "create: the backup's name (a slug, unique in the tenant); restore: the new VM's name")
	description := fs.String("description", "", "create: a description")
	flavor := fs.String("flavor", "", "restore: the new VM's flavor (name or id; default: the backup's flavor)")
	image := fs.String("image", "", "restore: the image the new VM names (name or id; default: the backup's image, when it still exists)")
	var networks, keys stringList
	fs.Var(&networks, "network", "restore: a network (name or id; repeatable)")
	fs.Var(&keys, "ssh-key", "restore: an SSH key (name or id; repeatable)")
	wait := fs.Bool("wait", false, "create: wait until the backup is AVAILABLE; restore: until the new VM is ACTIVE")
	timeout := fs.Duration("timeout", 10*time.Minute, "how long --wait waits")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	switch {
	case verb == "list" && len(pos) != 0,
		verb == "create" && (len(pos) != 1 || *name == ""),
		verb == "delete" && len(pos) != 1,
		verb == "restore" && (len(pos) != 1 || *name == ""):
		return usagef("%s", usage)
	}
	c, err := a.api()
	if err != nil {
		return err
	}
	var tenantID *string
	if *tenant != "" {
		id, err := a.ref(ctx, c, "tenant", *tenant)
		if err != nil {
			return err
		}
		tenantID = &id
	}
	switch verb {
	case "list":
		rows := []apiclient.BackupFields{}
		if *vmFlag != "" {
			vm, err := a.ref(ctx, c, "vm", *vmFlag)
			if err != nil {
				return err
			}
			r, err := apiclient.ListVMBackups(ctx, c, vm)
			if err != nil {
				return err
			}
			for _, e := range r.Backups.Edges {
				if e.Node != nil {
					rows = append(rows, e.Node.BackupFields)
				}
			}
		} else {
			found, err := listBackups(ctx, c, tenantID, nil)
			if err != nil {
				return err
			}
			rows = append(rows, found...)
		}
		return a.show(rows, backupColumns)
	case "create":
		vm, err := a.ref(ctx, c, "vm", pos[0])
		if err != nil {
			return err
		}
		r, err := apiclient.CreateBackup(ctx, c, apiclient.CreateBackupInput{VirtualMachineID: vm, Name: *name, Description: optional(*description)})
		if err != nil {
			return err
		}
		return a.showBackup(ctx, c, &r.CreateBackup.BackupFields, *wait, *timeout)
	}
	b, err := a.backupRef(ctx, c, tenantID, pos[0])
	if err != nil {
		return err
	}
	switch verb {
	case "delete":
		if _, err := apiclient.DeleteBackup(ctx, c, b.Id); err != nil {
			return err
		}
		fmt.Fprintf(a.io.Stdout, "deleting backup %s\n", b.Id)
		return nil
	case "restore":
		in := apiclient.CreateVirtualMachineInput{Name: *name, TenantID: b.Tenant.Id, RegionID: b.Region.Id, FlavorID: *flavor}
		if in.FlavorID == "" {
			if b.FlavorName == nil {
				return usagef("backup %s does not name its flavor: give --flavor", b.Name)
			}
			in.FlavorID = *b.FlavorName
		}
		img := *image
		if img == "" && b.ImageName != nil {
			// The image it was made from, when it still exists: only a name on the new VM.
			if id, err := a.ref(ctx, c, "image", *b.ImageName); err == nil {
				img = id
			}
		}
		if err := a.resolveVMInput(ctx, c, &in, img, "", networks, keys); err != nil {
			return err
		}
		r, err := apiclient.RestoreBackup(ctx, c, b.Id, in)
		if err != nil {
			return err
		}
		return a.showNewVM(ctx, c, &r.RestoreBackup.VMFields, *wait, *timeout)
	}
	return usagef("%s", usage)
}

// backupRef reads the backup s names (an id, or a name within tenant when given).
func (a *app) backupRef(ctx context.Context, c *apiclient.Client, tenant *string, s string) (*apiclient.BackupFields, error) {
	if isID(s) {
		r, err := apiclient.GetBackup(ctx, c, s)
		if err != nil {
			return nil, err
		}
		if len(r.Backups.Edges) == 0 || r.Backups.Edges[0].Node == nil {
			return nil, fmt.Errorf("no backup %s (or the token may not read it)", s)
		}
		return &r.Backups.Edges[0].Node.BackupFields, nil
	}
	found, err := listBackups(ctx, c, tenant, &s)
	if err != nil {
		return nil, fmt.Errorf("look up backup %q: %w", s, err)
	}
	switch len(found) {
	case 0:
		return nil, fmt.Errorf("no backup is named %q (or the token may not read it)", s)
	case 1:
		return &found[0], nil
	}
	return nil, fmt.Errorf("more than one tenant has a backup named %q: give --tenant or its id", s)
}

// showBackup prints b, after waiting until it is AVAILABLE when wait is set.
func (a *app) showBackup(ctx context.Context, c *apiclient.Client, b *apiclient.BackupFields, wait bool, timeout time.Duration) error {
	if wait {
		var err error
		b, err = await(ctx, timeout, "backup "+b.Name, b,
			func(b *apiclient.BackupFields) (apiclient.BackupStatus, *string) { return b.Status, b.StatusReason },
			apiclient.BackupStatusAvailable, apiclient.BackupStatusError,
			func(ctx context.Context) (*apiclient.BackupFields, bool, error) {
				r, err := apiclient.GetBackup(ctx, c, b.Id)
				if err != nil || len(r.Backups.Edges) == 0 || r.Backups.Edges[0].Node == nil {
					return nil, false, err
				}
				return &r.Backups.Edges[0].Node.BackupFields, true, nil
			})
		if err != nil {
			return err
		}
	}
	return a.show(b, backupColumns)
}

// showNewVM prints a restored or cloned VM, after waiting until it is ACTIVE when wait is set.
func (a *app) showNewVM(ctx context.Context, c *apiclient.Client, vm *apiclient.VMFields, wait bool, timeout time.Duration) error {
	if wait {
		if err := waitVM(ctx, c, vm.Id, apiclient.VirtualMachineStatusActive, timeout); err != nil {
			return err
		}
		r, err := apiclient.GetVM(ctx, c, vm.Id)
		if err != nil {
			return err
		}
		if len(r.VirtualMachines.Edges) > 0 && r.VirtualMachines.Edges[0].Node != nil {
			vm = &r.VirtualMachines.Edges[0].Node.VMFields
		}
	}
	return a.show(vm, []string{"id", "name", "status", "node"})
}

// runClone is `virtflow clone VM --name NEW_VM`: a backup of VM restored into a new VM of
// the same tenant, region, flavor and image unless the flags say otherwise.
func runClone(ctx context.Context, a *app, args []string) error {
	const usage = "clone VM --name NEW_VM [--flavor FLAVOR] [--network NETWORK]... [--ssh-key KEY]... [--wait]   (names or ids)"
	fs := flag.NewFlagSet("clone", flag.ContinueOnError)
	name := fs.String("name", "", "the new VM's name (required)")
	flavor := fs.String("flavor", "", "the new VM's flavor (name or id; default: the VM's)")
	var networks, keys stringList
	fs.Var(&networks, "network", "a network (name or id; repeatable)")
	fs.Var(&keys, "ssh-key", "an SSH key (name or id; repeatable)")
	wait := fs.Bool("wait", false, "wait until the new VM is ACTIVE")
	timeout := fs.Duration("timeout", 10*time.Minute, "how long --wait waits")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || *name == "" {
		return usagef("%s", usage)
	}
	c, err := a.api()
	if err != nil {
		return err
	}
	id, err := a.ref(ctx, c, "vm", pos[0])
	if err != nil {
		return err
	}
	r, err := apiclient.GetVM(ctx, c, id)
	if err != nil {
		return err
	}
	if len(r.VirtualMachines.Edges) == 0 || r.VirtualMachines.Edges[0].Node == nil {
		return fmt.Errorf("no VM %s (or the token may not read it)", pos[0])
	}
	src := r.VirtualMachines.Edges[0].Node
	in := apiclient.CreateVirtualMachineInput{Name: *name, TenantID: src.Tenant.Id, RegionID: src.Region.Id, FlavorID: *flavor}
	if in.FlavorID == "" {
		in.FlavorID = src.Flavor.Id
	}
	img := ""
	if src.Image != nil {
		img = src.Image.Id
	}
	if err := a.resolveVMInput(ctx, c, &in, img, "", networks, keys); err != nil {
		return err
	}
	out, err := apiclient.CloneVM(ctx, c, id, in)
	if err != nil {
		return err
	}
	return a.showNewVM(ctx, c, &out.CloneVirtualMachine.VMFields, *wait, *timeout)
}

// listBackups lists the backups the token reads, of tenant and named name when given.
func listBackups(ctx context.Context, c *apiclient.Client, tenant, name *string) ([]apiclient.BackupFields, error) {
	var rows []apiclient.BackupFields
	if tenant != nil {
		r, err := apiclient.ListTenantBackups(ctx, c, *tenant, name)
		if err != nil {
			return nil, err
		}
		for _, e := range r.Backups.Edges {
			if e.Node != nil {
				rows = append(rows, e.Node.BackupFields)
			}
		}
		return rows, nil
	}
	r, err := apiclient.ListBackups(ctx, c, name)
	if err != nil {
		return nil, err
	}
	for _, e := range r.Backups.Edges {
		if e.Node != nil {
			rows = append(rows, e.Node.BackupFields)
		}
	}
	return rows, nil
}
