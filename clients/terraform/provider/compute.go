package provider

import (
	"context"
	"fmt"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/virtflow/virtflow/clients/apiclient"
)

// Default waits of the resources that wait for the platform.
const (
	defaultCreateTimeout = 10 * time.Minute
	defaultDeleteTimeout = 10 * time.Minute
)

// waitFor polls check until it reports done, fails, or timeout passes. The waits between
// polls grow from 250 ms to 3 s with jitter (cenkalti/backoff), so that many resources
// waiting at once do not poll the API in lockstep.
func waitFor(ctx context.Context, timeout time.Duration, what string, check func() (done bool, err error)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	b := &backoff.ExponentialBackOff{InitialInterval: 250 * time.Millisecond, RandomizationFactor: 0.3, Multiplier: 1.5, MaxInterval: 3 * time.Second}
	b.Reset()
	for {
		done, err := check()
		if err != nil || done {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("timed out after %v waiting for %s", timeout, what)
		case <-time.After(b.NextBackOff()):
		}
	}
}

// ---------------------------------------------------------------- virtflow_virtual_machine

type vmModel struct {
	ID                 types.String   `tfsdk:"id"`
	Name               types.String   `tfsdk:"name"`
	Description        types.String   `tfsdk:"description"`
	Type               types.String   `tfsdk:"type"`
	TenantID           types.String   `tfsdk:"tenant_id"`
	RegionID           types.String   `tfsdk:"region_id"`
	FlavorID           types.String   `tfsdk:"flavor_id"`
	ImageID            types.String   `tfsdk:"image_id"`
	AvailabilityZoneID types.String   `tfsdk:"availability_zone_id"`
	NetworkIDs         types.Set      `tfsdk:"network_ids"`
	SSHKeyIDs          types.Set      `tfsdk:"ssh_key_ids"`
	UserData           types.String   `tfsdk:"user_data"`
	Labels             types.Map      `tfsdk:"labels"`
	Status             types.String   `tfsdk:"status"`
	GuestState         types.String   `tfsdk:"guest_state"`
	NodeID             types.String   `tfsdk:"node_id"`
	Timeouts           timeouts.Value `tfsdk:"timeouts"`
}

func (m *vmModel) set(f *apiclient.VMFields) {
	m.ID, m.Name, m.Description, m.Type = types.StringValue(f.Id), types.StringValue(f.Name), str(f.Description), types.StringValue(string(f.Type))
	m.TenantID, m.RegionID, m.FlavorID = types.StringValue(f.Tenant.Id), types.StringValue(f.Region.Id), types.StringValue(f.Flavor.Id)
	m.ImageID, m.AvailabilityZoneID, m.NodeID = ref(f.Image), ref(f.AvailabilityZone), ref(f.Node)
	m.NetworkIDs, m.SSHKeyIDs = idSet(f.Networks), idSet(f.SshKeys)
	m.UserData, m.Labels, m.Status = str(f.UserData), mapv(f.Labels), types.StringValue(string(f.Status))
	m.GuestState = types.StringValue(string(f.GuestState))
}

func getVM(ctx context.Context, c *apiclient.Client, id string) (*apiclient.VMFields, error) {
	r, err := apiclient.GetVM(ctx, c, id)
	if err != nil || len(r.VirtualMachines.Edges) == 0 || r.VirtualMachines.Edges[0].Node == nil {
		return nil, err
	}
	return &r.VirtualMachines.Edges[0].Node.VMFields, nil
}

func virtualMachineResource() resource.Resource {
	ctx := context.Background()
	return newResource(crud[vmModel]{
		name: "virtual_machine",
		schema: schema.Schema{Description: "A virtual machine. Create places it and waits until it is ACTIVE (ERROR fails the apply " +
			"with its reason); delete waits until it is gone. Changing what the VM was placed and built from replaces it.",
			Attributes: map[string]schema.Attribute{
				"id":                   idAttribute(),
				"name":                 stringAttr("Name.", required),
				"description":          stringAttr(""),
				"type":                 stringAttr("CONTROL_PLANE, WORKER, MANAGEMENT or GENERAL.", optional, computed, replace),
				"tenant_id":            stringAttr("The tenant.", required, replace),
				"region_id":            stringAttr("The region.", required, replace),
				"flavor_id":            stringAttr("The flavor (size). A change resizes the VM in place: an ACTIVE VM is stopped, resized (resizeVirtualMachine; it keeps its id, name and addresses, and is recreated from its image on the new size, so root-disk contents are lost) and started again.", required),
				"image_id":             stringAttr("The image.", optional, replace),
				"availability_zone_id": stringAttr("Keep the VM in this zone; chosen by placement when left out.", optional, computed, replace),
				"network_ids":          idSetAttr("Networks with a NIC each; left out: the tenant's default VM network.", optional, computed, replace),
				"ssh_key_ids":          idSetAttr("SSH keys for the image's default user.", optional, computed, replace),
				"user_data":            stringAttr("#cloud-config for the config drive (at most 64 KiB).", optional, replace),
				"labels":               schema.MapAttribute{ElementType: types.StringType, Optional: true, Description: "Key/value labels."},
				"status":               stringAttr("Lifecycle status (ACTIVE once running).", computed),
				"guest_state": stringAttr("What the guest itself said: UNKNOWN, BOOTING (the domain runs), READY (the guest reported in "+
					"through POST /guest/ready or its QEMU guest agent) or UNREACHABLE (it did not within the deadline).", computed),
				"node_id":  stringAttr("The compute node the scheduler placed the VM on.", computed),
				"timeouts": timeouts.Attributes(ctx, timeouts.Opts{Create: true, Delete: true}),
			}},
		fields: map[string]string{"flavorID": "flavor_id", "userData": "user_data", "sshKeyIDs": "ssh_key_ids", "networkIDs": "network_ids", "availabilityZoneID": "availability_zone_id"},
		id:     func(m *vmModel) string { return m.ID.ValueString() },
		create: func(ctx context.Context, c *apiclient.Client, m *vmModel) error {
			timeout, d := m.Timeouts.Create(ctx, defaultCreateTimeout)
			if d.HasError() {
				return fmt.Errorf("timeouts.create: %v", d)
			}
			var typ *apiclient.VirtualMachineType
			if t := enumPtr[apiclient.VirtualMachineType](m.Type); t != nil {
				typ = t
			}
			r, err := apiclient.CreateVM(ctx, c, apiclient.CreateVirtualMachineInput{Name: m.Name.ValueString(), Description: strPtr(m.Description),
				Type: typ, TenantID: m.TenantID.ValueString(), RegionID: m.RegionID.ValueString(), FlavorID: m.FlavorID.ValueString(),
				ImageID: strPtr(m.ImageID), AvailabilityZoneID: strPtr(m.AvailabilityZoneID), NetworkIDs: stringSet(ctx, m.NetworkIDs),
				SshKeyIDs: stringSet(ctx, m.SSHKeyIDs), UserData: strPtr(m.UserData), Labels: stringMap(ctx, m.Labels)})
			if err != nil {
				return err
			}
			tm := m.Timeouts
			m.set(&r.CreateVirtualMachine.VMFields)
			m.Timeouts = tm
			id := m.ID.ValueString()
			var last *apiclient.VMFields
			err = waitFor(ctx, timeout, "VM "+id+" to be ACTIVE", func() (bool, error) {
				f, err := getVM(ctx, c, id)
				if err != nil {
					return false, err
				}
				if f == nil {
					return false, fmt.Errorf("VM %s disappeared while being created", id)
				}
				last = f
				switch f.Status {
				case apiclient.VirtualMachineStatusActive:
					return true, nil
				case apiclient.VirtualMachineStatusError:
					reason := ""
					if f.StatusReason != nil {
						reason = *f.StatusReason
					}
					return false, fmt.Errorf("VM %s (%s) went to ERROR: %s", id, f.Name, reason)
				}
				return false, nil
			})
			if last != nil {
				m.set(last)
				m.Timeouts = tm
			}
			if err != nil {
				return &partialError{err}
			}
			return nil
		},
		read: func(ctx context.Context, c *apiclient.Client, m *vmModel) (bool, error) {
			f, err := getVM(ctx, c, m.ID.ValueString())
			if err != nil || f == nil || f.Status == apiclient.VirtualMachineStatusDeleted {
				return false, err
			}
			tm := m.Timeouts
			m.set(f)
			m.Timeouts = tm
			return true, nil
		},
		update: func(ctx context.Context, c *apiclient.Client, p, s *vmModel) error {
			if p.FlavorID.ValueString() != s.FlavorID.ValueString() {
				if err := resizeVM(ctx, c, p, s.ID.ValueString()); err != nil {
					return err
				}
			}
			labels := stringMap(ctx, p.Labels)
			r, err := apiclient.UpdateVM(ctx, c, s.ID.ValueString(), apiclient.UpdateVirtualMachineInput{Name: strPtr(p.Name),
				Description: strPtr(p.Description), ClearDescription: clear(p.Description, s.Description),
				Labels: labels, ClearLabels: clear(p.Labels, s.Labels)})
			if err != nil {
				return err
			}
			tm := p.Timeouts
			p.set(&r.UpdateVirtualMachine.VMFields)
			p.Timeouts = tm
			return nil
		},
		delete: func(ctx context.Context, c *apiclient.Client, s *vmModel) error {
			timeout, d := s.Timeouts.Delete(ctx, defaultDeleteTimeout)
			if d.HasError() {
				return fmt.Errorf("timeouts.delete: %v", d)
			}
			id := s.ID.ValueString()
			if _, err := apiclient.DeleteVM(ctx, c, id, nil); err != nil {
				return err
			}
			return waitFor(ctx, timeout, "VM "+id+" to be deleted", func() (bool, error) {
				f, err := getVM(ctx, c, id)
				if err != nil {
					return false, err
				}
				if f != nil && f.Status == apiclient.VirtualMachineStatusError {
					return false, fmt.Errorf("VM %s went to ERROR while being deleted: %s", id, deref(f.StatusReason))
				}
				return f == nil || f.Status == apiclient.VirtualMachineStatusDeleted, nil
			})
		},
	})
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// ---------------------------------------------------------------- virtflow_volume

type volumeModel struct {
	ID               types.String `tfsdk:"id"`
	Name             types.String `tfsdk:"name"`
	SizeGB           types.Int64  `tfsdk:"size_gb"`
	Type             types.String `tfsdk:"type"`
	StoragePool      types.String `tfsdk:"storage_pool"`
	TenantID         types.String `tfsdk:"tenant_id"`
	VirtualMachineID types.String `tfsdk:"virtual_machine_id"`
	Status           types.String `tfsdk:"status"`
}

func (m *volumeModel) set(f *apiclient.VolumeFields) {
	m.ID, m.Name, m.SizeGB, m.Type = types.StringValue(f.Id), types.StringValue(f.Name), types.Int64Value(int64(f.SizeGB)), types.StringValue(string(f.Type))
	m.StoragePool, m.TenantID, m.VirtualMachineID, m.Status = str(f.StoragePool), types.StringValue(f.Tenant.Id), ref(f.VirtualMachine), types.StringValue(string(f.Status))
}

func volumeResource() resource.Resource {
	return newResource(crud[volumeModel]{
		name: "volume",
		schema: schema.Schema{Description: "A block volume of a tenant, created on the node of the first VM it is attached to. " +
			"Size and type are fixed once created (a change replaces it); attaching and detaching follow virtual_machine_id.",
			Attributes: map[string]schema.Attribute{
				"id":                 idAttribute(),
				"name":               stringAttr("Name.", required),
				"size_gb":            intAttr("Size in GiB.", required, replace),
				"type":               stringAttr("Volume type: HDD, SSD or NVME.", optional, computed, replace),
				"storage_pool":       stringAttr("The node storage pool holding it (set by VirtFlow).", computed),
				"tenant_id":          stringAttr("The tenant.", required, replace),
				"virtual_machine_id": stringAttr("The VM the volume is attached to."),
				"status":             stringAttr("Status.", computed),
			}},
		fields: map[string]string{"sizeGB": "size_gb", "virtualMachineID": "virtual_machine_id"},
		id:     func(m *volumeModel) string { return m.ID.ValueString() },
		create: func(ctx context.Context, c *apiclient.Client, m *volumeModel) error {
			r, err := apiclient.CreateVolume(ctx, c, apiclient.CreateVolumeInput{Name: m.Name.ValueString(), SizeGB: int(m.SizeGB.ValueInt64()),
				Type: enumPtr[apiclient.VolumeType](m.Type), TenantID: m.TenantID.ValueString(),
				VirtualMachineID: strPtr(m.VirtualMachineID)})
			if err != nil {
				return err
			}
			m.set(&r.CreateVolume.VolumeFields)
			return nil
		},
		read: func(ctx context.Context, c *apiclient.Client, m *volumeModel) (bool, error) {
			r, err := apiclient.GetVolume(ctx, c, m.ID.ValueString())
			if err != nil || len(r.Volumes.Edges) == 0 || r.Volumes.Edges[0].Node == nil {
				return false, err
			}
			m.set(&r.Volumes.Edges[0].Node.VolumeFields)
			return true, nil
		},
		update: func(ctx context.Context, c *apiclient.Client, p, s *volumeModel) error {
			id := s.ID.ValueString()
			if !p.Name.Equal(s.Name) {
				if _, err := apiclient.UpdateVolume(ctx, c, id, apiclient.UpdateVolumeInput{Name: strPtr(p.Name)}); err != nil {
					return err
				}
			}
			if !p.VirtualMachineID.Equal(s.VirtualMachineID) {
				if !s.VirtualMachineID.IsNull() && s.VirtualMachineID.ValueString() != "" {
					if err := detachVolume(ctx, c, id); err != nil {
						return err
					}
				}
				if vm := p.VirtualMachineID.ValueString(); vm != "" {
					if _, err := apiclient.AttachVolume(ctx, c, id, vm); err != nil {
						return err
					}
				}
			}
			r, err := apiclient.GetVolume(ctx, c, id)
			if err != nil {
				return err
			}
			if len(r.Volumes.Edges) == 0 || r.Volumes.Edges[0].Node == nil {
				return fmt.Errorf("volume %s is gone", id)
			}
			p.set(&r.Volumes.Edges[0].Node.VolumeFields)
			return nil
		},
		delete: func(ctx context.Context, c *apiclient.Client, s *volumeModel) error {
			id := s.ID.ValueString()
			// An attached volume is detached first (the API refuses to delete it), then its
			// data deleted; both wait until the node's agent has done it.
			if err := detachVolume(ctx, c, id); err != nil {
				return err
			}
			if _, err := apiclient.DeleteVolume(ctx, c, id); err != nil {
				return err
			}
			return waitFor(ctx, defaultDeleteTimeout, "volume "+id+" to be deleted", func() (bool, error) {
				r, err := apiclient.GetVolume(ctx, c, id)
				if apiclient.IsNotFound(err) {
					return true, nil
				}
				return err == nil && (len(r.Volumes.Edges) == 0 || r.Volumes.Edges[0].Node == nil), err
			})
		},
	})
}

// detachVolume detaches volume id from its VM, if any, and waits until it is detached
// (AVAILABLE or never created).
func detachVolume(ctx context.Context, c *apiclient.Client, id string) error {
	r, err := apiclient.GetVolume(ctx, c, id)
	if err != nil || len(r.Volumes.Edges) == 0 || r.Volumes.Edges[0].Node == nil || r.Volumes.Edges[0].Node.VirtualMachine == nil {
		return err
	}
	if _, err := apiclient.DetachVolume(ctx, c, id); err != nil {
		return err
	}
	return waitFor(ctx, defaultDeleteTimeout, "volume "+id+" to be detached", func() (bool, error) {
		r, err := apiclient.GetVolume(ctx, c, id)
		if err != nil || len(r.Volumes.Edges) == 0 || r.Volumes.Edges[0].Node == nil {
			return true, err
		}
		return r.Volumes.Edges[0].Node.VirtualMachine == nil, nil
	})
}

// ---------------------------------------------------------------- virtflow_region_service

type regionServiceModel struct {
	ID           types.String   `tfsdk:"id"`
	Name         types.String   `tfsdk:"name"`
	Description  types.String   `tfsdk:"description"`
	TenantID     types.String   `tfsdk:"tenant_id"`
	RegionID     types.String   `tfsdk:"region_id"`
	FlavorID     types.String   `tfsdk:"flavor_id"`
	ImageID      types.String   `tfsdk:"image_id"`
	Replicas     types.Int64    `tfsdk:"replicas"`
	AllowPartial types.Bool     `tfsdk:"allow_partial"`
	LoadBalanced types.Bool     `tfsdk:"load_balanced"`
	NetworkIDs   types.Set      `tfsdk:"network_ids"`
	Status       types.String   `tfsdk:"status"`
	Timeouts     timeouts.Value `tfsdk:"timeouts"`
}

func (m *regionServiceModel) set(f *apiclient.RegionServiceFields) {
	tm := m.Timeouts
	m.ID, m.Name, m.Description = types.StringValue(f.Id), types.StringValue(f.Name), str(f.Description)
	m.TenantID, m.RegionID, m.FlavorID, m.ImageID = types.StringValue(f.Tenant.Id), types.StringValue(f.Region.Id), ref(f.Flavor), ref(f.Image)
	m.Replicas, m.AllowPartial, m.LoadBalanced = types.Int64Value(int64(f.Replicas)), types.BoolValue(f.AllowPartial), types.BoolValue(f.LoadBalanced)
	m.NetworkIDs, m.Status, m.Timeouts = idSet(f.Networks), types.StringValue(string(f.Status)), tm
}

func getRegionService(ctx context.Context, c *apiclient.Client, id string) (*apiclient.RegionServiceFields, error) {
	r, err := apiclient.GetRegionService(ctx, c, id)
	if err != nil || len(r.RegionServices.Edges) == 0 || r.RegionServices.Edges[0].Node == nil {
		return nil, err
	}
	return &r.RegionServices.Edges[0].Node.RegionServiceFields, nil
}

// waitRegionService waits until the service is ACTIVE (its VMs created) or fails.
func waitRegionService(ctx context.Context, c *apiclient.Client, m *regionServiceModel, timeout time.Duration) error {
	id := m.ID.ValueString()
	return waitFor(ctx, timeout, "region service "+id+" to be ACTIVE", func() (bool, error) {
		f, err := getRegionService(ctx, c, id)
		if err != nil || f == nil {
			return false, err
		}
		m.set(f)
		switch f.Status {
		case apiclient.RegionServiceStatusActive:
			return true, nil
		case apiclient.RegionServiceStatusError:
			return false, fmt.Errorf("region service %s went to ERROR: %s", id, deref(f.StatusReason))
		}
		return false, nil
	})
}

func regionServiceResource() resource.Resource {
	ctx := context.Background()
	return newResource(crud[regionServiceModel]{
		name: "region_service",
		schema: schema.Schema{Description: "A region service: a group of replicas (VMs) placed together; replicas scale in place. " +
			"Create and scale wait until it is ACTIVE.", Attributes: map[string]schema.Attribute{
			"id":            idAttribute(),
			"name":          stringAttr("Name.", required),
			"description":   stringAttr(""),
			"tenant_id":     stringAttr("The tenant.", required, replace),
			"region_id":     stringAttr("The region.", required, replace),
			"flavor_id":     stringAttr("The replicas' flavor.", optional, replace),
			"image_id":      stringAttr("The replicas' image.", optional, replace),
			"replicas":      intAttr("Number of VMs (scaled with scaleRegionService).", optional, computed),
			"allow_partial": boolAttr("Place as many replicas as fit instead of none.", optional, computed),
			"load_balanced": boolAttr("Create a load balancer with a VIP.", optional, computed, replace),
			"network_ids":   idSetAttr("Networks of the replicas.", optional, computed, replace),
			"status":        stringAttr("Lifecycle status.", computed),
			"timeouts":      timeouts.Attributes(ctx, timeouts.Opts{Create: true, Update: true, Delete: true}),
		}},
		id: func(m *regionServiceModel) string { return m.ID.ValueString() },
		create: func(ctx context.Context, c *apiclient.Client, m *regionServiceModel) error {
			timeout, _ := m.Timeouts.Create(ctx, defaultCreateTimeout)
			r, err := apiclient.CreateRegionService(ctx, c, apiclient.CreateRegionServiceInput{Name: m.Name.ValueString(), Description: strPtr(m.Description),
				TenantID: m.TenantID.ValueString(), RegionID: m.RegionID.ValueString(), FlavorID: strPtr(m.FlavorID), ImageID: strPtr(m.ImageID),
				Replicas: intPtr(m.Replicas), AllowPartial: boolPtr(m.AllowPartial), LoadBalanced: boolPtr(m.LoadBalanced), NetworkIDs: stringSet(ctx, m.NetworkIDs)})
			if err != nil {
				return err
			}
			m.set(&r.CreateRegionService.RegionServiceFields)
			if err := waitRegionService(ctx, c, m, timeout); err != nil {
				return &partialError{err}
			}
			return nil
		},
		read: func(ctx context.Context, c *apiclient.Client, m *regionServiceModel) (bool, error) {
			f, err := getRegionService(ctx, c, m.ID.ValueString())
			if err != nil || f == nil || f.Status == apiclient.RegionServiceStatusDeleted {
				return false, err
			}
			m.set(f)
			return true, nil
		},
		update: func(ctx context.Context, c *apiclient.Client, p, s *regionServiceModel) error {
			id := s.ID.ValueString()
			r, err := apiclient.UpdateRegionService(ctx, c, id, apiclient.UpdateRegionServiceInput{Name: strPtr(p.Name),
				Description: strPtr(p.Description), ClearDescription: clear(p.Description, s.Description), AllowPartial: boolPtr(p.AllowPartial)})
			if err != nil {
				return err
			}
			want := p.Replicas
			p.set(&r.UpdateRegionService.RegionServiceFields)
			if !want.IsNull() && !want.IsUnknown() && !want.Equal(s.Replicas) {
				if _, err := apiclient.ScaleRegionService(ctx, c, id, int(want.ValueInt64())); err != nil {
					return err
				}
				timeout, _ := p.Timeouts.Update(ctx, defaultCreateTimeout)
				return waitRegionService(ctx, c, p, timeout)
			}
			return nil
		},
		delete: func(ctx context.Context, c *apiclient.Client, s *regionServiceModel) error {
			timeout, _ := s.Timeouts.Delete(ctx, defaultDeleteTimeout)
			id := s.ID.ValueString()
			if _, err := apiclient.DeleteRegionService(ctx, c, id); err != nil {
				return err
			}
			return waitFor(ctx, timeout, "region service "+id+" to be deleted", func() (bool, error) {
				f, err := getRegionService(ctx, c, id)
				return f == nil || f.Status == apiclient.RegionServiceStatusDeleted, err
			})
		},
	})
}

// ---------------------------------------------------------------- virtflow_flavor

type flavorModel struct {
	ID               types.String `tfsdk:"id"`
	Name             types.String `tfsdk:"name"`
	VCPUs            types.Int64  `tfsdk:"vcpus"`
	MemoryMB         types.Int64  `tfsdk:"memory_mb"`
	DiskGB           types.Int64  `tfsdk:"disk_gb"`
	CPUPolicy        types.String `tfsdk:"cpu_policy"`
	NetworkMbpsLimit types.Int64  `tfsdk:"network_mbps_limit"`
	Exclusive        types.String `tfsdk:"exclusive"`
}

func (m *flavorModel) set(f *apiclient.FlavorFields) {
	m.ID, m.Name = types.StringValue(f.Id), types.StringValue(f.Name)
	m.VCPUs, m.MemoryMB, m.DiskGB = types.Int64Value(int64(f.Vcpus)), types.Int64Value(f.MemoryMB), types.Int64Value(f.DiskGB)
	m.CPUPolicy, m.Exclusive = types.StringValue(string(f.CpuPolicy)), types.StringValue(string(f.Exclusive))
	m.NetworkMbpsLimit = intv(f.NetworkMbpsLimit)
}

func flavorResource() resource.Resource {
	return newResource(crud[flavorModel]{
		name: "flavor",
		schema: schema.Schema{Description: "A VM size. exclusive HOST offers a whole machine as one VM, NUMA_NODE one NUMA node of it, alone and without limits.", Attributes: map[string]schema.Attribute{
			"id":                 idAttribute(),
			"name":               stringAttr("Name, unique.", required),
			"vcpus":              intAttr("vCPUs.", required, replace),
			"memory_mb":          intAttr("Memory in MB.", required, replace),
			"disk_gb":            intAttr("Root disk in GB.", optional, computed, replace),
			"cpu_policy":         stringAttr("SHARED or DEDICATED.", optional, computed, replace),
			"network_mbps_limit": intAttr("Bandwidth limit of each NIC in Mbit/s."),
			"exclusive":          stringAttr("NONE, HOST or NUMA_NODE.", optional, computed),
		}},
		fields: map[string]string{"memoryMB": "memory_mb", "diskGB": "disk_gb", "cpuPolicy": "cpu_policy", "networkMbpsLimit": "network_mbps_limit"},
		id:     func(m *flavorModel) string { return m.ID.ValueString() },
		create: func(ctx context.Context, c *apiclient.Client, m *flavorModel) error {
			r, err := apiclient.CreateFlavor(ctx, c, apiclient.CreateFlavorInput{Name: m.Name.ValueString(),
				Vcpus: int(m.VCPUs.ValueInt64()), MemoryMB: int(m.MemoryMB.ValueInt64()), DiskGB: intPtr(m.DiskGB),
				CpuPolicy: enumPtr[apiclient.FlavorCPUPolicy](m.CPUPolicy), NetworkMbpsLimit: intPtr(m.NetworkMbpsLimit),
				Exclusive: enumPtr[apiclient.FlavorExclusive](m.Exclusive)})
			if err != nil {
				return err
			}
			m.set(&r.CreateFlavor.FlavorFields)
			return nil
		},
		read: func(ctx context.Context, c *apiclient.Client, m *flavorModel) (bool, error) {
			r, err := apiclient.GetFlavor(ctx, c, m.ID.ValueString())
			if err != nil || len(r.Flavors.Edges) == 0 || r.Flavors.Edges[0].Node == nil {
				return false, err
			}
			m.set(&r.Flavors.Edges[0].Node.FlavorFields)
			return true, nil
		},
		update: func(ctx context.Context, c *apiclient.Client, p, s *flavorModel) error {
			in := apiclient.UpdateFlavorInput{Name: strPtr(p.Name), NetworkMbpsLimit: intPtr(p.NetworkMbpsLimit),
				Exclusive: enumPtr[apiclient.FlavorExclusive](p.Exclusive)}
			if p.NetworkMbpsLimit.IsNull() && !s.NetworkMbpsLimit.IsNull() {
				t := true
				in.ClearNetworkMbpsLimit = &t
			}
			r, err := apiclient.UpdateFlavor(ctx, c, s.ID.ValueString(), in)
			if err != nil {
				return err
			}
			p.set(&r.UpdateFlavor.FlavorFields)
			return nil
		},
		delete: func(ctx context.Context, c *apiclient.Client, s *flavorModel) error {
			_, err := apiclient.DeleteFlavor(ctx, c, s.ID.ValueString())
			return err
		},
	})
}

// resizeVM changes a VM's flavor in place: the API resizes only a stopped VM, so an ACTIVE
// one is stopped, resized with resizeVirtualMachine and started again; it waits, within the
// create timeout, until the VM is back in its former state on the new flavor.
func resizeVM(ctx context.Context, c *apiclient.Client, p *vmModel, id string) error {
	timeout, d := p.Timeouts.Create(ctx, defaultCreateTimeout)
	if d.HasError() {
		return fmt.Errorf("timeouts.create: %v", d)
	}
	flavor := p.FlavorID.ValueString()
	wait := func(what string, done func(f *apiclient.VMFields) bool) error {
		return waitFor(ctx, timeout, "VM "+id+" to be "+what, func() (bool, error) {
			f, err := getVM(ctx, c, id)
			if err != nil {
				return false, err
			}
			if f == nil {
				return false, fmt.Errorf("VM %s disappeared while being resized", id)
			}
			if f.Status == apiclient.VirtualMachineStatusError {
				return false, fmt.Errorf("VM %s (%s) went to ERROR while being resized: %s", id, f.Name, deref(f.StatusReason))
			}
			return done(f), nil
		})
	}
	f, err := getVM(ctx, c, id)
	if err != nil {
		return err
	}
	wasActive := f != nil && f.Status == apiclient.VirtualMachineStatusActive
	if wasActive {
		if _, err := apiclient.StopVM(ctx, c, id); err != nil {
			return err
		}
		if err := wait("STOPPED", func(f *apiclient.VMFields) bool { return f.Status == apiclient.VirtualMachineStatusStopped }); err != nil {
			return err
		}
	}
	if err := c.Do(ctx, `mutation($id: ID!, $f: ID!) { resizeVirtualMachine(id: $id, flavorID: $f) { id } }`,
		map[string]any{"id": id, "f": flavor}, nil); err != nil {
		return err
	}
	if !wasActive {
		return wait("on its new flavor", func(f *apiclient.VMFields) bool { return f.Flavor.Id == flavor })
	}
	if err := wait("resized", func(f *apiclient.VMFields) bool {
		return f.Flavor.Id == flavor && (f.Status == apiclient.VirtualMachineStatusStopped || f.Status == apiclient.VirtualMachineStatusActive)
	}); err != nil {
		return err
	}
	if f, err := getVM(ctx, c, id); err == nil && f != nil && f.Status == apiclient.VirtualMachineStatusStopped {
		if _, err := apiclient.StartVM(ctx, c, id); err != nil {
			return err
		}
	}
	return wait("ACTIVE on its new flavor", func(f *apiclient.VMFields) bool {
		return f.Status == apiclient.VirtualMachineStatusActive && f.Flavor.Id == flavor
	})
}
