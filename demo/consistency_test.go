package demo_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"sync"
	"testing"

	"github.com/hibiken/asynq"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/controllers/alerting"
	"github.com/virtflow/virtflow/demo"
	"github.com/virtflow/virtflow/domain/egress"
	"github.com/virtflow/virtflow/domain/placement"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/alert"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/datacenter"
	"github.com/virtflow/virtflow/ent/event"
	"github.com/virtflow/virtflow/ent/eventrule"
	"github.com/virtflow/virtflow/ent/floor"
	"github.com/virtflow/virtflow/ent/hookdelivery"
	"github.com/virtflow/virtflow/ent/ipaddress"
	"github.com/virtflow/virtflow/ent/network"
	"github.com/virtflow/virtflow/ent/port"
	"github.com/virtflow/virtflow/ent/powerzone"
	"github.com/virtflow/virtflow/ent/rack"
	"github.com/virtflow/virtflow/ent/tenant"
	"github.com/virtflow/virtflow/ent/virtualmachine"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
	"github.com/virtflow/virtflow/store/dbtx"
)

// TestDemoIsConsistent loads the demo into PostgreSQL and uses it as an operator would:
// a VM created with the form's defaults (no networks) gets a NIC and an address on its
// tenant's default VM network; with the demo's own rules a check that fails and recovers
// opens and resolves its alert and sends the failure and recovery hooks; Alertmanager
// alerts labelled rack or power_zone, whose names repeat across floors and datacenters,
// attach to the rack or zone their datacenter and floor labels name.
func TestDemoIsConsistent(t *testing.T) {
	client, _ := openPostgres(t, testdb.New(t))
	ctx := authz.SystemContext(context.Background(), "test")
	if _, err := demo.Load(ctx, client, nil); err != nil {
		t.Fatal(err)
	}
	t.Run("default VM network", func(t *testing.T) { demoDefaultNetwork(t, ctx, client) })
	t.Run("load-balanced service gets a VIP", func(t *testing.T) { demoServiceVIP(t, ctx, client) })
	t.Run("rules recover alerts", func(t *testing.T) { demoRulesRecover(t, ctx, client) })
	t.Run("alertmanager rack and power zone", func(t *testing.T) { demoAlertmanagerPlaces(t, ctx, client) })
}

func demoDefaultNetwork(t *testing.T, ctx context.Context, c *ent.Client) {
	for _, name := range []string{"acme", "globex", "initech"} {
		tn := c.Tenant.Query().Where(tenant.Name(name)).WithDefaultVMNetwork().OnlyX(ctx)
		if tn.Edges.DefaultVMNetwork == nil {
			t.Fatalf("tenant %s has no default VM network", name)
		}
	}
	like := c.VirtualMachine.Query().Where(virtualmachine.HasTenantWith(tenant.Name("acme"))).
		WithFlavor().WithImage().WithRegion().FirstX(ctx)
	vm, err := placement.New(placement.Config{}).CreateVM(ctx, c, ent.CreateVirtualMachineInput{
		Name: "form-defaults", TenantID: c.Tenant.Query().Where(tenant.Name("acme")).OnlyIDX(ctx),
		RegionID: like.Edges.Region.ID, FlavorID: like.Edges.Flavor.ID, ImageID: &like.Edges.Image.ID})
	if err != nil {
		t.Fatalf("create a VM with the form's defaults: %v", err)
	}
	ips := c.IPAddress.Query().Where(ipaddress.HasPortWith(port.HasVirtualMachineWith(virtualmachine.ID(vm.ID)))).
		WithNetwork().AllX(ctx)
	if len(ips) != 1 {
		t.Fatalf("the VM has %d addresses, want 1 on acme's default VM network", len(ips))
	}
	net := ips[0].Edges.Network
	pfx := netip.MustParsePrefix(net.Cidr)
	if a := netip.MustParseAddr(ips[0].Address); !pfx.Contains(a) {
		t.Errorf("address %s outside %s (%s)", a, pfx, net.Name)
	}
	// IPAM does not hand out what the demo's own VMs hold.
	if n := c.IPAddress.Query().Where(ipaddress.Address(ips[0].Address)).CountX(ctx); n != 1 {
		t.Errorf("address %s held %d times", ips[0].Address, n)
	}
}

// demoServiceVIP: createRegionService(loadBalanced: true) in the demo gets a load balancer
// whose VIP lies in its datacenter's SERVICE network.
func demoServiceVIP(t *testing.T, ctx context.Context, c *ent.Client) {
	like := c.VirtualMachine.Query().Where(virtualmachine.HasTenantWith(tenant.Name("acme"))).
		WithFlavor().WithImage().WithRegion().FirstX(ctx)
	lb := true
	svc, err := placement.New(placement.Config{}).CreateService(ctx, c, ent.CreateRegionServiceInput{
		Name: "demo-web", TenantID: c.Tenant.Query().Where(tenant.Name("acme")).OnlyIDX(ctx), RegionID: like.Edges.Region.ID,
		FlavorID: &like.Edges.Flavor.ID, ImageID: &like.Edges.Image.ID, LoadBalanced: &lb})
	if err != nil {
		t.Fatalf("createRegionService(loadBalanced: true) in the demo: %v", err)
	}
	got := svc.QueryLoadBalancer().WithVip(func(q *ent.IPAddressQuery) { q.WithNetwork() }).OnlyX(ctx)
	if got.Edges.Vip == nil || got.Edges.Vip.Edges.Network == nil || got.Edges.Vip.Edges.Network.Purpose != network.PurposeService {
		t.Fatalf("load balancer %+v: want a VIP on a SERVICE network", got)
	}
	if a, p := netip.MustParseAddr(got.Edges.Vip.Address), netip.MustParsePrefix(got.Edges.Vip.Edges.Network.Cidr); !p.Contains(a) {
		t.Errorf("VIP %s outside %s", a, p)
	}
}

func demoRulesRecover(t *testing.T, ctx context.Context, c *ent.Client) {
	var (
		mu     sync.Mutex
		bodies []alerting.HookBody
	)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var body alerting.HookBody
		_ = json.Unmarshal(b, &body)
		mu.Lock()
		bodies = append(bodies, body)
		mu.Unlock()
	}))
	t.Cleanup(hs.Close)
	// The operator enables the demo's hook rule with a receiver of its own.
	c.EventRule.Update().Where(eventrule.Name("notify-on-call")).SetEnabled(true).SetHookURL(hs.URL).ExecX(ctx)
	e := &alerting.Engine{Client: c, HTTP: alerting.HookClient(egress.MustParse("127.0.0.1/32"))}
	node := c.ComputeNode.Query().Order(ent.Asc(computenode.FieldID)).FirstX(ctx)
	run := func(st event.Status) int {
		t.Helper()
		var ids []int
		_, err := dbtx.Run(ctx, c, func(c *ent.Client) error {
			evs, err := alerting.Report(ctx, c, []alerting.EventInput{{NodeID: node.ID, CheckName: "demo-disk", Status: st}})
			for _, ev := range evs {
				ids = append(ids, ev.ID)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.ProcessEvents(ctx, ids); err != nil {
			t.Fatal(err)
		}
		return ids[0]
	}
	run(event.StatusCritical)
	a := c.Alert.Query().Where(alert.NameHasPrefix("demo-disk ")).OnlyX(ctx)
	if a.Status != alert.StatusOpen {
		t.Fatalf("alert %s after a CRITICAL, want OPEN", a.Status)
	}
	run(event.StatusSuccess)
	if a = c.Alert.GetX(ctx, a.ID); a.Status != alert.StatusClosed {
		t.Errorf("alert %s after the check recovered, want CLOSED (the demo's FILTER dropped the recovery?)", a.Status)
	}
	for _, d := range c.HookDelivery.Query().Where(hookdelivery.StatusEQ(hookdelivery.StatusPending)).AllX(ctx) {
		task := asynq.NewTask(alerting.TypeHook, []byte(`{"delivery":`+strconv.Itoa(d.ID)+`}`))
		if err := e.ProcessTask(ctx, task); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) != 2 || bodies[0].Recovery || !bodies[1].Recovery {
		t.Errorf("hooks received %+v, want the failure then its recovery", bodies)
	}
}

func demoAlertmanagerPlaces(t *testing.T, ctx context.Context, c *ent.Client) {
	// rack-1-1 exists on every floor; floor-1-1-1 in both datacenters.
	if n := c.Rack.Query().Where(rack.Name("rack-1-1")).CountX(ctx); n < 3 {
		t.Fatalf("%d racks named rack-1-1, the demo repeats it on every floor", n)
	}
	want := c.Rack.Query().Where(rack.Name("rack-1-1"), rack.HasFloorWith(floor.Name("floor-1-1-1"),
		floor.HasDatacenterWith(datacenter.Name("osk1-dc1")))).OnlyX(ctx)
	zone := c.PowerZone.Query().Where(powerzone.Name("floor-1-1-1-pdu-b"), powerzone.HasDatacenterWith(datacenter.Name("tky1-dc1"))).OnlyX(ctx)
	firing := func(fp string, labels map[string]string) alerting.AMAlert {
		return alerting.AMAlert{Status: "firing", Labels: labels, Fingerprint: fp, Annotations: map[string]string{"summary": fp}}
	}
	res, err := alerting.Receive(ctx, c, alerting.AMWebhook{Version: "4", Status: "firing", Alerts: []alerting.AMAlert{
		firing("rack-temp", map[string]string{"alertname": "RackInletTemp", "rack": "rack-1-1", "datacenter": "osk1-dc1", "floor": "floor-1-1-1"}),
		firing("pz-loss", map[string]string{"alertname": "PowerFeedLost", "power_zone": "floor-1-1-1-pdu-b", "datacenter": "tky1-dc1"}),
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Alerts) != 2 {
		t.Fatalf("result %+v, want 2 alerts", res)
	}
	ra := c.Alert.Query().Where(alert.ID(res.Alerts[0])).WithRack().OnlyX(ctx)
	if ra.Edges.Rack == nil || ra.Edges.Rack.ID != want.ID {
		t.Errorf("rack alert attached to %v, want rack-1-1 of osk1-dc1/floor-1-1-1 (%d)", ra.Edges.Rack, want.ID)
	}
	za := c.Alert.Query().Where(alert.ID(res.Alerts[1])).WithPowerZone().OnlyX(ctx)
	if za.Edges.PowerZone == nil || za.Edges.PowerZone.ID != zone.ID {
		t.Errorf("power zone alert attached to %v, want floor-1-1-1-pdu-b of tky1-dc1 (%d)", za.Edges.PowerZone, zone.ID)
	}
}
