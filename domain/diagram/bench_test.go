package diagram_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/virtflow/virtflow/domain/diagram"
	"github.com/virtflow/virtflow/graph"
	"github.com/virtflow/virtflow/internal/platform/infra"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
)

// Benchmarks of issue 4 (run: go test ./domain/diagram/ -run '^$' -bench . -benchtime 200x):
//
//   - BenchmarkRackElevation and BenchmarkFloorView: the GraphQL query through the real HTTP
//     handler (token authentication, privacy rules, gqlgen) against hand-written SQL on
//     database/sql that reads the same rows and encodes them as JSON, alternating in the same
//     loop, on a site of 10 racks × 40 servers × 4 ports (1,600 server ports, all cabled and
//     addressed, plus the fabric); they report p50 and p99 of both and the ratios.
//   - BenchmarkHostsListing: hosts(first: 1000) with 0 to 8 related objects selected, all nine
//     variants in the same loop; it reports the time with 0 and 8 relations and the marginal
//     cost of one relation (the slope of the medians).
//
// The fixtures are built once per test binary (bulk inserts) in the package's database.

var (
	benchOnce sync.Once
	benchSite *site
	hostsOnce sync.Once
	hostsSite *site
)

// benchEnv opens the package's database with the real handler and builds the fixtures once.
func benchEnv(b *testing.B) *gqltest.Env {
	b.Helper()
	env := newEnv(b) // skips without PostgreSQL, like the tests
	return env
}

func rackSite(b *testing.B, env *gqltest.Env) *site {
	benchOnce.Do(func() {
		t0 := time.Now()
		benchSite = buildSite(b, env.Client, siteSpec{Racks: 10, Servers: 40, Ports: 4, VMsPerNode: 2, Fabric: true})
		analyze(b, env)
		b.Logf("10x40x4 site built in %v", time.Since(t0).Round(time.Millisecond))
	})
	if benchSite == nil {
		b.Fatal("the fixture failed to build in an earlier benchmark")
	}
	return benchSite
}

// analyze refreshes the planner's statistics after a bulk load, as autovacuum would on a
// live database, so that neither side of a comparison runs on plans made for empty tables.
func analyze(b *testing.B, env *gqltest.Env) {
	if _, err := env.DB.DB.Exec("ANALYZE"); err != nil {
		b.Fatalf("analyze: %v", err)
	}
}

// timings collects durations and reports percentiles.
type timings []time.Duration

func (t timings) pct(p int) float64 {
	s := slices.Clone(t)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return float64(s[min(len(s)-1, len(s)*p/100)].Nanoseconds())
}

// compare reports p50 and p99 of the GraphQL request, of the view alone and of the SQL, and
// the ratios to the SQL.
func compare(b *testing.B, gql, view, raw timings) {
	for _, m := range []struct {
		name string
		t    timings
	}{{"graphql", gql}, {"view", view}, {"sql", raw}} {
		b.ReportMetric(m.t.pct(50), m.name+"-p50-ns")
		b.ReportMetric(m.t.pct(99), m.name+"-p99-ns")
	}
	b.ReportMetric(gql.pct(50)/raw.pct(50), "p50-ratio")
	b.ReportMetric(gql.pct(99)/raw.pct(99), "p99-ratio")
	b.ReportMetric(view.pct(50)/raw.pct(50), "view-p50-ratio")
}

// graphQL posts a query to the handler as the admin and fails on any error.
func graphQL(b testing.TB, h http.Handler, query string, vars map[string]any) []byte {
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req := httptest.NewRequest(http.MethodPost, "/query", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+gqltest.AdminToken)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || bytes.Contains(rec.Body.Bytes(), []byte(`"errors"`)) {
		b.Fatalf("HTTP %d: %.500s", rec.Code, rec.Body.String())
	}
	return rec.Body.Bytes()
}

// mustView fails the benchmark when a view fails.
func mustView(b *testing.B) func(any, error) {
	return func(_ any, err error) {
		if err != nil {
			b.Fatal(err)
		}
	}
}

// countingHandler is the real handler over a client that counts the views' statements (token
// authentication reads through its own client and is not counted).
func countingHandler(env *gqltest.Env) (http.Handler, *counter) {
	c, n := countingClient(env)
	h := gqltest.NewHandler(&infra.Database{Client: c, DB: env.DB.DB, Dialect: env.DB.Dialect}, env.Identity, graph.DefaultOptions())
	return h, n
}

// run answers the same question three ways in turn, b.N times each — the GraphQL request
// through the real HTTP handler, the diagram function alone (same viewer, no HTTP, token or
// gqlgen), and the hand-written SQL — rotating which goes first, and reports how they compare
// and how many statements each runs (the view's counted before the loop: b.Loop drops metrics
// reported earlier).
func run(b *testing.B, viewStmts, rawStmts int64, gql, view, raw func()) {
	ways := []func(){gql, view, raw}
	times := make([]timings, len(ways))
	i := 0
	for b.Loop() {
		for k := range ways {
			w := (i + k) % len(ways)
			t0 := time.Now()
			ways[w]()
			times[w] = append(times[w], time.Since(t0))
		}
		i++
	}
	compare(b, times[0], times[1], times[2])
	b.ReportMetric(float64(viewStmts), "view-stmts")
	b.ReportMetric(float64(rawStmts), "sql-stmts")
}

func BenchmarkRackElevation(b *testing.B) {
	env := benchEnv(b)
	s := rackSite(b, env)
	h, stmts := countingHandler(env)
	id := s.racks[3].ID
	vars := map[string]any{"id": id}
	var out struct {
		Data struct{ RackElevation gqlElevation }
	}
	if err := json.Unmarshal(graphQL(b, h, elevationQuery, vars), &out); err != nil || len(out.Data.RackElevation.Devices) != 43 {
		b.Fatalf("rackElevation: %d devices, %v", len(out.Data.RackElevation.Devices), err)
	}
	if raw := rackSQL(b, env.DB.DB, id); !bytes.Contains(raw, []byte(`"devices"`)) {
		b.Fatalf("hand-written SQL: %s", raw)
	}
	stmts.n.Store(0)
	graphQL(b, h, elevationQuery, vars)
	ctx := viewerCtx(b, env, gqltest.AdminToken)
	run(b, stmts.n.Load(), 4,
		func() { graphQL(b, h, elevationQuery, vars) },
		func() { mustView(b)(diagram.Rack(ctx, env.Client, id)) },
		func() { rackSQL(b, env.DB.DB, id) })
}

const floorQuery = `query($id: ID!) { floorView(id: $id) { id name datacenterID datacenterName
  racks { rack { id name row position height status floorID floorName datacenterID datacenterName powerZone networkZone rackZone }
    usedUnits freeUnits hosts
    capacity { nodes readyNodes cpuCapacity cpuAllocated memoryCapacityMB memoryAllocatedMB diskCapacityGB diskAllocatedGB }
    alerts { fatal critical warning worst } } } }`

func BenchmarkFloorView(b *testing.B) {
	env := benchEnv(b)
	s := rackSite(b, env)
	h, stmts := countingHandler(env)
	vars := map[string]any{"id": s.floor.ID}
	if got := graphQL(b, h, floorQuery, vars); bytes.Count(got, []byte(`"usedUnits"`)) != 11 {
		b.Fatalf("floorView: %.300s", got)
	}
	if raw := floorSQL(b, env.DB.DB, s.floor.ID); bytes.Count(raw, []byte(`"usedUnits"`)) != 11 {
		b.Fatalf("hand-written SQL: %.300s", raw)
	}
	stmts.n.Store(0)
	graphQL(b, h, floorQuery, vars)
	ctx := viewerCtx(b, env, gqltest.AdminToken)
	run(b, stmts.n.Load(), 4,
		func() { graphQL(b, h, floorQuery, vars) },
		func() { mustView(b)(diagram.Floor(ctx, env.Client, s.floor.ID)) },
		func() { floorSQL(b, env.DB.DB, s.floor.ID) })
}

// --- hand-written SQL ---

// The JSON shapes the hand-written SQL answers with: those of the GraphQL responses.
type (
	jsonAlerts struct {
		Fatal    int     `json:"fatal"`
		Critical int     `json:"critical"`
		Warning  int     `json:"warning"`
		Worst    *string `json:"worst"`
	}
	jsonRack struct {
		ID             string  `json:"id"`
		Name           string  `json:"name"`
		Row            string  `json:"row"`
		Position       int     `json:"position"`
		Height         int     `json:"height"`
		Status         string  `json:"status"`
		FloorID        string  `json:"floorID"`
		FloorName      string  `json:"floorName"`
		DatacenterID   string  `json:"datacenterID"`
		DatacenterName string  `json:"datacenterName"`
		PowerZone      *string `json:"powerZone"`
		NetworkZone    *string `json:"networkZone"`
		RackZone       *string `json:"rackZone"`
	}
	jsonNode struct {
		ID                string `json:"id"`
		Name              string `json:"name"`
		Status            string `json:"status"`
		Cordoned          bool   `json:"cordoned"`
		CPUCapacity       int    `json:"cpuCapacity"`
		CPUAllocated      int    `json:"cpuAllocated"`
		MemoryCapacityMB  int64  `json:"memoryCapacityMB"`
		MemoryAllocatedMB int64  `json:"memoryAllocatedMB"`
		VMCount           int    `json:"vmCount"`
	}
	jsonResponsible struct {
		ID    string `json:"id"`
		Name  string `json:"name"`
		Group bool   `json:"group"`
	}
	jsonDevice struct {
		ID          string            `json:"id"`
		Name        string            `json:"name"`
		Kind        string            `json:"kind"`
		Role        *string           `json:"role"`
		Model       string            `json:"model"`
		Position    int               `json:"position"`
		Height      int               `json:"height"`
		Face        string            `json:"face"`
		FullDepth   bool              `json:"fullDepth"`
		Lifecycle   string            `json:"lifecycle"`
		Node        *jsonNode         `json:"node"`
		Alerts      jsonAlerts        `json:"alerts"`
		Maintainers []jsonResponsible `json:"maintainers"`
	}
	jsonUnit struct {
		Unit          int     `json:"unit"`
		FrontDeviceID *string `json:"frontDeviceID"`
		RearDeviceID  *string `json:"rearDeviceID"`
	}
	jsonCapacity struct {
		Nodes             int   `json:"nodes"`
		ReadyNodes        int   `json:"readyNodes"`
		CPUCapacity       int   `json:"cpuCapacity"`
		CPUAllocated      int   `json:"cpuAllocated"`
		MemoryCapacityMB  int64 `json:"memoryCapacityMB"`
		MemoryAllocatedMB int64 `json:"memoryAllocatedMB"`
		DiskCapacityGB    int64 `json:"diskCapacityGB"`
		DiskAllocatedGB   int64 `json:"diskAllocatedGB"`
	}
	jsonFloorRack struct {
		Rack      jsonRack     `json:"rack"`
		UsedUnits int          `json:"usedUnits"`
		FreeUnits int          `json:"freeUnits"`
		Hosts     int          `json:"hosts"`
		Capacity  jsonCapacity `json:"capacity"`
		Alerts    jsonAlerts   `json:"alerts"`
	}
)

func (a *jsonAlerts) add(sev string, n int) {
	switch sev {
	case "FATAL":
		a.Fatal += n
	case "CRITICAL":
		a.Critical += n
	case "WARNING":
		a.Warning += n
	}
	for _, s := range []struct {
		n    int
		name string
	}{{a.Fatal, "FATAL"}, {a.Critical, "CRITICAL"}, {a.Warning, "WARNING"}} {
		if s.n > 0 {
			w := s.name
			a.Worst = &w
			return
		}
	}
}

func str(id int64) string { return strconv.FormatInt(id, 10) }

func nullStr(s sql.NullString) *string {
	if !s.Valid {
		return nil
	}
	return &s.String
}

func check(b *testing.B, err error) {
	if err != nil {
		b.Helper()
		b.Fatal(err)
	}
}

// rackSQL answers rackElevation with four statements and encodes it as JSON.
func rackSQL(b *testing.B, db *sql.DB, rackID int) []byte {
	ctx := context.Background()
	var rk jsonRack
	var id, floorID, dcID int64
	var pz, nz, rz sql.NullString
	err := db.QueryRowContext(ctx, `SELECT r.id, r.name, coalesce(r.row, ''), coalesce(r.position, 0), r.height, r.status,
	  f.id, f.name, d.id, d.name, pz.name, nz.name, rz.name
	FROM racks r JOIN floors f ON f.id = r.floor_racks JOIN datacenters d ON d.id = f.datacenter_floors
	LEFT JOIN power_zones pz ON pz.id = r.power_zone_racks LEFT JOIN network_zones nz ON nz.id = r.network_zone_racks
	LEFT JOIN rack_zones rz ON rz.id = r.rack_zone_racks
	WHERE r.id = $1`, rackID).Scan(&id, &rk.Name, &rk.Row, &rk.Position, &rk.Height, &rk.Status, &floorID, &rk.FloorName, &dcID, &rk.DatacenterName, &pz, &nz, &rz)
	check(b, err)
	rk.ID, rk.FloorID, rk.DatacenterID = str(id), str(floorID), str(dcID)
	rk.PowerZone, rk.NetworkZone, rk.RackZone = nullStr(pz), nullStr(nz), nullStr(rz)

	rows, err := db.QueryContext(ctx, `WITH d AS (
	  SELECT h.id, h.name, h.kind, h.role, coalesce(h.model, '') AS model, h.position, h.height, h.face, h.full_depth,
	    h.lifecycle, n.id AS nid, n.name AS nname, n.status, n.schedulable, n.cpu_capacity, n.cpu_allocated,
	    n.memory_capacity_mb, n.memory_allocated_mb
	  FROM hosts h LEFT JOIN compute_nodes n ON n.host_node = h.id
	  WHERE h.rack_hosts = $1 AND h.position IS NOT NULL),
	vms AS (SELECT compute_node_virtual_machines AS nid, count(*) AS n FROM virtual_machines
	  WHERE compute_node_virtual_machines IN (SELECT nid FROM d) AND status <> 'DELETED' GROUP BY 1)
	SELECT d.*, coalesce(vms.n, 0) FROM d LEFT JOIN vms ON vms.nid = d.nid
	ORDER BY d.position DESC, d.face, d.id`, rackID)
	check(b, err)
	var devices []*jsonDevice
	byID := map[string]*jsonDevice{}
	for rows.Next() {
		var d jsonDevice
		var hid int64
		var role sql.NullString
		var nid sql.NullInt64
		var nname, nstatus sql.NullString
		var sched sql.NullBool
		var cpuCap, cpuAlloc, memCap, memAlloc sql.NullInt64
		var vms int
		check(b, rows.Scan(&hid, &d.Name, &d.Kind, &role, &d.Model, &d.Position, &d.Height, &d.Face, &d.FullDepth, &d.Lifecycle,
			&nid, &nname, &nstatus, &sched, &cpuCap, &cpuAlloc, &memCap, &memAlloc, &vms))
		d.ID, d.Role, d.Maintainers = str(hid), nullStr(role), []jsonResponsible{}
		if nid.Valid {
			d.Node = &jsonNode{ID: str(nid.Int64), Name: nname.String, Status: nstatus.String, Cordoned: !sched.Bool,
				CPUCapacity: int(cpuCap.Int64), CPUAllocated: int(cpuAlloc.Int64), MemoryCapacityMB: memCap.Int64,
				MemoryAllocatedMB: memAlloc.Int64, VMCount: vms}
		}
		devices = append(devices, &d)
		byID[d.ID] = &d
	}
	check(b, rows.Err())

	rows, err = db.QueryContext(ctx, `SELECT coalesce(a.host_alerts, n.host_node), a.severity, count(*)
	FROM alerts a LEFT JOIN compute_nodes n ON n.id = a.compute_node_alerts
	WHERE a.status = 'OPEN' AND coalesce(a.host_alerts, n.host_node) IN (SELECT id FROM hosts WHERE rack_hosts = $1)
	GROUP BY 1, 2`, rackID)
	check(b, err)
	for rows.Next() {
		var hid int64
		var sev string
		var n int
		check(b, rows.Scan(&hid, &sev, &n))
		if d := byID[str(hid)]; d != nil {
			d.Alerts.add(sev, n)
		}
	}
	check(b, rows.Err())

	rows, err = db.QueryContext(ctx, `SELECT mh.host_id, m.id, m.name, false FROM maintainer_hosts mh
	  JOIN maintainers m ON m.id = mh.maintainer_id JOIN hosts h ON h.id = mh.host_id WHERE h.rack_hosts = $1
	UNION ALL SELECT gh.host_id, g.id, g.name, true FROM maintainer_group_hosts gh
	  JOIN maintainer_groups g ON g.id = gh.maintainer_group_id JOIN hosts h ON h.id = gh.host_id WHERE h.rack_hosts = $1
	ORDER BY 1, 4, 3`, rackID)
	check(b, err)
	for rows.Next() {
		var hid, mid int64
		var r jsonResponsible
		check(b, rows.Scan(&hid, &mid, &r.Name, &r.Group))
		r.ID = str(mid)
		if d := byID[str(hid)]; d != nil {
			d.Maintainers = append(d.Maintainers, r)
		}
	}
	check(b, rows.Err())

	units := make([]jsonUnit, rk.Height)
	used := 0
	for i := range units {
		units[i].Unit = rk.Height - i
	}
	for _, d := range devices {
		for u := d.Position; u < d.Position+d.Height && u <= rk.Height; u++ {
			id := d.ID
			if d.FullDepth || d.Face == "FRONT" {
				units[rk.Height-u].FrontDeviceID = &id
			}
			if d.FullDepth || d.Face == "REAR" {
				units[rk.Height-u].RearDeviceID = &id
			}
		}
	}
	for _, u := range units {
		if u.FrontDeviceID != nil || u.RearDeviceID != nil {
			used++
		}
	}
	out, err := json.Marshal(map[string]any{"data": map[string]any{"rackElevation": map[string]any{
		"rack": rk, "units": units, "devices": devices, "usedUnits": used, "freeUnits": rk.Height - used}}})
	check(b, err)
	return out
}

// floorSQL answers floorView with four statements and encodes it as JSON.
func floorSQL(b *testing.B, db *sql.DB, floorID int) []byte {
	ctx := context.Background()
	var fid, dcID int64
	var name, dcName string
	check(b, db.QueryRowContext(ctx, `SELECT f.id, f.name, d.id, d.name FROM floors f JOIN datacenters d ON d.id = f.datacenter_floors
	WHERE f.id = $1`, floorID).Scan(&fid, &name, &dcID, &dcName))

	rows, err := db.QueryContext(ctx, `SELECT r.id, r.name, coalesce(r.row, ''), coalesce(r.position, 0), r.height, r.status,
	  pz.name, nz.name, rz.name
	FROM racks r LEFT JOIN power_zones pz ON pz.id = r.power_zone_racks LEFT JOIN network_zones nz ON nz.id = r.network_zone_racks
	LEFT JOIN rack_zones rz ON rz.id = r.rack_zone_racks
	WHERE r.floor_racks = $1 ORDER BY r.row, r.position, r.name`, floorID)
	check(b, err)
	var racks []*jsonFloorRack
	byID := map[int64]*jsonFloorRack{}
	for rows.Next() {
		var fr jsonFloorRack
		var id int64
		var pz, nz, rz sql.NullString
		check(b, rows.Scan(&id, &fr.Rack.Name, &fr.Rack.Row, &fr.Rack.Position, &fr.Rack.Height, &fr.Rack.Status, &pz, &nz, &rz))
		fr.Rack.ID, fr.Rack.FloorID, fr.Rack.FloorName, fr.Rack.DatacenterID, fr.Rack.DatacenterName = str(id), str(fid), name, str(dcID), dcName
		fr.Rack.PowerZone, fr.Rack.NetworkZone, fr.Rack.RackZone = nullStr(pz), nullStr(nz), nullStr(rz)
		racks = append(racks, &fr)
		byID[id] = &fr
	}
	check(b, rows.Err())

	rows, err = db.QueryContext(ctx, `SELECT h.rack_hosts, h.position, h.height, h.face, h.full_depth, n.status,
	  n.cpu_capacity, n.cpu_allocated, n.memory_capacity_mb, n.memory_allocated_mb, n.disk_capacity_gb, n.disk_allocated_gb
	FROM hosts h JOIN racks r ON r.id = h.rack_hosts LEFT JOIN compute_nodes n ON n.host_node = h.id
	WHERE r.floor_racks = $1 AND h.position IS NOT NULL`, floorID)
	check(b, err)
	front, rear := map[int64]map[int]bool{}, map[int64]map[int]bool{}
	for rows.Next() {
		var rid int64
		var pos, height int
		var face string
		var full bool
		var status sql.NullString
		var cpuCap, cpuAlloc, memCap, memAlloc, diskCap, diskAlloc sql.NullInt64
		check(b, rows.Scan(&rid, &pos, &height, &face, &full, &status, &cpuCap, &cpuAlloc, &memCap, &memAlloc, &diskCap, &diskAlloc))
		fr := byID[rid]
		if fr == nil {
			continue
		}
		fr.Hosts++
		if front[rid] == nil {
			front[rid], rear[rid] = map[int]bool{}, map[int]bool{}
		}
		for u := pos; u < pos+height && u <= fr.Rack.Height; u++ {
			if full || face == "FRONT" {
				front[rid][u] = true
			}
			if full || face == "REAR" {
				rear[rid][u] = true
			}
		}
		if status.Valid {
			c := &fr.Capacity
			c.Nodes++
			if status.String == "READY" {
				c.ReadyNodes++
			}
			c.CPUCapacity += int(cpuCap.Int64)
			c.CPUAllocated += int(cpuAlloc.Int64)
			c.MemoryCapacityMB += memCap.Int64
			c.MemoryAllocatedMB += memAlloc.Int64
			c.DiskCapacityGB += diskCap.Int64
			c.DiskAllocatedGB += diskAlloc.Int64
		}
	}
	check(b, rows.Err())
	for id, fr := range byID {
		for u := 1; u <= fr.Rack.Height; u++ {
			if front[id][u] || rear[id][u] {
				fr.UsedUnits++
			}
		}
		fr.FreeUnits = fr.Rack.Height - fr.UsedUnits
	}

	rows, err = db.QueryContext(ctx, `SELECT h.rack_hosts, a.severity, count(*)
	FROM alerts a LEFT JOIN compute_nodes n ON n.id = a.compute_node_alerts
	JOIN hosts h ON h.id = coalesce(a.host_alerts, n.host_node) JOIN racks r ON r.id = h.rack_hosts
	WHERE a.status = 'OPEN' AND r.floor_racks = $1 AND h.position IS NOT NULL GROUP BY 1, 2`, floorID)
	check(b, err)
	for rows.Next() {
		var rid int64
		var sev string
		var n int
		check(b, rows.Scan(&rid, &sev, &n))
		if fr := byID[rid]; fr != nil {
			fr.Alerts.add(sev, n)
		}
	}
	check(b, rows.Err())

	out, err := json.Marshal(map[string]any{"data": map[string]any{"floorView": map[string]any{
		"id": str(fid), "name": name, "datacenterID": str(dcID), "datacenterName": dcName, "racks": racks}}})
	check(b, err)
	return out
}

// --- hosts listing ---

// relations are the related objects of a host, in the order the benchmark adds them; GraphQL
// merges the repeated rack and node fields.
var relations = []string{
	"rack { name }",
	"rack { floor { datacenter { name } } }",
	"node { name }",
	"node { cluster { name } }",
	"powerZone { name }",
	"networkZone { name }",
	"hostGroups(first: 10) { edges { node { name } } }",
	"maintainers(first: 10) { edges { node { name } } }",
}

func hostsQuery(n int) string {
	return `query($floor: ID!) { hosts(first: 1000, where: {hasRackWith: [{hasFloorWith: [{id: $floor}]}]}) {
	  edges { node { id name ` + strings.Join(relations[:n], " ") + ` } } } }`
}

func BenchmarkHostsListing(b *testing.B) {
	env := benchEnv(b)
	hostsOnce.Do(func() {
		t0 := time.Now()
		hostsSite = buildSite(b, env.Client, siteSpec{Racks: 25, Servers: 40})
		analyze(b, env)
		b.Logf("1,000-host site built in %v", time.Since(t0).Round(time.Millisecond))
	})
	if hostsSite == nil {
		b.Fatal("the fixture failed to build in an earlier benchmark")
	}
	h, stmts := countingHandler(env)
	vars := map[string]any{"floor": hostsSite.floor.ID}

	var check struct {
		Data struct {
			Hosts struct {
				Edges []struct {
					Node struct {
						Rack struct {
							Name  string
							Floor struct{ Datacenter struct{ Name string } }
						}
						Node        struct{ Cluster struct{ Name string } }
						PowerZone   struct{ Name string }
						NetworkZone struct{ Name string }
						HostGroups  struct{ Edges []any }
						Maintainers struct{ Edges []any }
					}
				}
			}
		}
	}
	stmts.n.Store(0)
	if err := json.Unmarshal(graphQL(b, h, hostsQuery(len(relations)), vars), &check); err != nil {
		b.Fatal(err)
	}
	stmts8 := stmts.n.Load()
	if n := len(check.Data.Hosts.Edges); n != 1000 {
		b.Fatalf("%d hosts, want 1000", n)
	}
	for _, e := range check.Data.Hosts.Edges {
		n := e.Node
		if n.Rack.Name == "" || n.Rack.Floor.Datacenter.Name == "" || n.Node.Cluster.Name == "" || n.PowerZone.Name == "" ||
			n.NetworkZone.Name == "" || len(n.HostGroups.Edges) != 1 || len(n.Maintainers.Edges) != 1 {
			b.Fatalf("a host without all 8 relations: %+v", n)
		}
	}

	queries := make([]string, len(relations)+1)
	for i := range queries {
		queries[i] = hostsQuery(i)
	}
	times := make([]timings, len(queries))
	for b.Loop() {
		for i, q := range queries {
			t0 := time.Now()
			graphQL(b, h, q, vars)
			times[i] = append(times[i], time.Since(t0))
		}
	}
	medians := make([]float64, len(times))
	for i, t := range times {
		medians[i] = t.pct(50) / 1e6
	}
	// The marginal cost of a relation: the least-squares slope of the medians over 0..8.
	var sx, sy, sxx, sxy float64
	for i, m := range medians {
		x := float64(i)
		sx, sy, sxx, sxy = sx+x, sy+m, sxx+x*x, sxy+x*m
	}
	k := float64(len(medians))
	slope := (k*sxy - sx*sy) / (k*sxx - sx*sx)
	b.ReportMetric(medians[0], "ms-0rel")
	b.ReportMetric(medians[len(medians)-1], "ms-8rel")
	b.ReportMetric(times[len(times)-1].pct(99)/1e6, "p99-ms-8rel")
	b.ReportMetric(slope, "ms/relation")
	b.ReportMetric(float64(stmts8), "stmts-8rel")
	if testing.Verbose() {
		var parts []string
		for i, m := range medians {
			parts = append(parts, fmt.Sprintf("%d:%.1fms", i, m))
		}
		b.Logf("median by relations selected: %s", strings.Join(parts, " "))
	}
}

// BenchmarkNetworkDiagram draws the whole fabric of the 10×40×4 site from one server (depth 6:
// every server, switch, router and network) and traces a server port to the gateways, through
// GraphQL, reporting the size of the answer and the view statements.
func BenchmarkNetworkDiagram(b *testing.B) {
	env := benchEnv(b)
	s := rackSite(b, env)
	h, stmts := countingHandler(env)
	const diagramQuery = `query($from: ID!) { networkDiagram(from: $from, depth: 6) {
	  nodes { id kind name role status cidr vlan }
	  edges { id kind source target label sourcePort { name mac vlan addresses } targetPort { name mac vlan addresses } }
	  truncated } }`
	var out struct {
		Data struct {
			NetworkDiagram struct {
				Nodes, Edges []any
				Truncated    bool
			}
		}
	}
	stmts.n.Store(0)
	if err := json.Unmarshal(graphQL(b, h, diagramQuery, map[string]any{"from": s.servers[0][0].ID}), &out); err != nil {
		b.Fatal(err)
	}
	diagramStmts := stmts.n.Load()
	stmts.n.Store(0)
	graphQL(b, h, traceQuery, map[string]any{"id": s.firstPort})
	traceStmts := stmts.n.Load()
	var d, t timings
	for b.Loop() {
		t0 := time.Now()
		graphQL(b, h, diagramQuery, map[string]any{"from": s.servers[0][0].ID})
		t1 := time.Now()
		graphQL(b, h, traceQuery, map[string]any{"id": s.firstPort})
		d, t = append(d, t1.Sub(t0)), append(t, time.Since(t1))
	}
	nd := out.Data.NetworkDiagram
	b.ReportMetric(float64(len(nd.Nodes)), "nodes")
	b.ReportMetric(float64(len(nd.Edges)), "edges")
	b.ReportMetric(d.pct(50)/1e6, "diagram-p50-ms")
	b.ReportMetric(d.pct(99)/1e6, "diagram-p99-ms")
	b.ReportMetric(float64(diagramStmts), "diagram-stmts")
	b.ReportMetric(t.pct(50)/1e6, "trace-p50-ms")
	b.ReportMetric(float64(traceStmts), "trace-stmts")
}
