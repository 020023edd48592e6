package demo_test

import (
	"context"
	"database/sql"
	"fmt"
	"github.com/virtflow/virtflow/authz"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	_ "github.com/lib/pq"
	_ "modernc.org/sqlite"

	"github.com/virtflow/virtflow/demo"
	"github.com/virtflow/virtflow/domain/fabric"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/alert"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/host"
	"github.com/virtflow/virtflow/ent/migrate"
	"github.com/virtflow/virtflow/ent/rack"
	"github.com/virtflow/virtflow/ent/rolebinding"
	_ "github.com/virtflow/virtflow/ent/runtime"
	"github.com/virtflow/virtflow/ent/tenant"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

func openPostgres(t testing.TB, dsn string) (*ent.Client, *sql.DB) {
	t.Helper()
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	return migrated(t, db, dialect.Postgres)
}

func openSQLite(t testing.TB) (*ent.Client, *sql.DB) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "demo.db")
	db, err := sql.Open("sqlite", "file:"+path+
		"?_pragma=foreign_keys(1)&_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	return migrated(t, db, dialect.SQLite)
}

func migrated(t testing.TB, db *sql.DB, dia string) (*ent.Client, *sql.DB) {
	t.Helper()
	client := ent.NewClient(ent.Driver(entsql.OpenDB(dia, db)))
	t.Cleanup(func() { client.Close() })
	if err := client.Schema.Create(authz.SystemContext(context.Background(), "test"), migrate.WithForeignKeys(true)); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	return client, db
}

func TestLoadPostgres(t *testing.T) {
	client, db := openPostgres(t, testdb.DSN(t))
	testLoad(t, client, db)
}

func TestLoadSQLite(t *testing.T) {
	client, db := openSQLite(t)
	testLoad(t, client, db)
}

func testLoad(t *testing.T, client *ent.Client, db *sql.DB) {
	ctx := authz.SystemContext(context.Background(), "test")
	st, err := demo.Load(ctx, client, nil)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if st.AlreadyLoaded {
		t.Fatal("first Load reports AlreadyLoaded")
	}
	t.Logf("loaded %d rows in %v", st.Total(), st.Elapsed)
	for _, k := range slices.Sorted(maps.Keys(st.Counts)) {
		if st.Counts[k] > 0 {
			t.Logf("  %-18s %5d", k, st.Counts[k])
		}
	}

	checkCounts(t, st.Counts)
	checkRacks(t, client, db)
	checkNames(t, client)
	checkCabling(t, client, db)
	checkAllocation(t, client)
	checkTenantRoles(t, client)

	again, err := demo.Load(ctx, client, nil)
	if err != nil {
		t.Fatalf("second Load: %v", err)
	}
	if !again.AlreadyLoaded {
		t.Error("second Load does not report AlreadyLoaded")
	}
	if !maps.Equal(again.Counts, st.Counts) {
		for k, v := range st.Counts {
			if again.Counts[k] != v {
				t.Errorf("after second Load: %s = %d, was %d", k, again.Counts[k], v)
			}
		}
	}
}

// checkTenantRoles: every member of a tenant holds the tenant-member role there (so the demo's
// users see their tenant when they sign in), and no one holds it elsewhere.
func checkTenantRoles(t *testing.T, client *ent.Client) {
	t.Helper()
	ctx := authz.SystemContext(context.Background(), "test")
	want := map[string]bool{}
	for _, tn := range client.Tenant.Query().WithMembers().AllX(ctx) {
		for _, u := range tn.Edges.Members {
			want[fmt.Sprint(u.Username, "@", tn.Name, " ", authz.TenantDomain(tn.ID))] = true
		}
	}
	if !want["alice@acme "+authz.TenantDomain(client.Tenant.Query().Where(tenant.Name("acme")).OnlyX(ctx).ID)] {
		t.Errorf("alice is not a member of acme: %v", want)
	}
	got := map[string]bool{}
	for _, b := range client.RoleBinding.Query().Where(rolebinding.RoleEQ(rolebinding.RoleTenantMember)).WithUser().WithTenant().AllX(ctx) {
		if b.Edges.Tenant == nil {
			t.Errorf("tenant-member binding %d has no tenant", b.ID)
			continue
		}
		got[fmt.Sprint(b.Edges.User.Username, "@", b.Edges.Tenant.Name, " ", b.Domain)] = true
	}
	if !maps.Equal(got, want) {
		t.Errorf("tenant-member bindings %v, want one per membership %v", got, want)
	}
}

func checkCounts(t *testing.T, counts map[string]int) {
	t.Helper()
	atLeast := map[string]int{
		"Region": 2, "AvailabilityZone": 6, "Datacenter": 2, "Floor": 3, "Rack": 24, "Cluster": 3,
		"Provider": 2, "Flavor": 4, "Image": 3, "Tenant": 3, "User": 3, "Maintainer": 5, "MaintainerGroup": 3,
		"HostGroup": 3, "Quota": 3, "Network": 3, "VirtualMachine": 3, "EventRule": 1, "Notice": 1, "ServiceMesh": 1,
		"PowerZone": 3, "NetworkZone": 3, "RackZone": 12,
	}
	for k, n := range atLeast {
		if counts[k] < n {
			t.Errorf("%s = %d, want at least %d", k, counts[k], n)
		}
	}
	exactly := map[string]int{"Region": 2, "AvailabilityZone": 6, "Datacenter": 2}
	for k, n := range exactly {
		if counts[k] != n {
			t.Errorf("%s = %d, want %d", k, counts[k], n)
		}
	}
	if counts["ComputeNode"] == 0 || counts["ComputeNode"] != counts["IPAddress"]-counts["VirtualMachine"] {
		t.Errorf("compute nodes = %d, management addresses = %d: want one per server",
			counts["ComputeNode"], counts["IPAddress"]-counts["VirtualMachine"])
	}
}

func queryInt(t *testing.T, db *sql.DB, q string) int {
	t.Helper()
	var n int
	if err := db.QueryRow(q).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

func checkRacks(t *testing.T, client *ent.Client, db *sql.DB) {
	t.Helper()
	ctx := authz.SystemContext(context.Background(), "test")
	if n := client.Rack.Query().Where(rack.HeightNEQ(42)).CountX(ctx); n != 0 {
		t.Errorf("%d racks are not 42U", n)
	}
	serverRacks := queryInt(t, db, `SELECT count(*) FROM racks r
		WHERE EXISTS (SELECT 1 FROM hosts h WHERE h.rack_hosts = r.id AND h.kind = 'SERVER')`)
	if serverRacks < 24 {
		t.Errorf("racks with servers = %d, want at least 24", serverRacks)
	}
	if n := queryInt(t, db, `SELECT count(*) FROM racks r
		WHERE EXISTS (SELECT 1 FROM hosts h WHERE h.rack_hosts = r.id AND h.kind = 'SERVER')
		  AND (SELECT count(*) FROM hosts h WHERE h.rack_hosts = r.id AND h.role = 'RACK_LEAF' AND h.kind = 'ROUTER') <> 2`); n != 0 {
		t.Errorf("%d server racks do not have exactly 2 rack-leaf routers", n)
	}
	// Devices of a rack never share a unit and always fit in the rack.
	if n := queryInt(t, db, `SELECT count(*) FROM hosts a JOIN hosts b ON a.rack_hosts = b.rack_hosts AND a.id < b.id
		WHERE a.position IS NOT NULL AND b.position IS NOT NULL
		  AND a.position <= b.position + b.height - 1 AND b.position <= a.position + a.height - 1`); n != 0 {
		t.Errorf("%d pairs of devices overlap in a rack", n)
	}
	if n := queryInt(t, db, `SELECT count(*) FROM hosts h JOIN racks r ON h.rack_hosts = r.id
		WHERE h.position IS NOT NULL AND (h.position < 1 OR h.position + h.height - 1 > r.height)`); n != 0 {
		t.Errorf("%d devices stick out of their rack", n)
	}
	// Rack pairs share a rack zone; no rack zone holds more than a pair.
	if n := queryInt(t, db, `SELECT count(*) FROM (SELECT rack_zone_racks FROM racks WHERE rack_zone_racks IS NOT NULL
		GROUP BY rack_zone_racks HAVING count(*) <> 2) z`); n != 0 {
		t.Errorf("%d rack zones do not hold exactly one rack pair", n)
	}
}

var (
	site = `(tky1-dc1|osk1-dc1)-`
	fl   = `floor-\d+-\d+-\d+`
	rk   = `rack-\d+-\d+`
)

var namePatterns = map[host.Role]*regexp.Regexp{
	host.RoleGatewayRouter: regexp.MustCompile(`^` + site + `root-[12]-gateway-router01$`),
	host.RoleFloorSpine:    regexp.MustCompile(`^` + site + `root-1-floor-spine-router0[1-4]$`),
	host.RoleFloorLeaf:     regexp.MustCompile(`^` + site + fl + `-floor-leaf-router0[1-4]$`),
	host.RoleRackSpine:     regexp.MustCompile(`^` + site + fl + `-rack-spine-router0[1-8]$`),
	host.RoleRackLeaf:      regexp.MustCompile(`^` + site + fl + `-` + rk + `-rack-leaf-router0[12]$`),
}

var serverPattern = regexp.MustCompile(`^` + site + fl + `-` + rk + `-server\d\d$`)

func checkNames(t *testing.T, client *ent.Client) {
	t.Helper()
	hosts := client.Host.Query().WithRack(func(q *ent.RackQuery) {
		q.WithFloor(func(q *ent.FloorQuery) { q.WithDatacenter() })
	}).AllX(authz.SystemContext(context.Background(), "test"))
	roles := map[host.Role]int{}
	for _, h := range hosts {
		switch h.Kind {
		case host.KindServer:
			if !serverPattern.MatchString(h.Name) {
				t.Errorf("server %s does not follow the naming scheme", h.Name)
			}
		case host.KindRouter:
			var role host.Role
			if h.Role != nil {
				role = *h.Role
			}
			roles[role]++
			if p := namePatterns[role]; p == nil || !p.MatchString(h.Name) {
				t.Errorf("router %s (role %q) does not follow the naming scheme", h.Name, role)
			}
		default:
			t.Errorf("unexpected host %s of kind %s", h.Name, h.Kind)
		}
		// Servers and rack-leaf routers carry the names of their datacenter, floor and rack.
		if h.Kind == host.KindServer || (h.Role != nil && *h.Role == host.RoleRackLeaf) {
			r := h.Edges.Rack
			if r == nil {
				t.Errorf("%s is not in a rack", h.Name)
				continue
			}
			want := r.Edges.Floor.Edges.Datacenter.Name + "-" + r.Edges.Floor.Name + "-" + r.Name + "-"
			if !strings.HasPrefix(h.Name, want) {
				t.Errorf("%s is in %s", h.Name, want)
			}
		}
	}
	want := map[host.Role]int{host.RoleGatewayRouter: 4, host.RoleFloorSpine: 8, host.RoleFloorLeaf: 12, host.RoleRackSpine: 24}
	for role, n := range want {
		if roles[role] != n {
			t.Errorf("%s routers = %d, want %d", role, roles[role], n)
		}
	}
}

func checkCabling(t *testing.T, client *ent.Client, db *sql.DB) {
	t.Helper()
	if n := queryInt(t, db, `SELECT count(*) FROM (
		SELECT p FROM (SELECT port_link_a AS p FROM links UNION ALL SELECT port_link_b FROM links) ends
		GROUP BY p HAVING count(*) > 1) dup`); n != 0 {
		t.Errorf("%d ports are the end of more than one link", n)
	}
	if n := queryInt(t, db, `SELECT count(*) FROM hosts h WHERE h.kind = 'SERVER' AND (
		SELECT count(*) FROM ports p WHERE p.host_ports = h.id
		  AND EXISTS (SELECT 1 FROM links l WHERE l.port_link_a = p.id OR l.port_link_b = p.id)) <> 2`); n != 0 {
		t.Errorf("%d servers do not have exactly 2 cabled ports", n)
	}
	// Every server's eth0 goes to its own rack's leaf01, eth1 to the paired rack's leaf02, and
	// every label names both ends.
	withHost := func(q *ent.PortQuery) {
		q.WithHost(func(q *ent.HostQuery) { q.WithRack(func(q *ent.RackQuery) { q.WithRackZone() }) })
	}
	links := client.Link.Query().WithAPort(withHost).WithBPort(withHost).AllX(authz.SystemContext(context.Background(), "test"))
	servers := 0
	for _, l := range links {
		a, b := l.Edges.APort, l.Edges.BPort
		if want := fabric.LinkLabel(a.Edges.Host.Name, a.Name, b.Edges.Host.Name, b.Name); l.Label != want {
			t.Errorf("link %d label = %q, want %q", l.ID, l.Label, want)
		}
		ha, hb := a.Edges.Host, b.Edges.Host
		if ha.Kind != host.KindServer {
			continue
		}
		servers++
		ra, rb := ha.Edges.Rack, hb.Edges.Rack
		switch a.Name {
		case "eth0":
			if ra.ID != rb.ID || !strings.HasSuffix(hb.Name, "-rack-leaf-router01") {
				t.Errorf("%s: eth0 should go to the own rack's leaf01", l.Label)
			}
		case "eth1":
			if ra.ID == rb.ID || ra.Edges.RackZone == nil || rb.Edges.RackZone == nil ||
				ra.Edges.RackZone.ID != rb.Edges.RackZone.ID || !strings.HasSuffix(hb.Name, "-rack-leaf-router02") {
				t.Errorf("%s: eth1 should go to the paired rack's leaf02", l.Label)
			}
		default:
			t.Errorf("%s: unexpected server port", l.Label)
		}
	}
	if servers == 0 {
		t.Error("no server links")
	}
}

// checkAllocation checks every node's allocation is the sum of the VMs on it, every quota's
// usage the sum of its tenant's VMs in its host group, and that few alerts are open.
func checkAllocation(t *testing.T, client *ent.Client) {
	t.Helper()
	ctx := authz.SystemContext(context.Background(), "test")
	nodes := client.ComputeNode.Query().WithHost().
		WithVirtualMachines(func(q *ent.VirtualMachineQuery) { q.WithFlavor().WithTenant() }).AllX(ctx)
	type use struct {
		cpu       int
		mem, disk int64
	}
	tenantHost := map[string]*use{} // tenant/host id
	for _, n := range nodes {
		var u use
		for _, vm := range n.Edges.VirtualMachines {
			f := vm.Edges.Flavor
			u.cpu += f.Vcpus
			u.mem += f.MemoryMB
			u.disk += f.DiskGB
			k := fmt.Sprint(vm.Edges.Tenant.ID, "/", n.Edges.Host.ID)
			if tenantHost[k] == nil {
				tenantHost[k] = &use{}
			}
			tenantHost[k].cpu += f.Vcpus
			tenantHost[k].mem += f.MemoryMB
			tenantHost[k].disk += f.DiskGB
		}
		if n.CPUAllocated != u.cpu || n.MemoryAllocatedMB != u.mem || n.DiskAllocatedGB != u.disk {
			t.Errorf("node %s allocated %d/%d/%d, VMs on it use %d/%d/%d", n.Name,
				n.CPUAllocated, n.MemoryAllocatedMB, n.DiskAllocatedGB, u.cpu, u.mem, u.disk)
		}
		if n.CPUAllocated > n.CPUCapacity || n.MemoryAllocatedMB > n.MemoryCapacityMB || n.DiskAllocatedGB > n.DiskCapacityGB {
			t.Errorf("node %s is overcommitted", n.Name)
		}
		if n.Status != computenode.StatusReady || !n.Schedulable || n.CPUCapacity != n.Edges.Host.CPUThreads ||
			n.MemoryCapacityMB >= n.Edges.Host.MemoryMB || n.DiskCapacityGB == 0 {
			t.Errorf("node %s: status %s schedulable %v capacity %d/%d/%d for host threads %d memory %d", n.Name,
				n.Status, n.Schedulable, n.CPUCapacity, n.MemoryCapacityMB, n.DiskCapacityGB, n.Edges.Host.CPUThreads, n.Edges.Host.MemoryMB)
		}
	}
	quotas := client.Quota.Query().WithTenant().WithHostGroup(func(q *ent.HostGroupQuery) {
		q.WithHosts(func(q *ent.HostQuery) { q.Select(host.FieldID) })
	}).AllX(ctx)
	vms := 0
	for _, q := range quotas {
		var u use
		for _, h := range q.Edges.HostGroup.Edges.Hosts {
			if th := tenantHost[fmt.Sprint(q.Edges.Tenant.ID, "/", h.ID)]; th != nil {
				u.cpu += th.cpu
				u.mem += th.mem
				u.disk += th.disk
				vms++
			}
		}
		if q.UsedVcpus != u.cpu || q.UsedMemoryMB != u.mem || q.UsedStorageGB != u.disk {
			t.Errorf("quota of %s on %s uses %d/%d/%d, its VMs %d/%d/%d", q.Edges.Tenant.Name, q.Edges.HostGroup.Name,
				q.UsedVcpus, q.UsedMemoryMB, q.UsedStorageGB, u.cpu, u.mem, u.disk)
		}
	}
	if vms != len(tenantHost) {
		t.Errorf("%d tenant/node placements are outside the tenant's quotas", len(tenantHost)-vms)
	}
	if n := client.Alert.Query().Where(alert.StatusEQ(alert.StatusOpen)).CountX(ctx); n < 1 || n > 3 {
		t.Errorf("open alerts = %d, want 1 to 3", n)
	}
}

// TestLoadRollsBack checks a failing load leaves nothing behind.
func TestLoadRollsBack(t *testing.T) {
	ctx := authz.SystemContext(context.Background(), "test")
	client, _ := openSQLite(t)
	// A host already named like a demo router makes the fabric step fail late in the load.
	client.Host.Create().SetName(fabric.GatewayName("tky1-dc1-", 1)).SaveX(ctx)
	if _, err := demo.Load(ctx, client, nil); err == nil || !strings.Contains(err.Error(), "already has its root routers") {
		t.Fatalf("Load: err = %v, want the fabric's conflict", err)
	}
	counts, err := demo.Counts(ctx, client)
	if err != nil {
		t.Fatal(err)
	}
	for k, n := range counts {
		if want := map[string]int{"Host": 1}[k]; n != want {
			t.Errorf("after a failed load %s = %d, want %d", k, n, want)
		}
	}
}

func benchmarkLoad(b *testing.B, open func(testing.TB) (*ent.Client, *sql.DB)) {
	for range b.N {
		b.StopTimer()
		client, _ := open(b)
		b.StartTimer()
		st, err := demo.Load(authz.SystemContext(context.Background(), "test"), client, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(st.Total()), "rows")
	}
}

func BenchmarkLoadSQLite(b *testing.B) { benchmarkLoad(b, openSQLite) }

func BenchmarkLoadPostgres(b *testing.B) {
	benchmarkLoad(b, func(tb testing.TB) (*ent.Client, *sql.DB) { return openPostgres(tb, testdb.New(tb)) })
}
