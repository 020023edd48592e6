package dcimimport

import (
	"context"
	"fmt"
	"strings"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/topology"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/datacenter"
	"github.com/virtflow/virtflow/ent/host"
	"github.com/virtflow/virtflow/ent/rack"
)

var (
	hostRequired = []string{"name"}
	hostOptional = []string{"kind", "role", "rack", "position", "height", "face", "full_depth", "lifecycle", "vendor", "model", "serial_number", "description"}
)

// hostRow is a checked HOSTS row.
type hostRow struct {
	name                            string
	kind                            *host.Kind
	role                            *host.Role
	rack                            *ent.Rack
	position, height                *int
	face                            *host.Face
	fullDepth                       *bool
	lifecycle                       *host.Lifecycle
	vendor, model, serial, describe *string
	placement                       topology.Placement
}

// checkHosts validates HOSTS rows: new names and serial numbers, known racks, and units free
// in the rack (of its devices and of earlier rows of the file).
func checkHosts(ctx context.Context, c *ent.Client, recs []record) ([]*planned, error) {
	all := authz.Unrestricted(ctx) // conflicts count whatever the viewer may see
	var names, serials []string
	for _, r := range recs {
		names = append(names, r.get("name"))
		if s := r.get("serial_number"); s != "" {
			serials = append(serials, s)
		}
	}
	taken, err := c.Host.Query().Where(host.Or(host.NameIn(names...), host.SerialNumberIn(serials...))).
		Select(host.FieldName, host.FieldSerialNumber).All(all)
	if err != nil {
		return nil, fmt.Errorf("look up hosts: %w", err)
	}
	takenName, takenSerial := map[string]bool{}, map[string]bool{}
	for _, h := range taken {
		takenName[h.Name] = true
		if h.SerialNumber != "" {
			takenSerial[h.SerialNumber] = true
		}
	}
	racks := newRackResolver(ctx, c)
	seenName, seenSerial := map[string]int{}, map[string]int{}
	var out []*planned
	for _, rec := range recs {
		rc := newRow(rec, rec.get("name"))
		h := &hostRow{name: rc.required("name")}
		if h.name != "" {
			if err := call(host.NameValidator, h.name); err != nil {
				rc.fail("name", "%v", err)
			} else if takenName[h.name] {
				rc.fail("name", "a device named %s exists", h.name)
			} else if line, dup := seenName[h.name]; dup {
				rc.fail("name", "%s is also on row %d", h.name, line)
			}
			seenName[h.name] = rec.line
		}
		h.kind = enum(rc, "kind", host.KindValidator, []host.Kind{host.KindServer, host.KindSwitch, host.KindRouter, host.KindPdu, host.KindOther})
		h.role = enum(rc, "role", host.RoleValidator, []host.Role{host.RoleGatewayRouter, host.RoleFloorSpine, host.RoleFloorLeaf, host.RoleRackSpine, host.RoleRackLeaf})
		h.face = enum(rc, "face", host.FaceValidator, []host.Face{host.FaceFront, host.FaceRear})
		h.lifecycle = enum(rc, "lifecycle", host.LifecycleValidator, []host.Lifecycle{host.LifecyclePlanned, host.LifecycleStaged, host.LifecycleActive, host.LifecycleMaintenance, host.LifecycleRetired})
		h.position = rc.integer("position", host.PositionValidator)
		h.height = rc.integer("height", host.HeightValidator)
		h.fullDepth = rc.boolean("full_depth")
		h.vendor = rc.str("vendor", host.VendorValidator)
		h.model = rc.str("model", host.ModelValidator)
		h.describe = rc.str("description", host.DescriptionValidator)
		if h.serial = rc.str("serial_number", host.SerialNumberValidator); h.serial != nil {
			if takenSerial[*h.serial] {
				rc.fail("serial_number", "a device with serial number %s exists", *h.serial)
			} else if line, dup := seenSerial[*h.serial]; dup {
				rc.fail("serial_number", "%s is also on row %d", *h.serial, line)
			}
			seenSerial[*h.serial] = rec.line
		}
		if ref := rec.get("rack"); ref != "" {
			r, err := racks.resolve(ref)
			if err != nil {
				rc.fail("rack", "%v", err)
			}
			h.rack = r
		}
		switch {
		case h.position != nil && rec.get("rack") == "":
			rc.fail("position", "a position needs a rack")
		case h.rack != nil && h.position == nil:
			rc.fail("position", "required to mount the device in rack %s", h.rack.Name)
		case h.rack != nil && rc.ok():
			h.placement = topology.Placement{Position: *h.position, Height: deref(h.height, 1),
				Rear: deref(h.face, host.FaceFront) == host.FaceRear, FullDepth: deref(h.fullDepth, true)}
			if err := racks.place(h.rack, h.name, h.placement, rec.line); err != nil {
				rc.fail("position", "%v", err)
			}
		}
		out = append(out, &planned{row: rc.row, create: h.create})
	}
	return out, nil
}

func (h *hostRow) create(ctx context.Context, c *ent.Client) (ent.Noder, int, error) {
	q := c.Host.Create().SetName(h.name).
		SetNillableKind(h.kind).SetNillableRole(h.role).
		SetNillablePosition(h.position).SetNillableHeight(h.height).
		SetNillableFace(h.face).SetNillableFullDepth(h.fullDepth).SetNillableLifecycle(h.lifecycle).
		SetNillableVendor(h.vendor).SetNillableModel(h.model).
		SetNillableSerialNumber(h.serial).SetNillableDescription(h.describe)
	if h.rack != nil {
		q.SetRackID(h.rack.ID)
	}
	rec, err := q.Save(ctx)
	if err != nil {
		return nil, 0, err
	}
	return rec, rec.ID, nil
}

// rackResolver finds racks by name or by datacenter/floor/rack and tracks the units taken in
// each, by its devices and by the rows checked so far.
type rackResolver struct {
	ctx   context.Context
	c     *ent.Client
	racks []*ent.Rack // every rack the viewer may see, with floor and datacenter
	err   error
	used  map[int][]usedUnits
}

type usedUnits struct {
	name string
	p    topology.Placement
}

func newRackResolver(ctx context.Context, c *ent.Client) *rackResolver {
	racks, err := c.Rack.Query().WithFloor(func(q *ent.FloorQuery) { q.WithDatacenter() }).All(ctx)
	return &rackResolver{ctx: ctx, c: c, racks: racks, err: err, used: map[int][]usedUnits{}}
}

// resolve finds the rack ref names: a rack name unique among the racks, or
// datacenter/floor/rack.
func (rr *rackResolver) resolve(ref string) (*ent.Rack, error) {
	if rr.err != nil {
		return nil, fmt.Errorf("look up racks: %w", rr.err)
	}
	parts := strings.Split(ref, "/")
	var found []*ent.Rack
	for _, r := range rr.racks {
		switch len(parts) {
		case 1:
			if r.Name == ref {
				found = append(found, r)
			}
		case 3:
			if rackPath(r) == ref {
				found = append(found, r)
			}
		}
	}
	switch {
	case len(parts) != 1 && len(parts) != 3:
		return nil, fmt.Errorf("%q: name a rack, or datacenter/floor/rack", ref)
	case len(found) == 0:
		return nil, fmt.Errorf("no rack %s", ref)
	case len(found) > 1:
		return nil, fmt.Errorf("%d racks are named %s: write datacenter/floor/rack (e.g. %s)", len(found), ref, rackPath(found[0]))
	}
	return found[0], nil
}

// place claims units of r for device name, failing when they fall outside the rack or overlap
// a device or an earlier row.
func (rr *rackResolver) place(r *ent.Rack, name string, p topology.Placement, line int) error {
	if p.Top() > r.Height {
		return fmt.Errorf("%s does not fit in rack %s of %dU", p, r.Name, r.Height)
	}
	used, ok := rr.used[r.ID]
	if !ok {
		hosts, err := rr.c.Host.Query().Where(host.HasRackWith(rack.ID(r.ID)), host.PositionNotNil()).
			Select(host.FieldName, host.FieldPosition, host.FieldHeight, host.FieldFace, host.FieldFullDepth).
			All(authz.Unrestricted(rr.ctx))
		if err != nil {
			return fmt.Errorf("list devices of rack %s: %w", r.Name, err)
		}
		for _, h := range hosts {
			used = append(used, usedUnits{name: h.Name, p: topology.Placement{Position: h.Position, Height: h.Height, Rear: h.Face == host.FaceRear, FullDepth: h.FullDepth}})
		}
	}
	for _, u := range used {
		if p.Conflicts(u.p) {
			return fmt.Errorf("%s overlaps %s (%s) in rack %s", p, u.name, u.p, r.Name)
		}
	}
	rr.used[r.ID] = append(used, usedUnits{name: fmt.Sprintf("%s (row %d)", name, line), p: p})
	return nil
}

// rackPath is datacenter/floor/rack.
func rackPath(r *ent.Rack) string {
	f := r.Edges.Floor
	if f == nil || f.Edges.Datacenter == nil {
		return r.Name
	}
	return f.Edges.Datacenter.Name + "/" + f.Name + "/" + r.Name
}

// exportHosts writes every host the viewer may see, by name.
func exportHosts(ctx context.Context, c *ent.Client) ([][]string, error) {
	racks := newRackResolver(ctx, c)
	if racks.err != nil {
		return nil, fmt.Errorf("list racks: %w", racks.err)
	}
	count := map[string]int{}
	for _, r := range racks.racks {
		count[r.Name]++
	}
	hosts, err := c.Host.Query().
		WithRack(func(q *ent.RackQuery) {
			q.WithFloor(func(q *ent.FloorQuery) {
				q.WithDatacenter(func(q *ent.DatacenterQuery) { q.Select(datacenter.FieldName) })
			})
		}).
		Order(host.ByName()).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("list hosts: %w", err)
	}
	rows := make([][]string, 0, len(hosts))
	for _, h := range hosts {
		rackRef, pos := "", ""
		if r := h.Edges.Rack; r != nil {
			rackRef = r.Name
			if count[r.Name] > 1 {
				rackRef = rackPath(r)
			}
			if h.Position != 0 {
				pos = fmt.Sprint(h.Position)
			}
		}
		role := ""
		if h.Role != nil {
			role = string(*h.Role)
		}
		rows = append(rows, []string{h.Name, string(h.Kind), role, rackRef, pos, fmt.Sprint(h.Height),
			string(h.Face), fmt.Sprint(h.FullDepth), string(h.Lifecycle), h.Vendor, h.Model, h.SerialNumber, h.Description})
	}
	return rows, nil
}

// call runs a schema validator, which package ent/runtime installs; without it there is
// nothing to check here and the builder checks on save.
func call[T any](validate func(T) error, v T) error {
	if validate == nil {
		return nil
	}
	return validate(v)
}

func deref[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}
