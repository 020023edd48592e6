package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/virtflow/virtflow/clients/apiclient"
)

// ---------------------------------------------------------------- virtflow_rack

type rackModel struct {
	ID          types.String `tfsdk:"id"`
	Name        types.String `tfsdk:"name"`
	Description types.String `tfsdk:"description"`
	Row         types.String `tfsdk:"row"`
	Position    types.Int64  `tfsdk:"position"`
	Height      types.Int64  `tfsdk:"height"`
	Status      types.String `tfsdk:"status"`
	FloorID     types.String `tfsdk:"floor_id"`
}

func (m *rackModel) set(f *apiclient.RackFields) {
	m.ID, m.Name, m.Description, m.Row = types.StringValue(f.Id), types.StringValue(f.Name), str(f.Description), str(f.Row)
	m.Position, m.Height, m.Status, m.FloorID = intv(f.Position), types.Int64Value(int64(f.Height)), types.StringValue(string(f.Status)), types.StringValue(f.Floor.Id)
}

func rackResource() resource.Resource {
	return newResource(crud[rackModel]{
		name: "rack",
		schema: schema.Schema{Description: "A rack on a floor (machine room).", Attributes: map[string]schema.Attribute{
			"id":          idAttribute(),
			"name":        stringAttr("Name, unique on its floor.", required),
			"description": stringAttr(""),
			"row":         stringAttr("Row."),
			"position":    intAttr("Position in the row."),
			"height":      intAttr("Height in rack units (default 42).", optional, computed),
			"status":      stringAttr("ACTIVE, RESERVED, EMPTY_SPARE or DECOMMISSIONING.", optional, computed),
			"floor_id":    stringAttr("The floor.", required),
		}},
		id: func(m *rackModel) string { return m.ID.ValueString() },
		create: func(ctx context.Context, c *apiclient.Client, m *rackModel) error {
			r, err := apiclient.CreateRack(ctx, c, apiclient.CreateRackInput{Name: m.Name.ValueString(), Description: strPtr(m.Description),
				Row: strPtr(m.Row), Position: intPtr(m.Position), Height: intPtr(m.Height), Status: enumPtr[apiclient.RackStatus](m.Status),
				FloorID: m.FloorID.ValueString()})
			if err != nil {
				return err
			}
			m.set(&r.CreateRack.RackFields)
			return nil
		},
		read: func(ctx context.Context, c *apiclient.Client, m *rackModel) (bool, error) {
			r, err := apiclient.GetRack(ctx, c, m.ID.ValueString())
			if err != nil || len(r.Racks.Edges) == 0 || r.Racks.Edges[0].Node == nil {
				return false, err
			}
			m.set(&r.Racks.Edges[0].Node.RackFields)
			return true, nil
		},
		update: func(ctx context.Context, c *apiclient.Client, p, s *rackModel) error {
			r, err := apiclient.UpdateRack(ctx, c, s.ID.ValueString(), apiclient.UpdateRackInput{Name: strPtr(p.Name),
				Description: strPtr(p.Description), ClearDescription: clear(p.Description, s.Description),
				Row: strPtr(p.Row), ClearRow: clear(p.Row, s.Row), Position: intPtr(p.Position), ClearPosition: clear(p.Position, s.Position),
				Height: intPtr(p.Height), Status: enumPtr[apiclient.RackStatus](p.Status), FloorID: strPtr(p.FloorID)})
			if err != nil {
				return err
			}
			p.set(&r.UpdateRack.RackFields)
			return nil
		},
		delete: func(ctx context.Context, c *apiclient.Client, s *rackModel) error {
			_, err := apiclient.DeleteRack(ctx, c, s.ID.ValueString())
			return err
		},
	})
}

// ---------------------------------------------------------------- virtflow_host

type hostModel struct {
	ID           types.String `tfsdk:"id"`
	Name         types.String `tfsdk:"name"`
	Description  types.String `tfsdk:"description"`
	SerialNumber types.String `tfsdk:"serial_number"`
	Vendor       types.String `tfsdk:"vendor"`
	Model        types.String `tfsdk:"model"`
	Kind         types.String `tfsdk:"kind"`
	Position     types.Int64  `tfsdk:"position"`
	Height       types.Int64  `tfsdk:"height"`
	Face         types.String `tfsdk:"face"`
	Lifecycle    types.String `tfsdk:"lifecycle_state"`
	CPUCores     types.Int64  `tfsdk:"cpu_cores"`
	MemoryMB     types.Int64  `tfsdk:"memory_mb"`
	RackID       types.String `tfsdk:"rack_id"`
}

func (m *hostModel) set(f *apiclient.HostFields) {
	m.ID, m.Name, m.Description = types.StringValue(f.Id), types.StringValue(f.Name), str(f.Description)
	m.SerialNumber, m.Vendor, m.Model, m.Kind = str(f.SerialNumber), str(f.Vendor), str(f.Model), types.StringValue(string(f.Kind))
	m.Position, m.Height, m.Face, m.Lifecycle = intv(f.Position), types.Int64Value(int64(f.Height)), types.StringValue(string(f.Face)), types.StringValue(string(f.Lifecycle))
	m.CPUCores, m.MemoryMB, m.RackID = types.Int64Value(int64(f.CpuCores)), types.Int64Value(int64(f.MemoryMB)), ref(f.Rack)
}

func hostResource() resource.Resource {
	return newResource(crud[hostModel]{
		name: "host",
		schema: schema.Schema{Description: "A physical host (server, switch, router, PDU…), optionally mounted in a rack.", Attributes: map[string]schema.Attribute{
			"id":              idAttribute(),
			"name":            stringAttr("Unique name.", required),
			"description":     stringAttr(""),
			"serial_number":   stringAttr("Serial number."),
			"vendor":          stringAttr("Vendor."),
			"model":           stringAttr("Hardware model."),
			"kind":            stringAttr("SERVER, SWITCH, ROUTER, PDU or OTHER.", optional, computed),
			"position":        intAttr("Lowest rack unit it occupies (1 is the bottom)."),
			"height":          intAttr("Height in rack units.", optional, computed),
			"face":            stringAttr("FRONT or REAR.", optional, computed),
			"lifecycle_state": stringAttr("PLANNED, STAGED, ACTIVE, MAINTENANCE or RETIRED.", optional, computed),
			"cpu_cores":       intAttr("Physical cores over all sockets.", optional, computed),
			"memory_mb":       intAttr("Memory in MB.", optional, computed),
			"rack_id":         stringAttr("The rack it is mounted in."),
		}},
		id: func(m *hostModel) string { return m.ID.ValueString() },
		create: func(ctx context.Context, c *apiclient.Client, m *hostModel) error {
			r, err := apiclient.CreateHost(ctx, c, apiclient.CreateHostInput{Name: m.Name.ValueString(), Description: strPtr(m.Description),
				SerialNumber: strPtr(m.SerialNumber), Vendor: strPtr(m.Vendor), Model: strPtr(m.Model), Kind: enumPtr[apiclient.HostKind](m.Kind),
				Position: intPtr(m.Position), Height: intPtr(m.Height), Face: enumPtr[apiclient.HostFace](m.Face),
				Lifecycle: enumPtr[apiclient.HostLifecycle](m.Lifecycle), CpuCores: intPtr(m.CPUCores), MemoryMB: intPtr(m.MemoryMB), RackID: strPtr(m.RackID)})
			if err != nil {
				return err
			}
			m.set(&r.CreateHost.HostFields)
			return nil
		},
		read: func(ctx context.Context, c *apiclient.Client, m *hostModel) (bool, error) {
			r, err := apiclient.GetHost(ctx, c, m.ID.ValueString())
			if err != nil || len(r.Hosts.Edges) == 0 || r.Hosts.Edges[0].Node == nil {
				return false, err
			}
			m.set(&r.Hosts.Edges[0].Node.HostFields)
			return true, nil
		},
		update: func(ctx context.Context, c *apiclient.Client, p, s *hostModel) error {
			r, err := apiclient.UpdateHost(ctx, c, s.ID.ValueString(), apiclient.UpdateHostInput{Name: strPtr(p.Name),
				Description: strPtr(p.Description), ClearDescription: clear(p.Description, s.Description),
				SerialNumber: strPtr(p.SerialNumber), ClearSerialNumber: clear(p.SerialNumber, s.SerialNumber),
				Vendor: strPtr(p.Vendor), ClearVendor: clear(p.Vendor, s.Vendor), Model: strPtr(p.Model), ClearModel: clear(p.Model, s.Model),
				Kind: enumPtr[apiclient.HostKind](p.Kind), Position: intPtr(p.Position), ClearPosition: clear(p.Position, s.Position),
				Height: intPtr(p.Height), Face: enumPtr[apiclient.HostFace](p.Face), Lifecycle: enumPtr[apiclient.HostLifecycle](p.Lifecycle),
				CpuCores: intPtr(p.CPUCores), MemoryMB: intPtr(p.MemoryMB), RackID: strPtr(p.RackID), ClearRack: clear(p.RackID, s.RackID)})
			if err != nil {
				return err
			}
			p.set(&r.UpdateHost.HostFields)
			return nil
		},
		delete: func(ctx context.Context, c *apiclient.Client, s *hostModel) error {
			_, err := apiclient.DeleteHost(ctx, c, s.ID.ValueString())
			return err
		},
	})
}

// ---------------------------------------------------------------- virtflow_port

type portModel struct {
	ID          types.String `tfsdk:"id"`
	Name        types.String `tfsdk:"name"`
	Description types.String `tfsdk:"description"`
	MAC         types.String `tfsdk:"mac"`
	SpeedMbps   types.Int64  `tfsdk:"speed_mbps"`
	Kind        types.String `tfsdk:"kind"`
	HostID      types.String `tfsdk:"host_id"`
}

func (m *portModel) set(f *apiclient.PortFields) {
	m.ID, m.Name, m.Description, m.MAC = types.StringValue(f.Id), types.StringValue(f.Name), str(f.Description), str(f.Mac)
	m.SpeedMbps, m.Kind, m.HostID = intv(f.SpeedMbps), types.StringValue(string(f.Kind)), ref(f.Host)
}

func portResource() resource.Resource {
	return newResource(crud[portModel]{
		name: "port",
		schema: schema.Schema{Description: "A network port of a host, the end of a cable.", Attributes: map[string]schema.Attribute{
			"id":          idAttribute(),
			"name":        stringAttr("Name, unique on its host.", required),
			"description": stringAttr(""),
			"mac":         stringAttr("MAC address (lower-case, colon form)."),
			"speed_mbps":  intAttr("Speed in Mbit/s."),
			"kind":        stringAttr("PHYSICAL, BOND or VIRTUAL.", optional, computed),
			"host_id":     stringAttr("The host.", optional, replace),
		}},
		id: func(m *portModel) string { return m.ID.ValueString() },
		create: func(ctx context.Context, c *apiclient.Client, m *portModel) error {
			r, err := apiclient.CreatePort(ctx, c, apiclient.CreatePortInput{Name: m.Name.ValueString(), Description: strPtr(m.Description),
				Mac: strPtr(m.MAC), SpeedMbps: intPtr(m.SpeedMbps), Kind: enumPtr[apiclient.PortKind](m.Kind), HostID: strPtr(m.HostID)})
			if err != nil {
				return err
			}
			m.set(&r.CreatePort.PortFields)
			return nil
		},
		read: func(ctx context.Context, c *apiclient.Client, m *portModel) (bool, error) {
			r, err := apiclient.GetPort(ctx, c, m.ID.ValueString())
			if err != nil || len(r.Ports.Edges) == 0 || r.Ports.Edges[0].Node == nil {
				return false, err
			}
			m.set(&r.Ports.Edges[0].Node.PortFields)
			return true, nil
		},
		update: func(ctx context.Context, c *apiclient.Client, p, s *portModel) error {
			r, err := apiclient.UpdatePort(ctx, c, s.ID.ValueString(), apiclient.UpdatePortInput{Name: strPtr(p.Name),
				Description: strPtr(p.Description), ClearDescription: clear(p.Description, s.Description),
				Mac: strPtr(p.MAC), ClearMAC: clear(p.MAC, s.MAC), SpeedMbps: intPtr(p.SpeedMbps), ClearSpeedMbps: clear(p.SpeedMbps, s.SpeedMbps),
				Kind: enumPtr[apiclient.PortKind](p.Kind)})
			if err != nil {
				return err
			}
			p.set(&r.UpdatePort.PortFields)
			return nil
		},
		delete: func(ctx context.Context, c *apiclient.Client, s *portModel) error {
			_, err := apiclient.DeletePort(ctx, c, s.ID.ValueString())
			return err
		},
	})
}

// ---------------------------------------------------------------- virtflow_cable

type cableModel struct {
	ID      types.String  `tfsdk:"id"`
	APortID types.String  `tfsdk:"a_port_id"`
	BPortID types.String  `tfsdk:"b_port_id"`
	Label   types.String  `tfsdk:"label"`
	Kind    types.String  `tfsdk:"kind"`
	Status  types.String  `tfsdk:"status"`
	LengthM types.Float64 `tfsdk:"length_m"`
}

func (m *cableModel) set(f *apiclient.LinkFields) {
	m.ID, m.APortID, m.BPortID = types.StringValue(f.Id), types.StringValue(f.APort.Id), types.StringValue(f.BPort.Id)
	m.Label, m.Kind, m.Status, m.LengthM = str(f.Label), types.StringValue(string(f.Kind)), types.StringValue(string(f.Status)), floatv(f.LengthM)
}

func cableResource() resource.Resource {
	return newResource(crud[cableModel]{
		name: "cable",
		schema: schema.Schema{Description: "A cable (the API's Link) between two ports.", Attributes: map[string]schema.Attribute{
			"id":        idAttribute(),
			"a_port_id": stringAttr("One end.", required, replace),
			"b_port_id": stringAttr("The other end.", required, replace),
			"label":     stringAttr("Label."),
			"kind":      stringAttr("Cable kind.", optional, computed),
			"status":    stringAttr("Status.", optional, computed),
			"length_m":  floatAttr("Length in metres."),
		}},
		fields: map[string]string{"aPortID": "a_port_id", "bPortID": "b_port_id", "lengthM": "length_m"},
		id:     func(m *cableModel) string { return m.ID.ValueString() },
		create: func(ctx context.Context, c *apiclient.Client, m *cableModel) error {
			r, err := apiclient.CreateLink(ctx, c, apiclient.CreateLinkInput{APortID: m.APortID.ValueString(), BPortID: m.BPortID.ValueString(),
				Label: strPtr(m.Label), Kind: enumPtr[apiclient.LinkKind](m.Kind), Status: enumPtr[apiclient.LinkStatus](m.Status), LengthM: floatPtr(m.LengthM)})
			if err != nil {
				return err
			}
			m.set(&r.CreateLink.LinkFields)
			return nil
		},
		read: func(ctx context.Context, c *apiclient.Client, m *cableModel) (bool, error) {
			r, err := apiclient.GetLink(ctx, c, m.ID.ValueString())
			if err != nil || len(r.Links.Edges) == 0 || r.Links.Edges[0].Node == nil {
				return false, err
			}
			m.set(&r.Links.Edges[0].Node.LinkFields)
			return true, nil
		},
		update: func(ctx context.Context, c *apiclient.Client, p, s *cableModel) error {
			r, err := apiclient.UpdateLink(ctx, c, s.ID.ValueString(), apiclient.UpdateLinkInput{Label: strPtr(p.Label), ClearLabel: clear(p.Label, s.Label),
				Kind: enumPtr[apiclient.LinkKind](p.Kind), Status: enumPtr[apiclient.LinkStatus](p.Status),
				LengthM: floatPtr(p.LengthM), ClearLengthM: clear(p.LengthM, s.LengthM)})
			if err != nil {
				return err
			}
			p.set(&r.UpdateLink.LinkFields)
			return nil
		},
		delete: func(ctx context.Context, c *apiclient.Client, s *cableModel) error {
			_, err := apiclient.DeleteLink(ctx, c, s.ID.ValueString())
			return err
		},
	})
}
