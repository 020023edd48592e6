package nodestatus_test

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/virtflow/virtflow/domain/nodestatus"
	"github.com/virtflow/virtflow/domain/placement/placementtest"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/event"
	"github.com/virtflow/virtflow/ent/provider"
	"github.com/virtflow/virtflow/internal/platform/infra"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

// TestMain gives the package its own PostgreSQL database.
func TestMain(m *testing.M) { testdb.Main(m) }

// TestApply sends heartbeats through Apply against PostgreSQL: status transitions, the routine
// heartbeat that changes nothing but the time (so package graph writes no audit row for it),
// a cordon request, and an unhealthy message longer than the reason column with a multi-byte
// character at the cut.
func TestApply(t *testing.T) {
	ctx := placementtest.Ctx()
	db, err := infra.OpenDatabase(ctx, testdb.DSN(t), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	c := db.Client
	site, err := placementtest.Build(ctx, c, placementtest.Spec{Racks: 1, HostsPerRack: 1, CPU: 8, MemoryMB: 16384, DiskGB: 100})
	if err != nil {
		t.Fatal(err)
	}
	node := site.Nodes[0].ID
	c.ComputeNode.UpdateOneID(node).SetAutoCordon(true).ExecX(ctx)
	at := time.Date(2030, 5, 6, 7, 8, 9, 0, time.UTC)
	str := func(s string) *string { return &s }
	yes := true

	for i, step := range []struct {
		name        string
		r           nodestatus.Report
		wantChanged bool
		wantStatus  computenode.Status
		wantReason  string
		check       func(t *testing.T)
	}{
		{name: "healthy", r: nodestatus.Report{Healthy: true, AgentVersion: str("1.0")}, wantChanged: true, wantStatus: computenode.StatusReady},
		{name: "routine", r: nodestatus.Report{Healthy: true, AgentVersion: str("1.0")}, wantStatus: computenode.StatusReady},
		{name: "routine, only the id asked for", r: nodestatus.Report{Healthy: true, IDOnly: true}, wantStatus: computenode.StatusReady},
		{name: "unhealthy", r: nodestatus.Report{Message: str("  disk failing  ")}, wantChanged: true,
			wantStatus: computenode.StatusNotReady, wantReason: "disk failing"},
		{name: "unhealthy again, same message", r: nodestatus.Report{Message: str("disk failing")},
			wantStatus: computenode.StatusNotReady, wantReason: "disk failing"},
		{name: "a long message cut at a character", r: nodestatus.Report{Message: str(strings.Repeat("x", 1023) + "éé")}, wantChanged: true,
			wantStatus: computenode.StatusNotReady, wantReason: strings.Repeat("x", 1021) + "…"},
		{name: "cordon request", r: nodestatus.Report{Healthy: true, RequestCordon: &yes, Message: str("ECC errors")}, wantChanged: true,
			wantStatus: computenode.StatusReady, check: func(t *testing.T) {
				n := c.ComputeNode.GetX(ctx, node)
				if n.Schedulable || n.CordonReason != "ECC errors" {
					t.Errorf("schedulable %v, cordon reason %q; want cordoned for ECC errors", n.Schedulable, n.CordonReason)
				}
			}},
		{name: "healthy again", r: nodestatus.Report{Healthy: true}, wantStatus: computenode.StatusReady},
	} {
		t.Run(step.name, func(t *testing.T) {
			step.r.NodeID = node
			step.r.At = at.Add(time.Duration(i) * 10 * time.Second)
			before := c.ComputeNode.GetX(ctx, node)
			_, changed, err := nodestatus.Apply(ctx, c, step.r)
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			n := c.ComputeNode.GetX(ctx, node)
			if changed != step.wantChanged || n.Status != step.wantStatus || n.StatusReason != step.wantReason {
				t.Fatalf("changed %v, %s %q; want %v, %s %q", changed, n.Status, n.StatusReason, step.wantChanged, step.wantStatus, step.wantReason)
			}
			if !utf8.ValidString(n.StatusReason) || len(n.StatusReason) > 1024 {
				t.Fatalf("reason of %d bytes, valid UTF-8 %v", len(n.StatusReason), utf8.ValidString(n.StatusReason))
			}
			if n.LastHeartbeatAt == nil || !n.LastHeartbeatAt.Equal(step.r.At) {
				t.Fatalf("last heartbeat %v, want the report's time %s", n.LastHeartbeatAt, step.r.At)
			}
			if !changed && (n.Status != before.Status || n.StatusReason != before.StatusReason || n.AgentVersion != before.AgentVersion) {
				t.Fatal("an unchanged heartbeat changed the node")
			}
			if step.check != nil {
				step.check(t)
			}
		})
	}
	// Another node's heartbeat id that does not exist is NOT_FOUND, not a silent no-op.
	if _, _, err := nodestatus.Apply(ctx, c, nodestatus.Report{NodeID: node + 1_000_000, Healthy: true}); err == nil {
		t.Fatal("a heartbeat for a node that does not exist succeeded")
	}
}

// TestApplyFacts records what an agent reports about its host: disk capacity, OS, kernel,
// domain type and providers. An unchanged report changes nothing; providers are linked by
// kind and driver; a disk capacity below what is allocated is recorded with one warning
// event.
func TestApplyFacts(t *testing.T) {
	ctx := placementtest.Ctx()
	db, err := infra.OpenDatabase(ctx, testdb.DSN(t), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	c := db.Client
	site, err := placementtest.Build(ctx, c, placementtest.Spec{Racks: 1, HostsPerRack: 1, CPU: 8, MemoryMB: 16384, Providers: true})
	if err != nil {
		t.Fatal(err)
	}
	node := site.Nodes[0].ID
	c.ComputeNode.UpdateOneID(node).ClearProviders().ExecX(ctx)
	docker := c.Provider.Create().SetName("pods").SetKind(provider.KindPod).SetDriver(provider.DriverDocker).SaveX(ctx)
	str := func(s string) *string { return &s }
	num := func(n int) *int { return &n }
	vm := []nodestatus.ProviderOffer{{Kind: provider.KindVirtualMachine, Driver: provider.DriverLibvirt}}
	report := func(disk int, os string, offers []nodestatus.ProviderOffer) nodestatus.Report {
		return nodestatus.Report{NodeID: node, Healthy: true, CPUCapacity: num(8), MemoryCapacityMB: num(16384),
			DiskCapacityGB: num(disk), OSName: str("Debian GNU/Linux"), OSVersion: str(os),
			KernelVersion: str("6.1.0-56-amd64"), DomainType: str("qemu"), Providers: offers, IDOnly: true}
	}
	warnings := func() int {
		return c.Event.Query().Where(event.CheckName(nodestatus.CapacityCheck), event.HasNodeWith(computenode.ID(node))).CountX(ctx)
	}
	for _, step := range []struct {
		name        string
		r           nodestatus.Report
		before      func()
		wantChanged bool
		wantProv    []int
		wantEvents  int
	}{
		{name: "first report", r: report(200, "12 (bookworm)", vm), wantChanged: true, wantProv: []int{site.Provider}},
		{name: "the same again", r: report(200, "12 (bookworm)", vm), wantProv: []int{site.Provider}},
		{name: "an operator links another provider", r: report(200, "12 (bookworm)", vm), wantChanged: true, wantProv: []int{site.Provider},
			before: func() { c.ComputeNode.UpdateOneID(node).AddProviderIDs(docker.ID).ExecX(ctx) }},
		{name: "providers not reported: links kept", r: report(200, "12 (bookworm)", nil), wantProv: []int{site.Provider}},
		{name: "OS upgraded", r: report(200, "13 (trixie)", vm), wantChanged: true, wantProv: []int{site.Provider}},
		{name: "disk below what is allocated", r: report(100, "13 (trixie)", vm), wantChanged: true, wantProv: []int{site.Provider}, wantEvents: 1,
			before: func() { c.ComputeNode.UpdateOneID(node).SetDiskAllocatedGB(150).ExecX(ctx) }},
		{name: "the same low disk: no second event", r: report(100, "13 (trixie)", vm), wantProv: []int{site.Provider}, wantEvents: 1},
		{name: "no VM provider offered", r: report(100, "13 (trixie)", []nodestatus.ProviderOffer{}), wantChanged: true, wantEvents: 1},
	} {
		t.Run(step.name, func(t *testing.T) {
			if step.before != nil {
				step.before()
			}
			got, changed, err := nodestatus.Apply(ctx, c, step.r)
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			if changed != step.wantChanged {
				t.Errorf("changed = %v, want %v", changed, step.wantChanged)
			}
			// With IDOnly, only the routine heartbeat's single UPDATE returns a node without
			// its name: an unchanged report must take it.
			if fast := got.Name == ""; fast != !step.wantChanged {
				t.Errorf("took the routine one-statement path: %v, want %v", fast, !step.wantChanged)
			}
			n := c.ComputeNode.Query().Where(computenode.ID(node)).WithProviders().OnlyX(ctx)
			if n.DiskCapacityGB != int64(*step.r.DiskCapacityGB) || n.OsName != "Debian GNU/Linux" || n.OsVersion != *step.r.OSVersion ||
				n.KernelVersion != "6.1.0-56-amd64" || n.DomainType != "qemu" {
				t.Errorf("node disk %d, os %q %q, kernel %q, domain type %q: not the report", n.DiskCapacityGB, n.OsName, n.OsVersion, n.KernelVersion, n.DomainType)
			}
			var prov []int
			for _, p := range n.Edges.Providers {
				prov = append(prov, p.ID)
			}
			if len(prov) != len(step.wantProv) || (len(prov) > 0 && prov[0] != step.wantProv[0]) {
				t.Errorf("providers %v, want %v", prov, step.wantProv)
			}
			if got := warnings(); got != step.wantEvents {
				t.Errorf("%d capacity warnings, want %d", got, step.wantEvents)
			}
		})
	}
	if _, _, err := nodestatus.Apply(ctx, c, nodestatus.Report{NodeID: node, Healthy: true, OSName: str(strings.Repeat("x", 65))}); err == nil {
		t.Error("an OS name of 65 characters was accepted")
	}
}
