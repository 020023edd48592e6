package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"net/netip"
	"slices"
	"time"

	"github.com/virtflow/virtflow/agent/configdrive"
	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/fabric"
	"github.com/virtflow/virtflow/domain/metering"
	"github.com/virtflow/virtflow/domain/placement"
	"github.com/virtflow/virtflow/domain/scheduler"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/alert"
	"github.com/virtflow/virtflow/ent/assignment"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/eventrule"
	"github.com/virtflow/virtflow/ent/flavor"
	"github.com/virtflow/virtflow/ent/host"
	"github.com/virtflow/virtflow/ent/image"
	"github.com/virtflow/virtflow/ent/ipaddress"
	"github.com/virtflow/virtflow/ent/maintenance"
	"github.com/virtflow/virtflow/ent/network"
	"github.com/virtflow/virtflow/ent/notice"
	"github.com/virtflow/virtflow/ent/port"
	"github.com/virtflow/virtflow/ent/provider"
	"github.com/virtflow/virtflow/ent/rack"
	"github.com/virtflow/virtflow/ent/region"
	"github.com/virtflow/virtflow/ent/rolebinding"
	"github.com/virtflow/virtflow/ent/schema/fieldtype"
	"github.com/virtflow/virtflow/ent/servicemesh"
	"github.com/virtflow/virtflow/ent/virtualmachine"
	"github.com/virtflow/virtflow/store/dbtx"

	entevent "github.com/virtflow/virtflow/ent/event"
)

// MarkerRegion is the region whose existence means the demo is already loaded.
const MarkerRegion = "tokyo1"

// The shape of the demo.
const (
	RowsPerFloor   = 2
	RacksPerRow    = 4
	ServersPerRack = 14
	ServerHeight   = 2  // rack units per server
	RackHeight     = 42 // rack units per rack
	VMsPerTenant   = 6
	hostReservedMB = 16 * 1024 // memory a node keeps for the host OS and hypervisor
)

// Stats is the outcome of Load.
type Stats struct {
	// AlreadyLoaded is true when the demo was there already and nothing was written.
	AlreadyLoaded bool
	// Counts are the rows of every entity type after the load, by type name ("Host", "Link", …).
	Counts map[string]int
	// Elapsed is how long Load took.
	Elapsed time.Duration
}

// Total is the number of rows over all entity types.
func (s Stats) Total() int {
	n := 0
	for _, c := range s.Counts {
		n += c
	}
	return n
}

// Load loads the demo installation (see the package comment) in one transaction, or does
// nothing but count when the region tokyo1 already exists. log may be nil. Given a
// transactional client, Load writes in the caller's transaction and leaves committing to it.
func Load(ctx context.Context, client *ent.Client, log *slog.Logger) (Stats, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	start := time.Now()
	loaded, err := client.Region.Query().Where(region.Name(MarkerRegion)).Exist(ctx)
	if err != nil {
		return Stats{}, fmt.Errorf("demo: look for region %s: %w", MarkerRegion, err)
	}
	if !loaded {
		_, err = dbtx.Run(ctx, client, func(c *ent.Client) error { return newLoader(c).load(ctx) })
		if err != nil && ent.IsConstraintError(err) {
			// Another loader may have won the race; then the demo is there and that is fine.
			if again, qerr := client.Region.Query().Where(region.Name(MarkerRegion)).Exist(ctx); qerr == nil && again {
				loaded, err = true, nil
			}
		}
		if err != nil {
			return Stats{}, fmt.Errorf("demo: %w", err)
		}
	}
	counts, err := Counts(ctx, client)
	if err != nil {
		return Stats{}, err
	}
	st := Stats{AlreadyLoaded: loaded, Counts: counts, Elapsed: time.Since(start)}
	if loaded {
		log.Info("demo data already loaded", "region", MarkerRegion, "rows", st.Total())
	} else {
		log.Info("demo data loaded", "elapsed", st.Elapsed.Round(time.Millisecond), "rows", st.Total(),
			"hosts", counts["Host"], "ports", counts["Port"], "links", counts["Link"], "nodes", counts["ComputeNode"],
			"vms", counts["VirtualMachine"])
	}
	return st, nil
}

// Counts returns the number of rows of every entity type, by type name.
func Counts(ctx context.Context, client *ent.Client) (map[string]int, error) {
	counters := map[string]func(context.Context) (int, error){
		"APIToken":            client.APIToken.Query().Count,
		"Alert":               client.Alert.Query().Count,
		"Assignment":          client.Assignment.Query().Count,
		"AuditLog":            client.AuditLog.Query().Count,
		"AvailabilityZone":    client.AvailabilityZone.Query().Count,
		"Cluster":             client.Cluster.Query().Count,
		"ComputeNode":         client.ComputeNode.Query().Count,
		"Datacenter":          client.Datacenter.Query().Count,
		"Event":               client.Event.Query().Count,
		"EventRule":           client.EventRule.Query().Count,
		"Flavor":              client.Flavor.Query().Count,
		"Floor":               client.Floor.Query().Count,
		"GlobalService":       client.GlobalService.Query().Count,
		"Host":                client.Host.Query().Count,
		"HostGroup":           client.HostGroup.Query().Count,
		"IPAddress":           client.IPAddress.Query().Count,
		"Image":               client.Image.Query().Count,
		"KubernetesCluster":   client.KubernetesCluster.Query().Count,
		"Link":                client.Link.Query().Count,
		"LoadBalancer":        client.LoadBalancer.Query().Count,
		"Maintainer":          client.Maintainer.Query().Count,
		"MaintainerGroup":     client.MaintainerGroup.Query().Count,
		"Maintenance":         client.Maintenance.Query().Count,
		"Network":             client.Network.Query().Count,
		"NetworkZone":         client.NetworkZone.Query().Count,
		"Notice":              client.Notice.Query().Count,
		"Port":                client.Port.Query().Count,
		"PowerZone":           client.PowerZone.Query().Count,
		"Provider":            client.Provider.Query().Count,
		"Quota":               client.Quota.Query().Count,
		"Rack":                client.Rack.Query().Count,
		"RackZone":            client.RackZone.Query().Count,
		"Region":              client.Region.Query().Count,
		"RegionService":       client.RegionService.Query().Count,
		"ServiceMesh":         client.ServiceMesh.Query().Count,
		"Tenant":              client.Tenant.Query().Count,
		"ReservationInterval": client.ReservationInterval.Query().Count,
		"User":                client.User.Query().Count,
		"VirtualMachine":      client.VirtualMachine.Query().Count,
		"Volume":              client.Volume.Query().Count,
	}
	counts := make(map[string]int, len(counters))
	for name, count := range counters {
		n, err := count(ctx)
		if err != nil {
			return nil, fmt.Errorf("demo: count %s: %w", name, err)
		}
		counts[name] = n
	}
	return counts, nil
}

// The static content of the demo.

type siteDef struct {
	region, regionDesc string
	zones              []string
	dc                 string
	building, phase    string
	address, postcode  string
	phone, mail        string
	mgmt               netip.Prefix
	floors             [][3]int // building, level, number
	clusterPrefix      string
}

var sites = []siteDef{
	{
		region: "tokyo1", regionDesc: "Tokyo, Japan", zones: []string{"tokyo1-a", "tokyo1-b", "tokyo1-c"},
		dc: "tky1-dc1", building: "Otemachi Building 1", phase: "phase-1",
		address: "1-1-1 Otemachi, Chiyoda-ku, Tokyo", postcode: "100-0004", phone: "+81-3-5555-0100", mail: "dc-ops-tokyo@example.com",
		mgmt: netip.MustParsePrefix("10.1.0.0/20"), floors: [][3]int{{1, 1, 1}, {1, 1, 2}}, clusterPrefix: "tky1-cluster-",
	},
	{
		region: "osaka1", regionDesc: "Osaka, Japan", zones: []string{"osaka1-a", "osaka1-b", "osaka1-c"},
		dc: "osk1-dc1", building: "Dojima Building 2", phase: "phase-2",
		address: "2-2-2 Dojima, Kita-ku, Osaka", postcode: "530-0003", phone: "+81-6-5555-0100", mail: "dc-ops-osaka@example.com",
		mgmt: netip.MustParsePrefix("10.2.0.0/20"), floors: [][3]int{{1, 1, 1}}, clusterPrefix: "osk1-cluster-",
	},
}

type hardware struct {
	vendor, model, cpu     string
	sockets, cores, thread int
	memoryMB               int64
	disks                  []fieldtype.Disk
	priceFactor            float64
}

var nics = []fieldtype.NIC{
	{Model: "NVIDIA ConnectX-6 Lx", Ports: 2, SpeedMbps: 25_000},
	{Model: "Broadcom BCM5720 (onboard)", Ports: 2, SpeedMbps: 1_000},
}

var profiles = []hardware{
	{vendor: "Dell", model: "PowerEdge R660", cpu: "Intel Xeon Gold 6448Y", sockets: 2, cores: 64, thread: 128, memoryMB: 524288,
		disks: []fieldtype.Disk{{Type: fieldtype.DiskSSD, CapacityGB: 960, Count: 2}, {Type: fieldtype.DiskNVMe, CapacityGB: 3840, Count: 4}}, priceFactor: 1.0},
	{vendor: "HPE", model: "ProLiant DL365 Gen11", cpu: "AMD EPYC 9334", sockets: 2, cores: 64, thread: 128, memoryMB: 393216,
		disks: []fieldtype.Disk{{Type: fieldtype.DiskSSD, CapacityGB: 480, Count: 2}, {Type: fieldtype.DiskNVMe, CapacityGB: 7680, Count: 2}}, priceFactor: 0.95},
	{vendor: "Supermicro", model: "SYS-621C-TN12R", cpu: "Intel Xeon Silver 4416+", sockets: 2, cores: 40, thread: 80, memoryMB: 262144,
		disks: []fieldtype.Disk{{Type: fieldtype.DiskSSD, CapacityGB: 1920, Count: 4}}, priceFactor: 0.85},
}

// vmDisk is the disk a node offers to VMs: its NVMe disks, or its SSDs when it has none.
func (h hardware) vmDiskGB() int64 {
	var nvme, ssd int64
	for _, d := range h.disks {
		switch d.Type {
		case fieldtype.DiskNVMe:
			nvme += int64(d.CapacityGB * d.Count)
		case fieldtype.DiskSSD:
			ssd += int64(d.CapacityGB * d.Count)
		}
	}
	if nvme > 0 {
		return nvme
	}
	return ssd
}

type flavorDef struct {
	name           string
	vcpus          int
	memoryMB, disk int64
	dedicated      bool
	price          float64
}

var flavors = []flavorDef{
	{"s1.small", 1, 2048, 20, false, 0.015},
	{"s1.medium", 2, 4096, 40, false, 0.03},
	{"s1.large", 4, 8192, 80, false, 0.06},
	{"d1.xlarge", 8, 32768, 160, true, 0.40},
}

type imageDef struct{ name, os, version string }

var images = []imageDef{
	{"ubuntu-24.04", "Ubuntu", "24.04"},
	{"debian-12", "Debian", "12"},
	{"rocky-9", "Rocky Linux", "9"},
}

type tenantDef struct {
	name, display string
	floors        []int // global floor indexes with a quota
	vms           []vmDef
}

type vmDef struct {
	name, flavor, image string
	typ                 virtualmachine.Type
}

var tenants = []tenantDef{
	{name: "acme", display: "ACME Corporation", floors: []int{0, 1}, vms: []vmDef{
		{"acme-web-01", "s1.medium", "ubuntu-24.04", virtualmachine.TypeGeneral},
		{"acme-web-02", "s1.medium", "ubuntu-24.04", virtualmachine.TypeGeneral},
		{"acme-web-03", "s1.medium", "ubuntu-24.04", virtualmachine.TypeGeneral},
		{"acme-db-01", "d1.xlarge", "rocky-9", virtualmachine.TypeGeneral},
		{"acme-batch-01", "s1.large", "debian-12", virtualmachine.TypeWorker},
		{"acme-bastion-01", "s1.small", "debian-12", virtualmachine.TypeManagement},
	}},
	{name: "globex", display: "Globex Corporation", floors: []int{0, 2}, vms: []vmDef{
		{"globex-api-01", "s1.small", "ubuntu-24.04", virtualmachine.TypeGeneral},
		{"globex-api-02", "s1.small", "ubuntu-24.04", virtualmachine.TypeGeneral},
		{"globex-api-03", "s1.small", "ubuntu-24.04", virtualmachine.TypeGeneral},
		{"globex-cache-01", "s1.large", "debian-12", virtualmachine.TypeGeneral},
		{"globex-cache-02", "s1.large", "debian-12", virtualmachine.TypeGeneral},
		{"globex-db-01", "d1.xlarge", "rocky-9", virtualmachine.TypeGeneral},
	}},
	{name: "initech", display: "Initech", floors: []int{2}, vms: []vmDef{
		{"initech-app-01", "s1.medium", "rocky-9", virtualmachine.TypeGeneral},
		{"initech-app-02", "s1.medium", "rocky-9", virtualmachine.TypeGeneral},
		{"initech-app-03", "s1.medium", "rocky-9", virtualmachine.TypeGeneral},
		{"initech-app-04", "s1.medium", "rocky-9", virtualmachine.TypeGeneral},
		{"initech-ci-01", "s1.large", "ubuntu-24.04", virtualmachine.TypeWorker},
		{"initech-ci-02", "s1.large", "ubuntu-24.04", virtualmachine.TypeWorker},
	}},
}

type personDef struct{ account, name, tenant string }

var users = []personDef{
	{"alice", "Alice Anderson", "acme"},
	{"bob", "Bob Brown", "globex"},
	{"carol", "Carol Clark", "initech"},
}

var maintainers = []personDef{
	{"sato", "Sato Haruto", ""},
	{"suzuki", "Suzuki Yui", ""},
	{"tanaka", "Tanaka Ren", ""},
	{"li", "Li Wei", ""},
	{"wang", "Wang Fang", ""},
}

// loader holds what has been created so far.
type loader struct {
	c   *ent.Client
	now time.Time

	regions   []*ent.Region
	zones     [][]*ent.AvailabilityZone // by site
	dcs       []*ent.Datacenter
	floors    []*floorState // all floors, in site order
	providers map[string]*ent.Provider
	flavors   map[string]*ent.Flavor
	images    map[string]*ent.Image
	servers   []*server
	routers   []*ent.Host
	clusters  []*ent.Cluster // by floor
	groups    []*ent.HostGroup
	tenants   map[string]*ent.Tenant
	maint     map[string]*ent.Maintainer
	vms       []*vmPlan
}

type floorState struct {
	site     int
	index    int // global floor index
	floor    *ent.Floor
	powerA   *ent.PowerZone
	powerB   *ent.PowerZone
	netZone  *ent.NetworkZone
	netRack  *ent.Rack
	racks    []*ent.Rack // server racks
	spare    *ent.Rack
	vmNet    *ent.Network
	storNet  *ent.Network
	vmNextIP netip.Addr
	mgmtNet  *ent.Network
	servers  []*server
}

type server struct {
	floor *floorState
	rack  *ent.Rack
	hw    hardware
	host  *ent.Host
	eth0  *ent.Port
	node  *ent.ComputeNode
}

type vmPlan struct {
	def    vmDef
	tenant *ent.Tenant
	site   int     // the region it is ordered in
	srv    *server // where placement put it
	flavor flavorDef
	vm     *ent.VirtualMachine
	ip     netip.Addr
}

func newLoader(c *ent.Client) *loader {
	return &loader{c: c, now: time.Now().UTC().Truncate(time.Second)}
}

func (l *loader) load(ctx context.Context) error {
	steps := []struct {
		name string
		fn   func(context.Context) error
	}{
		{"regions", l.loadRegions},
		{"floors and racks", l.loadFloors},
		{"catalog", l.loadCatalog},
		{"networks", l.loadNetworks},
		{"servers", l.loadServers},
		{"fabric", l.loadFabric},
		{"compute", l.loadCompute},
		{"tenancy", l.loadTenancy},
		{"maintainers", l.loadMaintainers},
		{"virtual machines", l.loadVMs},
		{"default networks", l.loadDefaultNetworks},
		{"operations", l.loadOperations},
	}
	for _, s := range steps {
		if err := s.fn(ctx); err != nil {
			return fmt.Errorf("load %s: %w", s.name, err)
		}
	}
	return nil
}

func (l *loader) loadRegions(ctx context.Context) error {
	var err error
	rb := make([]*ent.RegionCreate, len(sites))
	for i, s := range sites {
		// Every region takes backups (the simulated nodes keep them in memory).
		rb[i] = l.c.Region.Create().SetName(s.region).SetDescription(s.regionDesc).SetStatus(region.StatusOpen).
			SetBackupTarget("/var/lib/virtflow/backups/" + s.region)
	}
	if l.regions, err = l.c.Region.CreateBulk(rb...).Save(ctx); err != nil {
		return err
	}
	var zb []*ent.AvailabilityZoneCreate
	for i, s := range sites {
		for _, z := range s.zones {
			zb = append(zb, l.c.AvailabilityZone.Create().SetName(z).SetRegionID(l.regions[i].ID).
				SetDescription("availability zone "+z[len(z)-1:]+" of "+s.region))
		}
	}
	zones, err := l.c.AvailabilityZone.CreateBulk(zb...).Save(ctx)
	if err != nil {
		return err
	}
	for _, s := range sites {
		l.zones = append(l.zones, zones[:len(s.zones)])
		zones = zones[len(s.zones):]
	}
	db := make([]*ent.DatacenterCreate, len(sites))
	for i, s := range sites {
		db[i] = l.c.Datacenter.Create().SetName(s.dc).SetRegionID(l.regions[i].ID).
			SetDescription("demo datacenter of " + s.region).SetBuilding(s.building).SetPhase(s.phase).
			SetAddress(s.address).SetPostcode(s.postcode).SetPhone(s.phone).SetMail(s.mail)
	}
	l.dcs, err = l.c.Datacenter.CreateBulk(db...).Save(ctx)
	return err
}

func floorName(f [3]int) string { return fmt.Sprintf("floor-%d-%d-%d", f[0], f[1], f[2]) }

func rackName(row, pos int) string { return fmt.Sprintf("rack-%d-%d", row, pos) }

func (l *loader) loadFloors(ctx context.Context) error {
	var fb []*ent.FloorCreate
	for si, s := range sites {
		for _, f := range s.floors {
			fb = append(fb, l.c.Floor.Create().SetName(floorName(f)).SetDatacenterID(l.dcs[si].ID).
				SetBuilding(f[0]).SetLevel(f[1]).SetNumber(f[2]).
				SetDescription(fmt.Sprintf("building %d, level %d, machine room %d of %s", f[0], f[1], f[2], s.dc)))
			l.floors = append(l.floors, &floorState{site: si, index: len(l.floors)})
		}
	}
	floors, err := l.c.Floor.CreateBulk(fb...).Save(ctx)
	if err != nil {
		return err
	}
	var (
		pb []*ent.PowerZoneCreate
		nb []*ent.NetworkZoneCreate
	)
	for i, fs := range l.floors {
		fs.floor = floors[i]
		dc := l.dcs[fs.site].ID
		for _, side := range []string{"a", "b"} {
			pb = append(pb, l.c.PowerZone.Create().SetName(fs.floor.Name+"-pdu-"+side).SetDatacenterID(dc).
				SetDescription(fmt.Sprintf("power system %s of %s; feeds every other rack", side, fs.floor.Name)))
		}
		nb = append(nb, l.c.NetworkZone.Create().SetName(fs.floor.Name+"-l3").SetDatacenterID(dc).
			SetDescription("L3 management layer of "+fs.floor.Name))
	}
	pzs, err := l.c.PowerZone.CreateBulk(pb...).Save(ctx)
	if err != nil {
		return err
	}
	nzs, err := l.c.NetworkZone.CreateBulk(nb...).Save(ctx)
	if err != nil {
		return err
	}
	type rackRef struct {
		fs   *floorState
		kind string // server, network, spare
	}
	var (
		rb   []*ent.RackCreate
		refs []rackRef
	)
	for i, fs := range l.floors {
		fs.powerA, fs.powerB, fs.netZone = pzs[2*i], pzs[2*i+1], nzs[i]
		newRack := func(name, row string, pos int) *ent.RackCreate {
			pz := fs.powerA
			if pos%2 == 0 {
				pz = fs.powerB
			}
			return l.c.Rack.Create().SetName(name).SetRow(row).SetPosition(pos).SetHeight(RackHeight).
				SetFloorID(fs.floor.ID).SetPowerZoneID(pz.ID).SetNetworkZoneID(fs.netZone.ID)
		}
		rb = append(rb, newRack("rack-0-1", "0", 1).SetDescription("network rack: floor-leaf and rack-spine routers"))
		refs = append(refs, rackRef{fs, "network"})
		for row := 1; row <= RowsPerFloor; row++ {
			for pos := 1; pos <= RacksPerRow; pos++ {
				rb = append(rb, newRack(rackName(row, pos), fmt.Sprint(row), pos))
				refs = append(refs, rackRef{fs, "server"})
			}
		}
		if l.isFirstFloor(fs) {
			// An empty rack kept for rack-by-rack hardware renewal (seed 001).
			rb = append(rb, newRack(rackName(RowsPerFloor+1, 1), fmt.Sprint(RowsPerFloor+1), 1).
				SetStatus(rack.StatusEmptySpare).SetDescription("empty spare rack for rack migrations and spare parts"))
			refs = append(refs, rackRef{fs, "spare"})
		}
	}
	racks, err := l.c.Rack.CreateBulk(rb...).Save(ctx)
	if err != nil {
		return err
	}
	for i, r := range refs {
		switch r.kind {
		case "network":
			r.fs.netRack = racks[i]
		case "server":
			r.fs.racks = append(r.fs.racks, racks[i])
		case "spare":
			r.fs.spare = racks[i]
		}
	}
	return nil
}

func (l *loader) isFirstFloor(fs *floorState) bool {
	return fs.index == 0 || l.floors[fs.index-1].site != fs.site
}

// loadPrices writes the demo's price list (package metering), effective 60 days before now:
// each flavor's price, the host models' factors as multipliers, IO classes, volumes,
// addresses and load balancers, vCPUs and memory; and a price rise of s1.medium ten days
// ago, which splits the reservations running across it.
func (l *loader) loadPrices(ctx context.Context) error {
	since := l.now.Add(-60 * 24 * time.Hour).Truncate(24 * time.Hour)
	micro := func(f float64) int64 { return int64(math.Round(f * metering.Micro)) }
	entries := []metering.PriceEntry{
		{Kind: metering.PriceVCPU, Key: "SHARED", AmountMicro: 7_000},
		{Kind: metering.PriceVCPU, Key: "DEDICATED", AmountMicro: 45_000},
		{Kind: metering.PriceMemoryGB, AmountMicro: 2_000},
		{Kind: metering.PriceIPAddress, AmountMicro: 5_000},
		{Kind: metering.PriceLoadBalancer, AmountMicro: 20_000},
		{Kind: metering.PriceVolumeGB, Key: "HDD", AmountMicro: 40},
		{Kind: metering.PriceVolumeGB, Key: "SSD", AmountMicro: 120},
		{Kind: metering.PriceVolumeGB, Key: "NVME", AmountMicro: 250},
	}
	for _, f := range flavors {
		entries = append(entries,
			metering.PriceEntry{Kind: metering.PriceFlavor, Key: f.name, AmountMicro: micro(f.price)},
			metering.PriceEntry{Kind: metering.PriceIOClass, Key: fmt.Sprintf("iops=%d,mbps=-,net=%d", 1000*f.vcpus, 1000*f.vcpus),
				AmountMicro: int64(500 * f.vcpus)})
	}
	for _, p := range profiles {
		entries = append(entries, metering.PriceEntry{Kind: metering.PriceHostModel, Key: p.model, MultiplierPPM: micro(p.priceFactor)})
	}
	for _, e := range entries {
		e.EffectiveFrom = since
		if _, err := metering.AddPrice(ctx, l.c, e); err != nil {
			return fmt.Errorf("price %s %s: %w", e.Kind, e.Key, err)
		}
	}
	_, err := metering.AddPrice(ctx, l.c, metering.PriceEntry{Kind: metering.PriceFlavor, Key: "s1.medium",
		AmountMicro: 36_000, EffectiveFrom: l.now.Add(-10 * 24 * time.Hour).Truncate(time.Hour)})
	return err
}

func (l *loader) loadCatalog(ctx context.Context) error {
	provs, err := l.c.Provider.CreateBulk(
		l.c.Provider.Create().SetName("libvirt-vm").SetKind(provider.KindVirtualMachine).SetDriver(provider.DriverLibvirt).
			SetSupportsLiveMigration(true).SetDescription("virtual machines on libvirt/KVM"),
		l.c.Provider.Create().SetName("docker-pod").SetKind(provider.KindPod).SetDriver(provider.DriverDocker).
			SetDescription("pods on docker"),
	).Save(ctx)
	if err != nil {
		return err
	}
	l.providers = map[string]*ent.Provider{"libvirt-vm": provs[0], "docker-pod": provs[1]}

	fb := make([]*ent.FlavorCreate, len(flavors))
	for i, f := range flavors {
		var prices []fieldtype.ModelPrice
		for _, p := range profiles {
			prices = append(prices, fieldtype.ModelPrice{HostModel: p.model, PricePerHour: roundCents(f.price * p.priceFactor)})
		}
		b := l.c.Flavor.Create().SetName(f.name).SetVcpus(f.vcpus).SetMemoryMB(f.memoryMB).SetDiskGB(f.disk).
			SetPricePerHour(f.price).SetPricesByHostModel(prices).SetProviderID(provs[0].ID).
			SetDiskIopsLimit(1000 * f.vcpus).SetNetworkMbpsLimit(1000 * f.vcpus)
		if f.dedicated {
			b.SetCPUPolicy(flavor.CPUPolicyDedicated).
				SetDescription(fmt.Sprintf("%d dedicated (pinned) vCPUs, %d GiB", f.vcpus, f.memoryMB/1024))
		} else {
			b.SetCPUPolicy(flavor.CPUPolicyShared).SetCPULimitPercent(50).
				SetDescription(fmt.Sprintf("%d shared vCPUs (50%% CPU time each), %d GiB", f.vcpus, f.memoryMB/1024))
		}
		fb[i] = b
	}
	fls, err := l.c.Flavor.CreateBulk(fb...).Save(ctx)
	if err != nil {
		return err
	}
	l.flavors = map[string]*ent.Flavor{}
	for _, f := range fls {
		l.flavors[f.Name] = f
	}
	if err := l.loadPrices(ctx); err != nil {
		return err
	}

	ib := make([]*ent.ImageCreate, len(images))
	for i, im := range images {
		ib[i] = l.c.Image.Create().SetName(im.name).SetOsName(im.os).SetOsVersion(im.version).
			SetMinVcpus(1).SetMinMemoryMB(1024).SetSizeGB(4).
			// The server gives the demo's images blank raw disks at start (internal/app).
			SetSource("upload").SetFormat(image.FormatRaw).
			SetDescription(im.os + " " + im.version + " (demo: a blank raw disk)")
	}
	ims, err := l.c.Image.CreateBulk(ib...).Save(ctx)
	if err != nil {
		return err
	}
	l.images = map[string]*ent.Image{}
	for _, im := range ims {
		l.images[im.Name] = im
	}
	return nil
}

func roundCents(f float64) float64 { return float64(int(f*10000+0.5)) / 10000 }

// addr returns the n-th address after the prefix's network address.
func addr(p netip.Prefix, n int) netip.Addr {
	b := p.Addr().As4()
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	v += uint32(n)
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

func (l *loader) loadNetworks(ctx context.Context) error {
	var nb []*ent.NetworkCreate
	for i, s := range sites {
		nb = append(nb, l.c.Network.Create().SetName(s.dc+"-mgmt").SetCidr(s.mgmt.String()).SetVlan(10).
			SetGateway(addr(s.mgmt, 1).String()).SetPurpose(network.PurposeManagement).SetDatacenterID(l.dcs[i].ID).
			SetDescription("management network of "+s.dc+" (servers' eth0)"))
	}
	for i, s := range sites {
		// The VIPs of load balancers (createRegionService with loadBalanced, Kubernetes API
		// servers): a SERVICE network per datacenter, beside its management range.
		m := s.mgmt.Addr().As4()
		svc := netip.PrefixFrom(netip.AddrFrom4([4]byte{m[0], m[1], 240, 0}), 24)
		nb = append(nb, l.c.Network.Create().SetName(s.dc+"-service").SetCidr(svc.String()).SetVlan(20).
			SetPurpose(network.PurposeService).SetDatacenterID(l.dcs[i].ID).
			SetDescription("service network of "+s.dc+" (load balancers' VIPs, announced by BGP)"))
	}
	for _, fs := range l.floors {
		dc := sites[fs.site].dc
		n := fs.index + 1
		vm := netip.PrefixFrom(netip.AddrFrom4([4]byte{172, 16, byte(4 * fs.index), 0}), 22)
		st := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 64, byte(4 * fs.index), 0}), 22)
		fs.vmNextIP = addr(vm, 10)
		nb = append(nb,
			l.c.Network.Create().SetName(dc+"-"+fs.floor.Name+"-vm").SetCidr(vm.String()).SetVlan(100+n).
				SetGateway(addr(vm, 1).String()).SetPurpose(network.PurposeVm).
				SetDatacenterID(l.dcs[fs.site].ID).SetNetworkZoneID(fs.netZone.ID).
				SetDescription("VM network of "+fs.floor.Name+" in "+dc),
			l.c.Network.Create().SetName(dc+"-"+fs.floor.Name+"-storage").SetCidr(st.String()).SetVlan(200+n).
				SetGateway(addr(st, 1).String()).SetPurpose(network.PurposeStorage).
				SetDatacenterID(l.dcs[fs.site].ID).SetNetworkZoneID(fs.netZone.ID).
				SetDescription("storage network of "+fs.floor.Name+" in "+dc))
	}
	nets, err := l.c.Network.CreateBulk(nb...).Save(ctx)
	if err != nil {
		return err
	}
	for i, fs := range l.floors {
		fs.mgmtNet = nets[fs.site]
		fs.vmNet, fs.storNet = nets[2*len(sites)+2*i], nets[2*len(sites)+2*i+1]
	}
	return nil
}

func hostPrefix(site int) string { return sites[site].dc + "-" }

func (l *loader) loadServers(ctx context.Context) error {
	var hb []*ent.HostCreate
	seq := 0
	for _, fs := range l.floors {
		s := sites[fs.site]
		warranty := time.Date(2028+fs.index, time.March, 31, 0, 0, 0, 0, time.UTC)
		for ri, rk := range fs.racks {
			hw := profiles[(fs.index*len(fs.racks)+ri)%len(profiles)]
			for n := 1; n <= ServersPerRack; n++ {
				seq++
				srv := &server{floor: fs, rack: rk, hw: hw}
				l.servers = append(l.servers, srv)
				fs.servers = append(fs.servers, srv)
				hb = append(hb, l.c.Host.Create().
					SetName(fabric.ServerName(hostPrefix(fs.site), fs.floor.Name, rk.Name, n)).
					SetSerialNumber(fmt.Sprintf("%s-%s-%05d", serialCode(hw.vendor), s.dc[:4], seq)).
					SetVendor(hw.vendor).SetModel(hw.model).SetKind(host.KindServer).
					SetRackID(rk.ID).SetPosition(1+(n-1)*ServerHeight).SetHeight(ServerHeight).
					SetLifecycle(host.LifecycleActive).SetWarrantyEnd(warranty).
					SetCPUModel(hw.cpu).SetCPUSockets(hw.sockets).SetCPUCores(hw.cores).SetCPUThreads(hw.thread).
					SetNumaNodes(hw.sockets).SetMemoryMB(hw.memoryMB).SetDisks(hw.disks).SetNics(nics))
			}
		}
	}
	hosts, err := fabric.SaveBulk(ctx, hb, func(ctx context.Context, bs []*ent.HostCreate) ([]*ent.Host, error) {
		return l.c.Host.CreateBulk(bs...).Save(ctx)
	})
	if err != nil {
		return err
	}
	// eth0 (management network) and eth1, cabled by the fabric builder.
	pb := make([]*ent.PortCreate, 0, 2*len(hosts))
	for i, h := range hosts {
		l.servers[i].host = h
		for p := range 2 {
			b := l.c.Port.Create().SetHostID(h.ID).SetName(fmt.Sprintf("eth%d", p)).SetKind(port.KindPhysical).
				SetMAC(fmt.Sprintf("0c:42:a1:%02x:%02x:%02x", (i>>15)&0xff, (i>>7)&0xff, (i<<1|p)&0xff)).
				SetSpeedMbps(fabric.ServerPortSpeedMbps).SetMtu(fabric.ServerMTU)
			if p == 0 {
				b.SetNetworkID(l.servers[i].floor.mgmtNet.ID)
			}
			pb = append(pb, b)
		}
	}
	ports, err := fabric.SaveBulk(ctx, pb, func(ctx context.Context, bs []*ent.PortCreate) ([]*ent.Port, error) {
		return l.c.Port.CreateBulk(bs...).Save(ctx)
	})
	if err != nil {
		return err
	}
	for i, srv := range l.servers {
		srv.eth0 = ports[2*i]
	}
	// One management address per server, on its eth0.
	ib := make([]*ent.IPAddressCreate, len(l.servers))
	perSite := map[int]int{}
	for i, srv := range l.servers {
		site := srv.floor.site
		perSite[site]++
		ib[i] = l.c.IPAddress.Create().SetNetworkID(srv.floor.mgmtNet.ID).SetPortID(srv.eth0.ID).
			SetAddress(addr(sites[site].mgmt, 256+perSite[site]).String()).SetStatus(ipaddress.StatusAllocated).
			SetDNSName(srv.host.Name + ".mgmt.virtflow.internal")
	}
	_, err = fabric.SaveBulk(ctx, ib, func(ctx context.Context, bs []*ent.IPAddressCreate) ([]*ent.IPAddress, error) {
		return l.c.IPAddress.CreateBulk(bs...).Save(ctx)
	})
	return err
}

func serialCode(vendor string) string {
	switch vendor {
	case "Dell":
		return "DL"
	case "HPE":
		return "HP"
	default:
		return "SM"
	}
}

func (l *loader) loadFabric(ctx context.Context) error {
	roots := map[int]*fabric.Root{}
	for _, fs := range l.floors {
		root := roots[fs.site]
		if root == nil {
			var err error
			root, err = fabric.BuildRoot(ctx, l.c, l.dcs[fs.site].ID,
				fabric.WithHostPrefix(hostPrefix(fs.site)), fabric.WithRack(fs.netRack.ID))
			if err != nil {
				return fmt.Errorf("root of %s: %w", sites[fs.site].dc, err)
			}
			roots[fs.site] = root
			l.routers = append(l.routers, root.Gateways...)
			l.routers = append(l.routers, root.FloorSpines...)
		}
		ids := make([]int, len(fs.racks))
		for i, rk := range fs.racks {
			ids[i] = rk.ID
		}
		res, err := fabric.Build(ctx, l.c, fabric.FloorSpec{
			FloorID: fs.floor.ID, NetworkRackID: fs.netRack.ID, RackIDs: ids, Root: root, HostPrefix: hostPrefix(fs.site),
		})
		if err != nil {
			return fmt.Errorf("%s/%s: %w", sites[fs.site].dc, fs.floor.Name, err)
		}
		l.routers = append(l.routers, res.FloorLeaves...)
		l.routers = append(l.routers, res.RackSpines...)
		l.routers = append(l.routers, res.RackLeaves...)
	}
	return nil
}

// planVMs orders the tenants' VMs: each goes to the region of one of the floors its tenant
// has a quota on, in turn. Where exactly is placement's decision (loadVMs).
func (l *loader) planVMs() {
	flavorByName := map[string]flavorDef{}
	for _, f := range flavors {
		flavorByName[f.name] = f
	}
	for _, t := range tenants {
		for k, def := range t.vms {
			site := l.floors[t.floors[k%len(t.floors)]].site
			l.vms = append(l.vms, &vmPlan{def: def, site: site, flavor: flavorByName[def.flavor]})
		}
	}
}

func (l *loader) loadCompute(ctx context.Context) error {
	cb := make([]*ent.ClusterCreate, len(l.floors))
	perSite := map[int]int{}
	for i, fs := range l.floors {
		perSite[fs.site]++
		s := sites[fs.site]
		cb[i] = l.c.Cluster.Create().SetName(fmt.Sprintf("%s%d", s.clusterPrefix, perSite[fs.site])).
			SetRegionID(l.regions[fs.site].ID).SetDatacenterID(l.dcs[fs.site].ID).
			SetDescription("compute nodes of " + fs.floor.Name + " in " + s.dc).
			SetLabels(fieldtype.Labels{"env": "production", "virtflow.io/datacenter": s.dc, "virtflow.io/floor": fs.floor.Name}).
			SetWeight(100 - 10*(perSite[fs.site]-1))
	}
	var err error
	if l.clusters, err = l.c.Cluster.CreateBulk(cb...).Save(ctx); err != nil {
		return err
	}
	l.planVMs()
	nb := make([]*ent.ComputeNodeCreate, len(l.servers))
	azTurn := map[int]int{}
	for i, srv := range l.servers {
		fs := srv.floor
		zones := l.zones[fs.site]
		az := zones[azTurn[fs.site]%len(zones)]
		azTurn[fs.site]++
		provs := []int{l.providers["libvirt-vm"].ID}
		if srv.rack.Row == "2" {
			provs = append(provs, l.providers["docker-pod"].ID)
		}
		nb[i] = l.c.ComputeNode.Create().SetName(srv.host.Name).SetHostID(srv.host.ID).
			SetClusterID(l.clusters[fs.index].ID).SetAvailabilityZoneID(az.ID).AddProviderIDs(provs...).
			SetStatus(computenode.StatusReady).SetSchedulable(true).
			SetLabels(fieldtype.Labels{
				"virtflow.io/floor": fs.floor.Name, "virtflow.io/rack": srv.rack.Name,
				"virtflow.io/hardware": slug(srv.hw.model), "virtflow.io/zone": az.Name,
			}).
			SetCPUCapacity(srv.hw.thread).SetMemoryCapacityMB(srv.hw.memoryMB - hostReservedMB).
			SetDiskCapacityGB(srv.hw.vmDiskGB()).
			SetOsName("Ubuntu").SetOsVersion("24.04").SetAgentVersion("0.1.0").SetLastHeartbeatAt(l.now)
	}
	nodes, err := fabric.SaveBulk(ctx, nb, func(ctx context.Context, bs []*ent.ComputeNodeCreate) ([]*ent.ComputeNode, error) {
		return l.c.ComputeNode.CreateBulk(bs...).Save(ctx)
	})
	if err != nil {
		return err
	}
	for i, srv := range l.servers {
		srv.node = nodes[i]
	}
	gb := make([]*ent.HostGroupCreate, len(l.floors))
	for i, fs := range l.floors {
		ids := make([]int, len(fs.servers))
		for j, srv := range fs.servers {
			ids[j] = srv.host.ID
		}
		dc := sites[fs.site].dc
		gb[i] = l.c.HostGroup.Create().SetName(dc + "-" + fs.floor.Name).AddHostIDs(ids...).
			SetDescription("servers of " + fs.floor.Name + " in " + dc + "; tenant quotas are set on it")
	}
	l.groups, err = l.c.HostGroup.CreateBulk(gb...).Save(ctx)
	return err
}

func slug(s string) string {
	b := []byte(s)
	for i, c := range b {
		switch {
		case c >= 'A' && c <= 'Z':
			b[i] = c + 'a' - 'A'
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '.':
		default:
			b[i] = '-'
		}
	}
	return string(b)
}

func (l *loader) loadTenancy(ctx context.Context) error {
	ub := make([]*ent.UserCreate, len(users))
	for i, u := range users {
		ub[i] = l.c.User.Create().SetUsername(u.account).SetDisplayName(u.name).SetEmail(u.account + "@example.com")
	}
	us, err := l.c.User.CreateBulk(ub...).Save(ctx)
	if err != nil {
		return err
	}
	tb := make([]*ent.TenantCreate, len(tenants))
	for i, t := range tenants {
		var members []int
		for j, u := range users {
			if u.tenant == t.name {
				members = append(members, us[j].ID)
			}
		}
		if t.name == "acme" {
			members = append(members, us[2].ID) // carol works for initech and helps acme
		}
		tb[i] = l.c.Tenant.Create().SetName(t.name).SetDisplayName(t.display).AddMemberIDs(members...).
			SetDescription("demo tenant " + t.display)
	}
	ts, err := l.c.Tenant.CreateBulk(tb...).Save(ctx)
	if err != nil {
		return err
	}
	l.tenants = map[string]*ent.Tenant{}
	for _, t := range ts {
		l.tenants[t.Name] = t
	}
	// Every member holds the tenant-member role in the tenant, as grantRole would give it, so
	// signing in as alice shows what a tenant sees.
	var rb []*ent.RoleBindingCreate
	for i, t := range ts {
		for _, uid := range tb[i].Mutation().MembersIDs() {
			rb = append(rb, l.c.RoleBinding.Create().SetUserID(uid).SetTenantID(t.ID).
				SetRole(rolebinding.Role(authz.RoleTenantMember.Enum())).SetDomain(authz.TenantDomain(t.ID)).
				SetGrantedBy("demo"))
		}
	}
	if _, err := l.c.RoleBinding.CreateBulk(rb...).Save(ctx); err != nil {
		return err
	}
	for _, v := range l.vms {
		for _, t := range tenants {
			if slices.ContainsFunc(t.vms, func(d vmDef) bool { return d.name == v.def.name }) {
				v.tenant = l.tenants[t.name]
			}
		}
	}
	// Quotas; placing the VMs below (package placement) counts their usage.
	var qb []*ent.QuotaCreate
	for _, t := range tenants {
		tid := l.tenants[t.name].ID
		for _, fi := range t.floors {
			qb = append(qb, l.c.Quota.Create().SetTenantID(tid).SetHostGroupID(l.groups[fi].ID).
				SetCPUPercent(25).SetVcpus(1024).SetMemoryMB(4<<20).SetStorageGB(200_000))
		}
	}
	_, err = l.c.Quota.CreateBulk(qb...).Save(ctx)
	return err
}

func (l *loader) loadMaintainers(ctx context.Context) error {
	// A few racks have a maintainer of their own.
	own := map[string][]int{
		"suzuki": {l.floors[0].racks[0].ID, l.floors[0].racks[1].ID},
		"wang":   {l.floors[len(l.floors)-1].racks[0].ID, l.floors[len(l.floors)-1].racks[1].ID},
	}
	mb := make([]*ent.MaintainerCreate, len(maintainers))
	for i, m := range maintainers {
		mb[i] = l.c.Maintainer.Create().SetName(m.name).SetAccount(m.account).SetEmail(m.account + "@example.com").
			AddRackIDs(own[m.account]...)
	}
	ms, err := l.c.Maintainer.CreateBulk(mb...).Save(ctx)
	if err != nil {
		return err
	}
	l.maint = map[string]*ent.Maintainer{}
	for _, m := range ms {
		l.maint[m.Account] = m
	}
	ids := func(accounts ...string) []int {
		out := make([]int, len(accounts))
		for i, a := range accounts {
			out[i] = l.maint[a].ID
		}
		return out
	}
	// What each datacenter's ops group answers for: its racks, its hosts and its clusters.
	type resp struct{ racks, hosts, clusters []int }
	bySite := make([]resp, len(sites))
	for _, fs := range l.floors {
		r := &bySite[fs.site]
		r.racks = append(r.racks, fs.netRack.ID)
		for _, rk := range fs.racks {
			r.racks = append(r.racks, rk.ID)
		}
		if fs.spare != nil {
			r.racks = append(r.racks, fs.spare.ID)
		}
		for _, srv := range fs.servers {
			r.hosts = append(r.hosts, srv.host.ID)
		}
		r.clusters = append(r.clusters, l.clusters[fs.index].ID)
	}
	// Routers belong to the datacenter of the rack they are mounted in.
	routerIDs := make([]int, len(l.routers))
	for i, h := range l.routers {
		routerIDs[i] = h.ID
	}
	siteOfRouter, err := l.routerSites(ctx)
	if err != nil {
		return err
	}
	for id, site := range siteOfRouter {
		bySite[site].hosts = append(bySite[site].hosts, id)
	}
	gb := []*ent.MaintainerGroupCreate{
		l.c.MaintainerGroup.Create().SetName("dc-ops-tokyo").SetAdminID(l.maint["sato"].ID).
			SetDescription("datacenter operations, tky1-dc1").AddMemberIDs(ids("sato", "suzuki", "tanaka")...).
			AddRackIDs(bySite[0].racks...).AddHostIDs(bySite[0].hosts...).AddClusterIDs(bySite[0].clusters...),
		l.c.MaintainerGroup.Create().SetName("dc-ops-osaka").SetAdminID(l.maint["li"].ID).
			SetDescription("datacenter operations, osk1-dc1").AddMemberIDs(ids("li", "wang")...).
			AddRackIDs(bySite[1].racks...).AddHostIDs(bySite[1].hosts...).AddClusterIDs(bySite[1].clusters...),
		l.c.MaintainerGroup.Create().SetName("network-team").SetAdminID(l.maint["tanaka"].ID).
			SetDescription("the network fabric: gateway, spine and leaf routers").AddMemberIDs(ids("tanaka", "wang")...).
			AddHostIDs(routerIDs...),
	}
	_, err = l.c.MaintainerGroup.CreateBulk(gb...).Save(ctx)
	return err
}

// routerSites maps every router to the site of the rack it is mounted in.
func (l *loader) routerSites(ctx context.Context) (map[int]int, error) {
	rackSite := map[int]int{}
	var rackIDs []int
	for _, fs := range l.floors {
		rackSite[fs.netRack.ID] = fs.site
		rackIDs = append(rackIDs, fs.netRack.ID)
		for _, rk := range fs.racks {
			rackSite[rk.ID] = fs.site
			rackIDs = append(rackIDs, rk.ID)
		}
	}
	racks, err := l.c.Rack.Query().Where(rack.IDIn(rackIDs...)).
		WithHosts(func(q *ent.HostQuery) { q.Where(host.KindEQ(host.KindRouter)).Select(host.FieldID) }).All(ctx)
	if err != nil {
		return nil, err
	}
	out := map[int]int{}
	for _, rk := range racks {
		for _, h := range rk.Edges.Hosts {
			out[h.ID] = rackSite[rk.ID]
		}
	}
	return out, nil
}

// loadVMs creates the tenants' VMs through package placement, as createVirtualMachine
// does: each is placed on a node of a floor its tenant has a quota on (quotas are required
// here), the node's allocation and the quota's usage grow by its flavor; then it is marked
// running, with its port, address and assignment. Each is placed as if between 1 and 35 days
// ago (the placer's clock), so the reservation ledger holds a month of usage to look at.
func (l *loader) loadVMs(ctx context.Context) error {
	var placedAt time.Time
	placer := placement.New(placement.Config{Scheduler: scheduler.Config{RequireQuota: true},
		Clock: func() time.Time { return placedAt }})
	byNode := map[int]*server{}
	for _, srv := range l.servers {
		byNode[srv.node.ID] = srv
	}
	vms := make([]*ent.VirtualMachine, len(l.vms))
	for i, v := range l.vms {
		placedAt = l.now.Add(-time.Duration(24*(i%35+1))*time.Hour - time.Duration(i*37%3600)*time.Second)
		desc := fmt.Sprintf("%s on %s", v.def.flavor, v.def.image)
		typ := v.def.typ
		vm, err := placer.CreateVM(ctx, l.c, ent.CreateVirtualMachineInput{
			Name: v.def.name, Description: &desc, Type: &typ, Labels: fieldtype.Labels{"app": appLabel(v.def.name)},
			TenantID: v.tenant.ID, RegionID: l.regions[v.site].ID, FlavorID: l.flavors[v.def.flavor].ID,
			ImageID: &l.images[v.def.image].ID,
		})
		if err != nil {
			return fmt.Errorf("place %s: %w", v.def.name, err)
		}
		node, err := vm.QueryNode().OnlyID(ctx)
		if err != nil {
			return err
		}
		if v.srv = byNode[node]; v.srv == nil {
			return fmt.Errorf("%s placed on node %d, which is not a demo server", v.def.name, node)
		}
		if vms[i], err = l.c.VirtualMachine.UpdateOne(vm).SetStatus(virtualmachine.StatusActive).
			SetStatusReason("running on " + v.srv.node.Name).Save(ctx); err != nil {
			return err
		}
	}
	pb := make([]*ent.PortCreate, len(vms))
	for i, v := range l.vms {
		v.vm = vms[i]
		fs := v.srv.floor
		pb[i] = l.c.Port.Create().SetName("eth0").SetVirtualMachineID(v.vm.ID).SetKind(port.KindVirtual).
			SetDriver("virtio").SetMAC(fmt.Sprintf("52:54:00:%02x:%02x:%02x", fs.index, (i>>8)&0xff, i&0xff)).
			SetVlan(fs.vmNet.Vlan).SetNetworkID(fs.vmNet.ID)
	}
	ports, err := l.c.Port.CreateBulk(pb...).Save(ctx)
	if err != nil {
		return err
	}
	ib := make([]*ent.IPAddressCreate, len(vms))
	ab := make([]*ent.AssignmentCreate, len(vms))
	for i, v := range l.vms {
		fs := v.srv.floor
		v.ip = fs.vmNextIP
		fs.vmNextIP = fs.vmNextIP.Next()
		ib[i] = l.c.IPAddress.Create().SetNetworkID(fs.vmNet.ID).SetPortID(ports[i].ID).SetAddress(v.ip.String()).
			SetStatus(ipaddress.StatusAllocated).SetDNSName(v.def.name + "." + v.tenant.Name + ".vm.virtflow.internal")
		drive, err := demoConfigDrive(v.vm, ports[i].MAC, v.ip, fs.vmNet)
		if err != nil {
			return err
		}
		ab[i] = l.c.Assignment.Create().SetNodeID(v.srv.node.ID).SetVirtualMachineID(v.vm.ID).
			SetDesiredState(assignment.DesiredStateRunning).SetStatus(assignment.StatusApplied).SetObservedState("running").
			SetConfigDrive(drive)
	}
	if _, err := l.c.IPAddress.CreateBulk(ib...).Save(ctx); err != nil {
		return err
	}
	_, err = l.c.Assignment.CreateBulk(ab...).Save(ctx)
	return err
}

// loadDefaultNetworks gives every tenant a default VM network, the VM network of the first
// floor it has a quota on, so a VM created without networks (the dashboard form's default)
// gets a NIC and an address from IPAM there. It runs after the demo's own VMs, whose ports
// and addresses are written above.
func (l *loader) loadDefaultNetworks(ctx context.Context) error {
	for _, t := range tenants {
		if err := l.c.Tenant.UpdateOne(l.tenants[t.name]).SetDefaultVMNetworkID(l.floors[t.floors[0]].vmNet.ID).
			Exec(ctx); err != nil {
			return err
		}
	}
	return nil
}

func appLabel(name string) string {
	// acme-web-01 → web
	parts := []byte(name)
	start, end := -1, len(parts)
	for i, c := range parts {
		if c == '-' {
			if start < 0 {
				start = i + 1
			} else {
				end = i
				break
			}
		}
	}
	if start < 0 {
		return name
	}
	return name[start:end]
}

func (l *loader) loadOperations(ctx context.Context) error {
	if _, err := l.c.ServiceMesh.Create().SetName("mesh-tokyo1").SetType(servicemesh.TypeIstio).
		SetStatus(servicemesh.StatusActive).SetDescription("Istio mesh for Kubernetes clusters in tokyo1").Save(ctx); err != nil {
		return err
	}
	if _, err := l.c.EventRule.CreateBulk(
		l.c.EventRule.Create().SetName("drop-routine-successes").SetKind(eventrule.KindFilter).SetPriority(10).
			SetStatusMatch(eventrule.StatusMatchSuccess).
			SetDescription("successful checks with nothing to recover are not stored (a SUCCESS that resolves an alert or recovers a hook is kept)"),
		l.c.EventRule.Create().SetName("aggregate-warnings").SetKind(eventrule.KindAggregate).SetPriority(50).
			SetStatusMatch(eventrule.StatusMatchWarning).SetAggregateWindowSeconds(300).
			SetDescription("group warnings of the same check for five minutes before acting"),
		l.c.EventRule.Create().SetName("alert-on-critical").SetKind(eventrule.KindAction).SetPriority(100).
			SetStatusMatch(eventrule.StatusMatchCritical).SetAction(eventrule.ActionCreateAlert).
			SetAlertSeverity(eventrule.AlertSeverityCritical).SetDescription("every critical check result opens an alert"),
		l.c.EventRule.Create().SetName("resolve-on-success").SetKind(eventrule.KindAction).SetPriority(100).
			SetStatusMatch(eventrule.StatusMatchSuccess).SetAction(eventrule.ActionResolveAlert).
			SetDescription("a check that succeeds again resolves its open alert"),
		l.c.EventRule.Create().SetName("notify-on-call").SetKind(eventrule.KindAction).SetPriority(200).
			SetAction(eventrule.ActionCallHook).SetHookURL("https://hooks.example.com/virtflow").SetEnabled(false).
			SetDescription("failures and their recoveries to the on-call webhook; set your URL and enable it"),
	).Save(ctx); err != nil {
		return err
	}

	// Two open alerts and a closed one, with the events behind them.
	tky := l.floors[0].servers[2]
	osk := l.floors[len(l.floors)-1].servers[4]
	ntp := l.floors[0].servers[20]
	alerts, err := l.c.Alert.CreateBulk(
		l.c.Alert.Create().SetName("disk usage above 85%").SetSeverity(alert.SeverityWarning).SetStatus(alert.StatusOpen).
			SetMessage("/var/lib/libvirt is 87% full on "+tky.host.Name).SetFingerprint("disk-usage/"+tky.host.Name).
			SetOccurrences(3).SetFirstSeenAt(l.now.Add(-3*time.Hour)).SetLastSeenAt(l.now.Add(-10*time.Minute)).
			SetNodeID(tky.node.ID).SetHostID(tky.host.ID),
		l.c.Alert.Create().SetName("power supply redundancy lost").SetSeverity(alert.SeverityCritical).SetStatus(alert.StatusOpen).
			SetMessage("PSU 2 of "+osk.host.Name+" reports no input power").SetFingerprint("psu-status/"+osk.host.Name).
			SetFirstSeenAt(l.now.Add(-40*time.Minute)).SetLastSeenAt(l.now.Add(-40*time.Minute)).SetHostID(osk.host.ID),
		l.c.Alert.Create().SetName("clock offset above 100ms").SetSeverity(alert.SeverityWarning).SetStatus(alert.StatusClosed).
			SetMessage("chrony reports an offset of 180ms on "+ntp.host.Name).SetFingerprint("ntp-offset/"+ntp.host.Name).
			SetFirstSeenAt(l.now.Add(-50*time.Hour)).SetLastSeenAt(l.now.Add(-49*time.Hour)).
			SetClosedAt(l.now.Add(-48*time.Hour)).SetClosedBy("sato").SetNodeID(ntp.node.ID).SetHostID(ntp.host.ID),
	).Save(ctx)
	if err != nil {
		return err
	}
	if _, err := l.c.Event.CreateBulk(
		l.c.Event.Create().SetCheckName("disk-usage").SetStatus(entevent.StatusWarning).SetSource("nodeagent").
			SetOutput("/var/lib/libvirt 87% used (3.3 TiB of 3.8 TiB)").SetOccurrences(3).
			SetFirstSeenAt(l.now.Add(-3*time.Hour)).SetLastSeenAt(l.now.Add(-10*time.Minute)).
			SetNodeID(tky.node.ID).SetHostID(tky.host.ID).SetAlertID(alerts[0].ID),
		l.c.Event.Create().SetCheckName("psu-status").SetStatus(entevent.StatusCritical).SetSource("nodeagent").
			SetOutput("PSU1 ok, PSU2 no input").SetFirstSeenAt(l.now.Add(-40*time.Minute)).SetLastSeenAt(l.now.Add(-40*time.Minute)).
			SetNodeID(osk.node.ID).SetHostID(osk.host.ID).SetAlertID(alerts[1].ID),
		l.c.Event.Create().SetCheckName("ntp-offset").SetStatus(entevent.StatusWarning).SetSource("nodeagent").
			SetOutput("offset 180ms").SetFirstSeenAt(l.now.Add(-50*time.Hour)).SetLastSeenAt(l.now.Add(-49*time.Hour)).
			SetNodeID(ntp.node.ID).SetHostID(ntp.host.ID).SetAlertID(alerts[2].ID),
	).Save(ctx); err != nil {
		return err
	}
	if _, err := l.c.Maintenance.Create().SetTitle("Replace PSU 2 of " + osk.host.Name).
		SetDescription("swap the failed power supply; the server stays up on PSU 1").
		SetStatus(maintenance.StatusPlanned).SetStartsAt(l.now.Add(20 * time.Hour)).SetEndsAt(l.now.Add(21 * time.Hour)).
		SetOpenedBy("li").SetMaintainerID(l.maint["li"].ID).AddHostIDs(osk.host.ID).Save(ctx); err != nil {
		return err
	}
	if _, err := l.c.Notice.CreateBulk(
		l.c.Notice.Create().SetTitle("Welcome to the VirtFlow demo").SetSeverity(notice.SeverityInfo).SetAudience(notice.AudienceAll).
			SetBody("Two regions, three floors of cabled racks and a few running VMs per tenant to look at.").SetPublishedAt(l.now),
		l.c.Notice.Create().SetTitle("Network maintenance in tky1-dc1").SetSeverity(notice.SeverityImportant).
			SetAudience(notice.AudienceTenant).SetTenantID(l.tenants["acme"].ID).SetPublishedAt(l.now).
			SetBody("Rack-spine routers of floor-1-1-1 are upgraded one at a time next Tuesday 02:00-04:00 JST; "+
				"VM traffic keeps flowing over the redundant paths.").SetExpiresAt(l.now.Add(7*24*time.Hour)),
	).Save(ctx); err != nil {
		return err
	}
	_, err = l.c.AuditLog.Create().SetActor("system").SetAction("demo.load").SetObjectType("Region").
		SetObjectID(l.regions[0].ID).Save(ctx)
	return err
}

// demoConfigDrive is the config drive of a demo VM (the JSON of a configdrive.Spec, as
// provision.RenderConfigDrive writes it): its instance-id, name, NIC with its address and
// the network's gateway. The simulated fleet builds it, with a guest credential, and plays
// the guest that reads it.
func demoConfigDrive(vm *ent.VirtualMachine, mac string, ip netip.Addr, n *ent.Network) (string, error) {
	prefix, err := netip.ParsePrefix(n.Cidr)
	if err != nil {
		return "", fmt.Errorf("network %s: %w", n.Name, err)
	}
	nic := configdrive.NIC{MAC: mac, Addresses: []string{netip.PrefixFrom(ip, prefix.Bits()).String()}}
	if n.Gateway != "" {
		nic.Gateways = []string{n.Gateway}
	}
	b, err := json.Marshal(configdrive.Spec{InstanceID: fmt.Sprintf("vm-%d", vm.ID), Hostname: vm.Name, NICs: []configdrive.NIC{nic}})
	return string(b), err
}
