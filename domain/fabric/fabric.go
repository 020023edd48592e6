package fabric

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/datacenter"
	"github.com/virtflow/virtflow/ent/floor"
	"github.com/virtflow/virtflow/ent/host"
	"github.com/virtflow/virtflow/ent/link"
	"github.com/virtflow/virtflow/ent/port"
	"github.com/virtflow/virtflow/ent/rack"
	"github.com/virtflow/virtflow/store/dbtx"
)

// The shape of the seed-001 fabric.
const (
	DefaultFloorLeaves = 4 // floor-leaf routers per floor
	DefaultRackSpines  = 8 // rack-spine routers per floor
	DefaultFloorSpines = 4 // floor-spine routers per datacenter
	DefaultGateways    = 2 // gateway routers per datacenter, one per provider
	LeavesPerRack      = 2 // rack-leaf routers per server rack
	SpinesPerLeaf      = 2 // rack-spines each rack-leaf uplinks to
	RouterHeight       = 1 // rack units of every router
	maxRouters         = 256
)

// Port speeds and MTU of the cabling.
const (
	ServerPortSpeedMbps = 25_000
	FabricPortSpeedMbps = 100_000
	FabricMTU           = 9216
	ServerMTU           = 9000
)

// Server port names: eth0 goes to the own rack's leaf01, eth1 to the paired rack's leaf02.
const (
	ServerPort0 = "eth0"
	ServerPort1 = "eth1"
)

const (
	routerVendor = "NVIDIA"
	maxLabelLen  = 128 // Link.label
	maxNameLen   = 128 // Host.name
	bulkSize     = 500 // rows per INSERT, well below the bind-parameter limits of SQLite and PostgreSQL
)

// routerModel is the hardware used for each role: Spectrum switches run Cumulus Linux, whose
// ports are named swpN.
var routerModel = map[host.Role]string{
	host.RoleGatewayRouter: "SN4700",
	host.RoleFloorSpine:    "SN4700",
	host.RoleFloorLeaf:     "SN3700",
	host.RoleRackSpine:     "SN3700",
	host.RoleRackLeaf:      "SN2410",
}

// Names of the fabric's routers and servers (seed 001). prefix is the installation-wide
// disambiguator ("" or e.g. "tky1-dc1-"); floorName is like floor-1-1-1 and rackName like rack-1-1.

// GatewayName is the gateway router of provider root n: root-n-gateway-router01.
func GatewayName(prefix string, n int) string {
	return fmt.Sprintf("%sroot-%d-gateway-router01", prefix, n)
}

// FloorSpineName is the n-th floor-spine router: root-1-floor-spine-router0n.
func FloorSpineName(prefix string, n int) string {
	return fmt.Sprintf("%sroot-1-floor-spine-router%02d", prefix, n)
}

// FloorLeafName is the n-th floor-leaf router of a floor: floor-B-L-N-floor-leaf-router0n.
func FloorLeafName(prefix, floorName string, n int) string {
	return fmt.Sprintf("%s%s-floor-leaf-router%02d", prefix, floorName, n)
}

// RackSpineName is the n-th rack-spine router of a floor: floor-B-L-N-rack-spine-router0n.
func RackSpineName(prefix, floorName string, n int) string {
	return fmt.Sprintf("%s%s-rack-spine-router%02d", prefix, floorName, n)
}

// RackLeafName is the n-th rack-leaf router of a rack: floor-B-L-N-rack-R-P-rack-leaf-router0n.
func RackLeafName(prefix, floorName, rackName string, n int) string {
	return fmt.Sprintf("%s%s-%s-rack-leaf-router%02d", prefix, floorName, rackName, n)
}

// ServerName is the n-th server of a rack: floor-B-L-N-rack-R-P-server0n.
func ServerName(prefix, floorName, rackName string, n int) string {
	return fmt.Sprintf("%s%s-%s-server%02d", prefix, floorName, rackName, n)
}

// RackZoneName is the rack zone of a rack pair: floor-B-L-N-rack-R-P1-and-R-P2. Rows are
// lower-cased, as names are slugs.
func RackZoneName(floorName string, a, b *ent.Rack) string {
	return fmt.Sprintf("%s-rack-%s-%d-and-%s-%d", floorName, strings.ToLower(a.Row), a.Position,
		strings.ToLower(b.Row), b.Position)
}

// LinkLabel is the label of a link: "<hostA>:<portA> -- <hostB>:<portB>".
func LinkLabel(hostA, portA, hostB, portB string) string {
	return hostA + ":" + portA + " -- " + hostB + ":" + portB
}

// FloorSpec says which floor to build the fabric of and where its network gear goes.
type FloorSpec struct {
	// FloorID is the floor. Required.
	FloorID int
	// NetworkRackID is the floor's network rack, which holds the floor-leaf and rack-spine
	// routers. Required.
	NetworkRackID int
	// RackIDs are the server racks to cable. They are paired by row and position (1-2, 3-4, …
	// in each row), so every row needs an even number of them. Empty means every rack of the
	// floor except the network rack. The servers are the SERVER hosts already mounted in them.
	RackIDs []int
	// Root holds the datacenter's gateway and floor-spine routers the floor uplinks to. Nil
	// means LoadRoot(datacenter of the floor, HostPrefix).
	Root *Root
	// HostPrefix starts the name of every router created (see the package comment).
	HostPrefix string
	// FloorLeaves and RackSpines are the numbers of those routers; 0 means the defaults (4, 8).
	FloorLeaves int
	RackSpines  int
}

// Result is what Build created.
type Result struct {
	Floor       *ent.Floor
	FloorLeaves []*ent.Host
	RackSpines  []*ent.Host
	// RackLeaves are the rack-leaf routers, two per rack in the order of Racks.
	RackLeaves []*ent.Host
	// Racks are the server racks in pairing order: Racks[0] pairs with Racks[1], and so on.
	Racks []*ent.Rack
	// Servers is the number of servers cabled.
	Servers   int
	Ports     []*ent.Port // ports created (server ports that already existed are not listed)
	Links     []*ent.Link
	RackZones []*ent.RackZone // rack zones created for rack pairs that had none
}

// Root is a datacenter's gateway and floor-spine routers.
type Root struct {
	DatacenterID int
	Gateways     []*ent.Host
	FloorSpines  []*ent.Host
	Links        []*ent.Link // links created by BuildRoot; empty when loaded by LoadRoot
}

// RootOption configures BuildRoot.
type RootOption func(*rootConfig)

type rootConfig struct {
	prefix      string
	rackID      int
	floorSpines int
	gateways    int
}

// WithHostPrefix starts every router name with prefix (see the package comment).
func WithHostPrefix(prefix string) RootOption { return func(c *rootConfig) { c.prefix = prefix } }

// WithRack mounts the routers in the highest free units of the given rack, which must stand on
// a floor of the datacenter. Without it the routers are not mounted in any rack, and Build can
// find them only through FloorSpec.Root or by their names.
func WithRack(rackID int) RootOption { return func(c *rootConfig) { c.rackID = rackID } }

// WithFloorSpines sets the number of floor-spine routers (default 4).
func WithFloorSpines(n int) RootOption { return func(c *rootConfig) { c.floorSpines = n } }

// WithGateways sets the number of gateway routers, one per provider (default 2).
func WithGateways(n int) RootOption { return func(c *rootConfig) { c.gateways = n } }

// BuildRoot creates the gateway and floor-spine routers of a datacenter and cables every
// floor-spine to every gateway. It is done once per datacenter; a second call fails with
// CONFLICT (use LoadRoot to get the routers back).
func BuildRoot(ctx context.Context, client *ent.Client, datacenterID int, opts ...RootOption) (*Root, error) {
	cfg := rootConfig{floorSpines: DefaultFloorSpines, gateways: DefaultGateways}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.floorSpines < 1 || cfg.floorSpines > maxRouters {
		return nil, apierr.Validation("floorSpines", "must be between 1 and %d, got %d", maxRouters, cfg.floorSpines)
	}
	if cfg.gateways < 1 || cfg.gateways > maxRouters {
		return nil, apierr.Validation("gateways", "must be between 1 and %d, got %d", maxRouters, cfg.gateways)
	}
	var root *Root
	own, err := dbtx.Run(ctx, client, func(c *ent.Client) error {
		var err error
		root, err = buildRoot(ctx, c, datacenterID, cfg)
		return err
	})
	if err != nil {
		return nil, err
	}
	if own {
		unwrapHosts(root.Gateways)
		unwrapHosts(root.FloorSpines)
		for _, l := range root.Links {
			l.Unwrap()
		}
	}
	return root, nil
}

func buildRoot(ctx context.Context, c *ent.Client, dcID int, cfg rootConfig) (*Root, error) {
	dc, err := c.Datacenter.Get(ctx, dcID)
	if ent.IsNotFound(err) {
		return nil, apierr.NotFound("datacenter %d does not exist", dcID)
	}
	if err != nil {
		return nil, fmt.Errorf("load datacenter %d: %w", dcID, err)
	}
	var planned []plannedRouter
	for i := 1; i <= cfg.gateways; i++ {
		planned = append(planned, plannedRouter{name: GatewayName(cfg.prefix, i), role: host.RoleGatewayRouter})
	}
	for i := 1; i <= cfg.floorSpines; i++ {
		planned = append(planned, plannedRouter{name: FloorSpineName(cfg.prefix, i), role: host.RoleFloorSpine})
	}
	if err := checkNames(planned, "hostPrefix"); err != nil {
		return nil, err
	}
	if cfg.rackID != 0 {
		rk, err := c.Rack.Query().Where(rack.ID(cfg.rackID)).
			WithFloor(func(q *ent.FloorQuery) { q.WithDatacenter() }).WithHosts().Only(ctx)
		if ent.IsNotFound(err) {
			return nil, apierr.Validation("rackID", "rack %d does not exist", cfg.rackID)
		}
		if err != nil {
			return nil, fmt.Errorf("load rack %d: %w", cfg.rackID, err)
		}
		fl := rk.Edges.Floor
		if fl == nil || fl.Edges.Datacenter == nil {
			return nil, apierr.Validation("rackID", "rack %s has no floor", rk.Name)
		}
		if fl.Edges.Datacenter.ID != dc.ID {
			return nil, apierr.Validation("rackID", "rack %s stands in datacenter %s, not in %s",
				rackPath(rk), fl.Edges.Datacenter.Name, dc.Name)
		}
		units, err := freeUnits(rk, len(planned))
		if err != nil {
			return nil, apierr.Validation("rackID", "%v for the %d gateway and floor-spine routers", err, len(planned))
		}
		for i := range planned {
			planned[i].rack, planned[i].position = rk, units[i]
		}
	}
	if err := checkFree(ctx, c, planned, fmt.Sprintf("datacenter %s already has its root routers", dc.Name)); err != nil {
		return nil, err
	}
	hosts, err := createRouters(ctx, c, planned)
	if err != nil {
		return nil, err
	}
	root := &Root{DatacenterID: dc.ID, Gateways: hosts[:cfg.gateways], FloorSpines: hosts[cfg.gateways:]}
	w := newWiring(nil)
	for _, sp := range root.FloorSpines {
		for _, gw := range root.Gateways {
			w.link(sp, gw, link.KindFiber)
		}
	}
	if _, root.Links, err = w.save(ctx, c); err != nil {
		return nil, err
	}
	return root, nil
}

// LoadRoot finds the gateway and floor-spine routers of a datacenter: those mounted in its
// racks, or else the unmounted ones whose names BuildRoot would have given them with prefix.
func LoadRoot(ctx context.Context, client *ent.Client, datacenterID int, prefix string) (*Root, error) {
	inDC := host.HasRackWith(rack.HasFloorWith(floor.HasDatacenterWith(datacenter.ID(datacenterID))))
	hosts, err := client.Host.Query().
		Where(host.RoleIn(host.RoleGatewayRouter, host.RoleFloorSpine),
			host.Or(inDC, host.And(host.Not(host.HasRack()), host.NameHasPrefix(prefix+"root-")))).
		Order(ent.Asc(host.FieldName)).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("load root routers of datacenter %d: %w", datacenterID, err)
	}
	root := &Root{DatacenterID: datacenterID}
	for _, h := range hosts {
		if h.Role != nil && *h.Role == host.RoleGatewayRouter {
			root.Gateways = append(root.Gateways, h)
		} else {
			root.FloorSpines = append(root.FloorSpines, h)
		}
	}
	return root, nil
}

// Build creates the fabric of one floor (see the package comment) and returns what it created.
// Nothing is written when the input is invalid: unknown floor or racks, racks of another floor,
// racks without row or pair, racks without free units for their rack-leaf routers, a network
// rack too full for the floor's routers, a datacenter without floor-spine routers, routers that
// already exist or server ports that are already cabled.
func Build(ctx context.Context, client *ent.Client, spec FloorSpec) (*Result, error) {
	if spec.FloorLeaves == 0 {
		spec.FloorLeaves = DefaultFloorLeaves
	}
	if spec.RackSpines == 0 {
		spec.RackSpines = DefaultRackSpines
	}
	switch {
	case spec.FloorID <= 0:
		return nil, apierr.Validation("floorID", "is required")
	case spec.NetworkRackID <= 0:
		return nil, apierr.Validation("networkRackID", "is required: the floor-leaf and rack-spine routers go in the floor's network rack")
	case spec.FloorLeaves < 1 || spec.FloorLeaves > maxRouters:
		return nil, apierr.Validation("floorLeaves", "must be between 1 and %d, got %d", maxRouters, spec.FloorLeaves)
	case spec.RackSpines < SpinesPerLeaf || spec.RackSpines > maxRouters:
		return nil, apierr.Validation("rackSpines", "must be between %d and %d (each rack-leaf uplinks to %d rack-spines), got %d",
			SpinesPerLeaf, maxRouters, SpinesPerLeaf, spec.RackSpines)
	}
	var res *Result
	own, err := dbtx.Run(ctx, client, func(c *ent.Client) error {
		var err error
		res, err = build(ctx, c, spec)
		return err
	})
	if err != nil {
		return nil, err
	}
	if own {
		res.Floor.Unwrap()
		unwrapHosts(res.FloorLeaves)
		unwrapHosts(res.RackSpines)
		unwrapHosts(res.RackLeaves)
		for _, r := range res.Racks {
			r.Unwrap()
		}
		for _, p := range res.Ports {
			p.Unwrap()
		}
		for _, l := range res.Links {
			l.Unwrap()
		}
		for _, z := range res.RackZones {
			z.Unwrap()
		}
	}
	return res, nil
}

func build(ctx context.Context, c *ent.Client, spec FloorSpec) (*Result, error) {
	fl, err := c.Floor.Query().Where(floor.ID(spec.FloorID)).WithDatacenter().Only(ctx)
	if ent.IsNotFound(err) {
		return nil, apierr.NotFound("floor %d does not exist", spec.FloorID)
	}
	if err != nil {
		return nil, fmt.Errorf("load floor %d: %w", spec.FloorID, err)
	}
	if fl.Edges.Datacenter == nil {
		return nil, apierr.Validation("floorID", "floor %s is in no datacenter", fl.Name)
	}
	netRack, racks, err := loadRacks(ctx, c, fl, spec)
	if err != nil {
		return nil, err
	}
	pairs, err := pairRacks(racks)
	if err != nil {
		return nil, err
	}
	root := spec.Root
	if root == nil {
		if root, err = LoadRoot(ctx, c, fl.Edges.Datacenter.ID, spec.HostPrefix); err != nil {
			return nil, err
		}
	}
	if root.DatacenterID != 0 && root.DatacenterID != fl.Edges.Datacenter.ID {
		return nil, apierr.Validation("root", "the root routers given are those of datacenter %d, but floor %s is in datacenter %s",
			root.DatacenterID, fl.Name, fl.Edges.Datacenter.Name)
	}
	if len(root.FloorSpines) == 0 {
		return nil, apierr.Validation("root", "datacenter %s has no floor-spine routers to uplink floor %s to; build them first (fabric.BuildRoot)",
			fl.Edges.Datacenter.Name, fl.Name)
	}

	// Plan the routers and where they go.
	var planned []plannedRouter
	for i := 1; i <= spec.FloorLeaves; i++ {
		planned = append(planned, plannedRouter{name: FloorLeafName(spec.HostPrefix, fl.Name, i), role: host.RoleFloorLeaf, rack: netRack})
	}
	for i := 1; i <= spec.RackSpines; i++ {
		planned = append(planned, plannedRouter{name: RackSpineName(spec.HostPrefix, fl.Name, i), role: host.RoleRackSpine, rack: netRack})
	}
	units, err := freeUnits(netRack, len(planned))
	if err != nil {
		return nil, apierr.Validation("networkRackID", "network rack %s: %v for the %d floor-leaf and rack-spine routers",
			rackPath(netRack), err, len(planned))
	}
	for i := range planned {
		planned[i].position = units[i]
	}
	for _, rk := range pairs {
		units, err := freeUnits(rk, LeavesPerRack)
		if err != nil {
			return nil, apierr.Validation("rackIDs", "rack %s: %v for its %d rack-leaf routers", rackPath(rk), err, LeavesPerRack)
		}
		for i := 1; i <= LeavesPerRack; i++ {
			planned = append(planned, plannedRouter{name: RackLeafName(spec.HostPrefix, fl.Name, rk.Name, i),
				role: host.RoleRackLeaf, rack: rk, position: units[i-1]})
		}
	}
	if err := checkNames(planned, "hostPrefix"); err != nil {
		return nil, err
	}
	if err := checkFree(ctx, c, planned, fmt.Sprintf("floor %s already has a fabric", fl.Name)); err != nil {
		return nil, err
	}

	// The servers and the ports they already have.
	existing := map[portKey]*ent.Port{}
	servers := make([][]*ent.Host, len(pairs))
	nServers := 0
	for i, rk := range pairs {
		for _, h := range rk.Edges.Hosts {
			if h.Kind != host.KindServer {
				continue
			}
			servers[i] = append(servers[i], h)
			for _, p := range h.Edges.Ports {
				if l := cmp.Or(p.Edges.LinkA, p.Edges.LinkB); l != nil {
					return nil, apierr.Conflict("port %s:%s is already cabled (%s); uncable it before building the fabric",
						h.Name, p.Name, l.Label)
				}
				existing[portKey{h.ID, p.Name}] = p
			}
		}
		slices.SortFunc(servers[i], func(a, b *ent.Host) int {
			return cmp.Or(cmp.Compare(a.Position, b.Position), strings.Compare(a.Name, b.Name))
		})
		nServers += len(servers[i])
	}

	hosts, err := createRouters(ctx, c, planned)
	if err != nil {
		return nil, err
	}
	res := &Result{Floor: fl, Racks: pairs, Servers: nServers}
	res.FloorLeaves = hosts[:spec.FloorLeaves]
	res.RackSpines = hosts[spec.FloorLeaves : spec.FloorLeaves+spec.RackSpines]
	res.RackLeaves = hosts[spec.FloorLeaves+spec.RackSpines:]

	// Continue the port numbering of the floor-spines, which other floors already use.
	spineIDs := make([]int, len(root.FloorSpines))
	for i, h := range root.FloorSpines {
		spineIDs[i] = h.ID
	}
	used, err := c.Port.Query().Where(port.HasHostWith(host.IDIn(spineIDs...))).WithHost(func(q *ent.HostQuery) {
		q.Select(host.FieldID)
	}).Select(port.FieldName).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("load ports of the floor-spine routers: %w", err)
	}
	w := newWiring(existing)
	for _, p := range used {
		if p.Edges.Host != nil {
			w.reserve(p.Edges.Host.ID, p.Name)
		}
	}

	// Top down, so that every router's uplinks get its lowest port numbers.
	for _, lf := range res.FloorLeaves {
		for _, sp := range root.FloorSpines {
			w.link(lf, sp, link.KindFiber)
		}
	}
	for _, rs := range res.RackSpines {
		for _, lf := range res.FloorLeaves {
			w.link(rs, lf, link.KindFiber)
		}
	}
	for j, rl := range res.RackLeaves {
		for k := range SpinesPerLeaf {
			w.link(rl, res.RackSpines[(SpinesPerLeaf*j+k)%spec.RackSpines], link.KindFiber)
		}
	}
	for i := range pairs {
		ownLeaf := res.RackLeaves[LeavesPerRack*i]        // leaf01 of the rack
		peerLeaf := res.RackLeaves[LeavesPerRack*(i^1)+1] // leaf02 of the paired rack
		for _, s := range servers[i] {
			w.serverLink(s, ServerPort0, ownLeaf)
		}
		for _, s := range servers[i] {
			w.serverLink(s, ServerPort1, peerLeaf)
		}
	}
	if err := w.checkLabels(); err != nil {
		return nil, err
	}
	if res.Ports, res.Links, err = w.save(ctx, c); err != nil {
		return nil, err
	}
	if res.RackZones, err = zoneRacks(ctx, c, fl, pairs); err != nil {
		return nil, err
	}
	return res, nil
}

// loadRacks loads the network rack and the server racks with their hosts and the servers'
// eth0/eth1 ports (with their links), and checks they all stand on the floor.
func loadRacks(ctx context.Context, c *ent.Client, fl *ent.Floor, spec FloorSpec) (*ent.Rack, []*ent.Rack, error) {
	ids := spec.RackIDs
	if len(ids) == 0 {
		var err error
		ids, err = c.Rack.Query().Where(rack.HasFloorWith(floor.ID(fl.ID)), rack.IDNEQ(spec.NetworkRackID)).IDs(ctx)
		if err != nil {
			return nil, nil, fmt.Errorf("list racks of floor %s: %w", fl.Name, err)
		}
		if len(ids) == 0 {
			return nil, nil, apierr.Validation("rackIDs", "floor %s has no racks besides its network rack", fl.Name)
		}
	}
	seen := map[int]bool{}
	for _, id := range ids {
		switch {
		case id == spec.NetworkRackID:
			return nil, nil, apierr.Validation("rackIDs", "rack %d is the network rack; list only server racks", id)
		case seen[id]:
			return nil, nil, apierr.Validation("rackIDs", "rack %d is listed twice", id)
		}
		seen[id] = true
	}
	all, err := c.Rack.Query().Where(rack.IDIn(append(slices.Clone(ids), spec.NetworkRackID)...)).
		WithFloor().WithRackZone().
		WithHosts(func(q *ent.HostQuery) {
			q.WithPorts(func(q *ent.PortQuery) {
				q.Where(port.NameIn(ServerPort0, ServerPort1)).WithLinkA().WithLinkB()
			})
		}).All(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("load racks: %w", err)
	}
	byID := make(map[int]*ent.Rack, len(all))
	for _, rk := range all {
		byID[rk.ID] = rk
	}
	check := func(field string, id int) (*ent.Rack, error) {
		rk := byID[id]
		switch {
		case rk == nil:
			return nil, apierr.Validation(field, "rack %d does not exist", id)
		case rk.Edges.Floor == nil:
			return nil, apierr.Validation(field, "rack %s has no floor", rk.Name)
		case rk.Edges.Floor.ID != fl.ID:
			return nil, apierr.Validation(field, "rack %s stands on floor %s, not on floor %s", rk.Name, rk.Edges.Floor.Name, fl.Name)
		}
		rk.Edges.Floor = fl // with its datacenter, for messages
		return rk, nil
	}
	netRack, err := check("networkRackID", spec.NetworkRackID)
	if err != nil {
		return nil, nil, err
	}
	racks := make([]*ent.Rack, 0, len(ids))
	for _, id := range ids {
		rk, err := check("rackIDs", id)
		if err != nil {
			return nil, nil, err
		}
		racks = append(racks, rk)
	}
	return netRack, racks, nil
}

// pairRacks orders the racks by row and position and checks that they pair up: the racks of a
// row at positions p1 < p2 < p3 < p4 … make the pairs (p1, p2), (p3, p4), ….
func pairRacks(racks []*ent.Rack) ([]*ent.Rack, error) {
	for _, rk := range racks {
		if rk.Row == "" {
			return nil, apierr.Validation("rackIDs", "rack %s has no row; racks are paired by row and position", rackPath(rk))
		}
	}
	sorted := slices.Clone(racks)
	slices.SortFunc(sorted, func(a, b *ent.Rack) int {
		return cmp.Or(compareRow(a.Row, b.Row), cmp.Compare(a.Position, b.Position))
	})
	for i := 0; i < len(sorted); {
		j := i
		for j < len(sorted) && sorted[j].Row == sorted[i].Row {
			if j > i && sorted[j].Position == sorted[j-1].Position {
				return nil, apierr.Validation("rackIDs", "racks %s and %s are both at row %s position %d",
					sorted[j-1].Name, sorted[j].Name, sorted[j].Row, sorted[j].Position)
			}
			j++
		}
		if (j-i)%2 != 0 {
			return nil, apierr.Validation("rackIDs", "row %s has an odd number of racks (%d): rack %s has no pair to cross-cable with",
				sorted[i].Row, j-i, rackPath(sorted[j-1]))
		}
		i = j
	}
	return sorted, nil
}

// compareRow orders numeric rows numerically and others as text.
func compareRow(a, b string) int {
	x, errA := strconv.Atoi(a)
	y, errB := strconv.Atoi(b)
	if errA == nil && errB == nil {
		return cmp.Compare(x, y)
	}
	return strings.Compare(a, b)
}

// zoneRacks puts each rack pair in one rack zone: a new one when neither rack has a zone, the
// zone of the other rack when only one has.
func zoneRacks(ctx context.Context, c *ent.Client, fl *ent.Floor, pairs []*ent.Rack) ([]*ent.RackZone, error) {
	var (
		builders []*ent.RackZoneCreate
		newPairs [][2]*ent.Rack
	)
	for i := 0; i < len(pairs); i += 2 {
		a, b := pairs[i], pairs[i+1]
		za, zb := a.Edges.RackZone, b.Edges.RackZone
		switch {
		case za == nil && zb == nil:
			builders = append(builders, c.RackZone.Create().
				SetName(RackZoneName(fl.Name, a, b)).
				SetDescription(fmt.Sprintf("rack pair %s and %s of %s: their rack-leaf routers cross-cable", a.Name, b.Name, fl.Name)).
				SetDatacenterID(fl.Edges.Datacenter.ID))
			newPairs = append(newPairs, [2]*ent.Rack{a, b})
		case za == nil:
			if err := c.Rack.UpdateOne(a).SetRackZoneID(zb.ID).Exec(ctx); err != nil {
				return nil, fmt.Errorf("put rack %s in rack zone %s: %w", a.Name, zb.Name, err)
			}
		case zb == nil:
			if err := c.Rack.UpdateOne(b).SetRackZoneID(za.ID).Exec(ctx); err != nil {
				return nil, fmt.Errorf("put rack %s in rack zone %s: %w", b.Name, za.Name, err)
			}
		}
	}
	if len(builders) == 0 {
		return nil, nil
	}
	zones, err := c.RackZone.CreateBulk(builders...).Save(ctx)
	if err != nil {
		return nil, fmt.Errorf("create rack zones of floor %s: %w", fl.Name, err)
	}
	for i, z := range zones {
		if err := c.Rack.Update().Where(rack.IDIn(newPairs[i][0].ID, newPairs[i][1].ID)).SetRackZoneID(z.ID).Exec(ctx); err != nil {
			return nil, fmt.Errorf("put racks in rack zone %s: %w", z.Name, err)
		}
	}
	return zones, nil
}

// plannedRouter is a router to create.
type plannedRouter struct {
	name     string
	role     host.Role
	rack     *ent.Rack // nil: not mounted
	position int
}

// checkNames rejects names longer than a host name may be.
func checkNames(planned []plannedRouter, field string) error {
	for _, p := range planned {
		if len(p.name) > maxNameLen {
			return apierr.Validation(field, "router name %s is longer than %d characters", p.name, maxNameLen)
		}
	}
	return nil
}

// checkFree fails with CONFLICT when a planned router's name is taken.
func checkFree(ctx context.Context, c *ent.Client, planned []plannedRouter, what string) error {
	names := make([]string, len(planned))
	for i, p := range planned {
		names[i] = p.name
	}
	taken, err := c.Host.Query().Where(host.NameIn(names...)).Order(ent.Asc(host.FieldName)).Select(host.FieldName).Strings(ctx)
	if err != nil {
		return fmt.Errorf("look up router names: %w", err)
	}
	if len(taken) > 0 {
		return apierr.Conflict("%s: host %s exists (%d of the %d routers to create exist)", what, taken[0], len(taken), len(planned))
	}
	return nil
}

func createRouters(ctx context.Context, c *ent.Client, planned []plannedRouter) ([]*ent.Host, error) {
	builders := make([]*ent.HostCreate, len(planned))
	for i, p := range planned {
		b := c.Host.Create().
			SetName(p.name).
			SetKind(host.KindRouter).
			SetRole(p.role).
			SetVendor(routerVendor).
			SetModel(routerModel[p.role]).
			SetHeight(RouterHeight)
		if p.rack != nil {
			b.SetRackID(p.rack.ID).SetPosition(p.position)
		}
		builders[i] = b
	}
	hosts, err := SaveBulk(ctx, builders, func(ctx context.Context, bs []*ent.HostCreate) ([]*ent.Host, error) {
		return c.Host.CreateBulk(bs...).Save(ctx)
	})
	if err != nil {
		return nil, fmt.Errorf("create routers: %w", err)
	}
	return hosts, nil
}

// freeUnits returns the positions of n one-unit slots free in the rack, the highest first. A
// mounted device occupies units [position, position+height-1] on both faces.
func freeUnits(rk *ent.Rack, n int) ([]int, error) {
	used := make([]bool, rk.Height+1)
	busy := 0
	for _, h := range rk.Edges.Hosts {
		if h.Position <= 0 {
			continue // in the rack but not mounted
		}
		for u := h.Position; u < h.Position+h.Height && u <= rk.Height; u++ {
			if !used[u] {
				used[u] = true
				busy++
			}
		}
	}
	var units []int
	for u := rk.Height; u >= 1 && len(units) < n; u-- {
		if !used[u] {
			units = append(units, u)
		}
	}
	if len(units) < n {
		return nil, fmt.Errorf("only %d of its %dU are free, %d needed", rk.Height-busy, rk.Height, n*RouterHeight)
	}
	return units, nil
}

func rackPath(rk *ent.Rack) string {
	if fl := rk.Edges.Floor; fl != nil {
		return fl.Name + "/" + rk.Name
	}
	return rk.Name
}

// wiring plans links and the ports at their ends, then writes them in bulk.
type wiring struct {
	existing map[portKey]*ent.Port // server ports to reuse
	next     map[int]int           // host ID → highest swpN in use
	ports    []plannedPort
	links    []plannedLink
}

type portKey struct {
	host int
	name string
}

type plannedPort struct {
	host  *ent.Host
	name  string
	speed int
	mtu   int
}

type end struct {
	host     *ent.Host
	port     string
	existing *ent.Port // nil: ports[idx] is created
	idx      int
}

type plannedLink struct {
	a, b end
	kind link.Kind
}

func newWiring(existing map[portKey]*ent.Port) *wiring {
	return &wiring{existing: existing, next: map[int]int{}}
}

// reserve records a port name a router already has.
func (w *wiring) reserve(hostID int, name string) {
	if n, ok := strings.CutPrefix(name, "swp"); ok {
		if i, err := strconv.Atoi(n); err == nil && i > w.next[hostID] {
			w.next[hostID] = i
		}
	}
}

// routerPort plans the router's next swpN port.
func (w *wiring) routerPort(h *ent.Host) end {
	w.next[h.ID]++
	name := "swp" + strconv.Itoa(w.next[h.ID])
	w.ports = append(w.ports, plannedPort{host: h, name: name, speed: FabricPortSpeedMbps, mtu: FabricMTU})
	return end{host: h, port: name, idx: len(w.ports) - 1}
}

// link cables a new port of a (the lower router) to a new port of b.
func (w *wiring) link(a, b *ent.Host, kind link.Kind) {
	w.links = append(w.links, plannedLink{a: w.routerPort(a), b: w.routerPort(b), kind: kind})
}

// serverLink cables the server's named port (reused if it exists) to a new port of the leaf.
func (w *wiring) serverLink(s *ent.Host, name string, leaf *ent.Host) {
	a := end{host: s, port: name}
	if p := w.existing[portKey{s.ID, name}]; p != nil {
		a.existing = p
	} else {
		w.ports = append(w.ports, plannedPort{host: s, name: name, speed: ServerPortSpeedMbps, mtu: ServerMTU})
		a.idx = len(w.ports) - 1
	}
	b := w.routerPort(leaf)
	w.ports[b.idx].speed = ServerPortSpeedMbps
	w.links = append(w.links, plannedLink{a: a, b: b, kind: link.KindDac})
}

func (w *wiring) label(l plannedLink) string {
	return LinkLabel(l.a.host.Name, l.a.port, l.b.host.Name, l.b.port)
}

func (w *wiring) checkLabels() error {
	for _, l := range w.links {
		if s := w.label(l); len(s) > maxLabelLen {
			return apierr.Validation("hostPrefix", "link label %q is longer than %d characters; use shorter host names", s, maxLabelLen)
		}
	}
	return nil
}

// save creates the planned ports, then the links between them.
func (w *wiring) save(ctx context.Context, c *ent.Client) ([]*ent.Port, []*ent.Link, error) {
	pbs := make([]*ent.PortCreate, len(w.ports))
	for i, p := range w.ports {
		pbs[i] = c.Port.Create().SetHostID(p.host.ID).SetName(p.name).SetKind(port.KindPhysical).
			SetSpeedMbps(p.speed).SetMtu(p.mtu)
	}
	ports, err := SaveBulk(ctx, pbs, func(ctx context.Context, bs []*ent.PortCreate) ([]*ent.Port, error) {
		return c.Port.CreateBulk(bs...).Save(ctx)
	})
	if err != nil {
		return nil, nil, fmt.Errorf("create ports: %w", err)
	}
	id := func(e end) int {
		if e.existing != nil {
			return e.existing.ID
		}
		return ports[e.idx].ID
	}
	lbs := make([]*ent.LinkCreate, len(w.links))
	for i, l := range w.links {
		lbs[i] = c.Link.Create().SetAPortID(id(l.a)).SetBPortID(id(l.b)).SetKind(l.kind).
			SetStatus(link.StatusConnected).SetLabel(w.label(l))
	}
	links, err := SaveBulk(ctx, lbs, func(ctx context.Context, bs []*ent.LinkCreate) ([]*ent.Link, error) {
		return c.Link.CreateBulk(bs...).Save(ctx)
	})
	if err != nil {
		return nil, nil, fmt.Errorf("create links: %w", err)
	}
	return ports, links, nil
}

// SaveBulk saves ent create builders in INSERTs of at most 500 rows (well below the
// bind-parameter limits of SQLite and PostgreSQL), e.g.
// SaveBulk(ctx, builders, func(ctx context.Context, b []*ent.HostCreate) ([]*ent.Host, error) { return c.Host.CreateBulk(b...).Save(ctx) }).
func SaveBulk[B, T any](ctx context.Context, builders []B, save func(context.Context, []B) ([]T, error)) ([]T, error) {
	out := make([]T, 0, len(builders))
	for chunk := range slices.Chunk(builders, bulkSize) {
		got, err := save(ctx, chunk)
		if err != nil {
			return nil, err
		}
		out = append(out, got...)
	}
	return out, nil
}

func unwrapHosts(hs []*ent.Host) {
	for _, h := range hs {
		h.Unwrap()
	}
}
