package kubecluster

import (
	"context"
	"crypto/x509"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/controllers/outbox"
	"github.com/virtflow/virtflow/controllers/provision"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/domain/placement/placementtest"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/auditlog"
	"github.com/virtflow/virtflow/ent/ipaddress"
	"github.com/virtflow/virtflow/ent/kubernetescluster"
	"github.com/virtflow/virtflow/ent/loadbalancer"
	"github.com/virtflow/virtflow/ent/network"
	"github.com/virtflow/virtflow/ent/servicemesh"
	"github.com/virtflow/virtflow/ent/virtualmachine"
	"github.com/virtflow/virtflow/internal/platform/infra"
	"github.com/virtflow/virtflow/internal/platform/secrets"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

// TestMain gives the package its own PostgreSQL database.
func TestMain(m *testing.M) { testdb.Main(m) }

// env is a site (4 racks, each its own power zone), a SERVICE network for VIPs, a flavor,
// a tenant SSH key and a Service over them.
type env struct {
	db     *infra.Database
	c      *ent.Client
	site   *placementtest.Site
	flavor *ent.Flavor
	keys   *secrets.Keyring
	prov   *provision.Service
}

func newEnv(t testing.TB) *env { return newEnvSized(t, 2, 32) }

// newEnvSized is newEnv with hostsPerRack hosts of cpus vCPUs in each of the 4 racks.
func newEnvSized(t testing.TB, hostsPerRack, cpus int) *env {
	t.Helper()
	db, err := infra.OpenDatabase(context.Background(), testdb.DSN(t), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	ctx := placementtest.Ctx()
	site, err := placementtest.Build(ctx, db.Client, placementtest.Spec{Racks: 4, HostsPerRack: hostsPerRack, PowerZones: 4,
		CPU: cpus, MemoryMB: int64(cpus) * 2048, DiskGB: int64(cpus) * 40, Cores: cpus / 2})
	if err != nil {
		t.Fatal(err)
	}
	db.Client.Network.Create().SetName(site.Prefix + "-svc").SetCidr("10.77.0.0/24").SetVrf(site.Prefix).
		SetPurpose(network.PurposeService).SetDatacenterID(site.Datacenter).SaveX(ctx)
	f, err := site.Flavor(ctx, 2, 2048, 20, false)
	if err != nil {
		t.Fatal(err)
	}
	db.Client.SSHKey.Create().SetName(site.Prefix + "-key").SetTenantID(site.Tenant).
		SetPublicKey("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl tester@example").SaveX(ctx)
	raw, _ := secrets.ParseKey(strings.Repeat("4b", 32))
	keys, _ := secrets.NewKeyring(raw)
	return &env{db: db, c: db.Client, site: site, flavor: f, keys: keys, prov: provision.New(provision.Config{})}
}

func (e *env) service(fault func(string) error) *Service {
	return New(Config{Client: e.c, Provision: e.prov, Secrets: e.keys, PollInterval: 50 * time.Millisecond, Fault: fault})
}

func (e *env) create(t testing.TB, s *Service, name string, cps, workers int, bastion bool) *ent.KubernetesCluster {
	t.Helper()
	ctx := placementtest.Ctx()
	var out *ent.KubernetesCluster
	err := s.inTx(ctx, func(ctx context.Context, c *ent.Client) error {
		var err error
		out, err = s.Create(ctx, c, ent.CreateKubernetesClusterInput{Name: name, Version: "v1.31.2", TenantID: e.site.Tenant,
			RegionID: e.site.Region, FlavorID: &e.flavor.ID, ControlPlaneCount: &cps, WorkerCount: &workers,
			BastionEnabled: &bastion, Plugins: []string{"calico"}})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// worker runs an Asynq server serving k8s:step (and nothing else) on the site's region
// queue, with the outbox relay that feeds it; stop kills both.
func (e *env) worker(t testing.TB, s *Service) (stop func()) {
	t.Helper()
	opt, err := asynq.ParseRedisURI(testdb.RedisURL())
	if err != nil {
		t.Fatal(err)
	}
	region := e.c.Region.GetX(placementtest.Ctx(), e.site.Region)
	ctx, cancel := context.WithCancel(context.Background())
	relay := outbox.NewRelay(e.c, opt, outbox.Config{Dialect: e.db.Dialect, Poll: 20 * time.Millisecond,
		Options: func(kind string) []asynq.Option {
			if kind == TypeStep {
				return TaskOptions()
			}
			return provision.TaskOptions(kind)
		}})
	done := make(chan struct{})
	go func() { defer close(done); relay.Run(ctx) }()
	srv := asynq.NewServer(opt, asynq.Config{Concurrency: 4, Queues: map[string]int{provision.Queue(region.Name): 1},
		RetryDelayFunc: func(int, error, *asynq.Task) time.Duration { return 50 * time.Millisecond },
		LogLevel:       asynq.FatalLevel, ShutdownTimeout: 5 * time.Second, DelayedTaskCheckInterval: 50 * time.Millisecond, TaskCheckInterval: 20 * time.Millisecond})
	mux := asynq.NewServeMux()
	s.Register(mux)
	// vm:create and vm:delete go to the node agents' pipeline, which is not the subject here.
	for _, k := range provision.Kinds {
		mux.HandleFunc(k, func(context.Context, *asynq.Task) error { return nil })
	}
	if err := srv.Start(mux); err != nil {
		t.Fatal(err)
	}
	var once atomic.Bool
	stop = func() {
		if once.Swap(true) {
			return
		}
		srv.Shutdown()
		cancel()
		<-done
	}
	t.Cleanup(stop)
	return stop
}

func get(t testing.TB, c *ent.Client, id int) *ent.KubernetesCluster {
	t.Helper()
	k, err := c.KubernetesCluster.Get(placementtest.Ctx(), id)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// waitFor polls until ok says the cluster is where the test wants it (30 s at most).
func waitFor(t testing.TB, c *ent.Client, id int, what string, ok func(*ent.KubernetesCluster) bool) *ent.KubernetesCluster {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		k, err := c.KubernetesCluster.Get(placementtest.Ctx(), id)
		if err == nil && ok(k) {
			return k
		}
		if ent.IsNotFound(err) && what == "gone" {
			return nil
		}
		if time.Now().After(deadline) {
			t.Fatalf("cluster never %s: %+v (err %v)", what, k, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// reportAll makes every bootstrapping node's guest report success, as the node's script
// does at its last step; it returns how many reported.
func reportAll(t testing.TB, c *ent.Client, k *ent.KubernetesCluster) int {
	t.Helper()
	n, err := reportAllErr(c, k)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func reportAllErr(c *ent.Client, k *ent.KubernetesCluster) (int, error) {
	n := 0
	for _, node := range k.Nodes {
		if node.State != StateBootstrapping || node.VMID == 0 {
			continue
		}
		rep := Report{Step: StepReady, Result: "ok"}
		if node.Role == RoleControlPlane && node.Index == 0 {
			rep.Mesh = "ok"
		}
		if err := RecordReport(context.Background(), c, time.Now(), node.VMID, rep); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

func clusterVMs(t testing.TB, c *ent.Client, id int) []*ent.VirtualMachine {
	t.Helper()
	vms, err := c.VirtualMachine.Query().Where(virtualmachine.HasKubernetesClusterWith(kubernetescluster.ID(id))).
		WithNode().Order(ent.Asc(virtualmachine.FieldName)).All(placementtest.Ctx())
	if err != nil {
		t.Fatal(err)
	}
	return vms
}

// TestClusterLifecycle: a 3 + 3 cluster with a bastion, created by a worker that is killed
// in the middle of a step and replaced by another, has exactly 7 VMs, control planes on 3
// racks and 3 power zones, a VIP on a load balancer, a PKI whose kubeconfig verifies, and
// becomes ACTIVE when its control planes report; then it scales up and down (from the end),
// upgrades one node at a time, and is deleted in order.
func TestClusterLifecycle(t *testing.T) {
	e := newEnv(t)
	ctx := placementtest.Ctx()
	killed := make(chan struct{})
	var faults atomic.Int32
	w1 := e.service(func(phase string) error {
		if phase == "PKI" && faults.Add(1) == 1 {
			close(killed)
			return errors.New("worker killed in the middle of the PKI step")
		}
		return nil
	})
	start := time.Now()
	k := e.create(t, w1, "prod", 3, 3, true)
	stop1 := e.worker(t, w1)
	select {
	case <-killed:
	case <-time.After(30 * time.Second):
		t.Fatal("the first worker never reached the PKI step")
	}
	stop1()
	if got := get(t, e.c, k.ID); got.Phase != kubernetescluster.PhasePki || got.PkiSealed != "" {
		t.Fatalf("after the kill: phase %s, PKI written %v", got.Phase, got.PkiSealed != "")
	}
	if n := len(clusterVMs(t, e.c, k.ID)); n != 7 {
		t.Fatalf("after the kill: %d VMs, want 7", n)
	}
	s := e.service(nil)
	e.worker(t, s)
	k = waitFor(t, e.c, k.ID, "bootstrapped", func(k *ent.KubernetesCluster) bool { return k.Phase == kubernetescluster.PhaseReady })
	if k.Status != kubernetescluster.StatusCreating {
		t.Errorf("before any report: %s (%s)", k.Status, k.StatusReason)
	}
	vms := clusterVMs(t, e.c, k.ID)
	if len(vms) != 7 {
		t.Fatalf("%d VMs, want 7", len(vms))
	}
	var names []string
	racks, power := map[int]bool{}, map[string]bool{}
	for _, vm := range vms {
		names = append(names, vm.Name)
		if vm.UserData == "" || !strings.HasPrefix(vm.UserData, "#cloud-config") {
			t.Errorf("%s has no bootstrap user-data", vm.Name)
		}
		if vm.Type == virtualmachine.TypeControlPlane {
			r := e.site.RackOf(vm.Edges.Node.ID)
			racks[r] = true
			power[e.site.Racks[r].PowerZone] = true
		}
	}
	want := []string{"prod-bastion", "prod-cp-0", "prod-cp-1", "prod-cp-2", "prod-w-0", "prod-w-1", "prod-w-2"}
	if !slices.Equal(names, want) {
		t.Errorf("VMs %v, want %v", names, want)
	}
	if len(racks) != 3 || len(power) != 3 {
		t.Errorf("control planes on %d racks and %d power zones, want 3 and 3", len(racks), len(power))
	}
	if !strings.Contains(vms[1].UserData, "kubeadm init") || !strings.Contains(vms[2].UserData, "kubeadm join") ||
		strings.Contains(vms[4].UserData, "PRIVATE KEY") || !strings.Contains(vms[0].UserData, "ssh-ed25519") {
		t.Error("user-data: init on cp-0, join elsewhere, the CA key only on cp-0, keys on the bastion")
	}
	lb := e.c.LoadBalancer.Query().Where(loadbalancer.ID(*k.APILoadBalancerID)).WithVip().OnlyX(ctx)
	if lb.Name != "prod-api" || lb.Edges.Vip == nil || lb.Edges.Vip.Address != k.APIVip || k.APIEndpoint != "https://"+k.APIVip+":6443" {
		t.Errorf("load balancer %s with VIP %+v; cluster VIP %s endpoint %s", lb.Name, lb.Edges.Vip, k.APIVip, k.APIEndpoint)
	}
	if members, err := apiLoadBalancerMembers(ctx, e.c, k.ID); err != nil || len(members) != 3 {
		t.Errorf("API members %v: %v", members, err)
	}
	// The traffic loop finds the API's load balancer and its members by the load balancer.
	if len(lb.Listeners) != 1 || lb.Listeners[0] != APIListener {
		t.Errorf("API load balancer listeners %+v, want %+v", lb.Listeners, APIListener)
	}
	if ids, err := APILoadBalancerIDs(ctx, e.c); err != nil || !slices.Contains(ids, lb.ID) {
		t.Errorf("API load balancers %v (%v) miss %d", ids, err, lb.ID)
	}
	if members, err := APILoadBalancerMembers(ctx, e.c, lb.ID); err != nil || len(members) != 3 {
		t.Errorf("API members by load balancer %v: %v", members, err)
	}
	// The guests report: the cluster is ACTIVE once its control planes are.
	reportAll(t, e.c, k)
	k = get(t, e.c, k.ID)
	if k.Status != kubernetescluster.StatusActive || k.ServiceMeshStatus != kubernetescluster.ServiceMeshStatusNone {
		t.Fatalf("after the reports: %s (%s), mesh %s", k.Status, k.StatusReason, k.ServiceMeshStatus)
	}
	t.Logf("create → ACTIVE, 3 + 3 + bastion, with a worker killed and its step retried: %v", time.Since(start))
	kc, err := s.Kubeconfig(ctx, e.c, k.ID)
	if err != nil || kc == nil {
		t.Fatalf("kubeconfig: %v", err)
	}
	p, err := OpenPKI(e.keys, k.PkiSealed)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM([]byte(k.CaCertificate))
	if _, err := mustCert(t, p.APIServerCert).Verify(x509.VerifyOptions{Roots: roots, DNSName: k.APIVip}); err != nil {
		t.Errorf("API server certificate for the VIP: %v", err)
	}

	// Scale up: one more worker, w-3, bootstrapped with kubeadm join.
	if _, err := e.change(s, func(ctx context.Context, c *ent.Client) (*ent.KubernetesCluster, error) {
		return s.Scale(ctx, c, k.ID, 4)
	}); err != nil {
		t.Fatal(err)
	}
	k = waitFor(t, e.c, k.ID, "scaled up", func(k *ent.KubernetesCluster) bool { return countRole(k, RoleWorker, StateBootstrapping) == 1 })
	reportAll(t, e.c, k)
	k = waitFor(t, e.c, k.ID, "ACTIVE with 4 workers", func(k *ent.KubernetesCluster) bool {
		return k.Status == kubernetescluster.StatusActive && countRole(k, RoleWorker, StateReady) == 4
	})
	// Scale down to 2: w-3 and w-2 go.
	if _, err := e.change(s, func(ctx context.Context, c *ent.Client) (*ent.KubernetesCluster, error) {
		return s.Scale(ctx, c, k.ID, 2)
	}); err != nil {
		t.Fatal(err)
	}
	k = waitFor(t, e.c, k.ID, "scaled down", func(k *ent.KubernetesCluster) bool {
		return k.Status == kubernetescluster.StatusActive && countRole(k, RoleWorker, "") == 2
	})
	var workers []string
	for _, n := range k.Nodes {
		if n.Role == RoleWorker {
			workers = append(workers, n.Name)
		}
	}
	if !slices.Equal(workers, []string{"prod-w-0", "prod-w-1"}) || len(clusterVMs(t, e.c, k.ID)) != 6 {
		t.Errorf("after scaling down: workers %v, %d VMs", workers, len(clusterVMs(t, e.c, k.ID)))
	}

	// Upgrade: one node at a time, a new one ready before an old one goes.
	if _, err := e.change(s, func(ctx context.Context, c *ent.Client) (*ent.KubernetesCluster, error) {
		return s.Upgrade(ctx, c, k.ID, "v1.32.0")
	}); err != nil {
		t.Fatal(err)
	}
	maxCP, maxW := 0, 0
	deadline := time.Now().Add(60 * time.Second)
	for {
		k = get(t, e.c, k.ID)
		maxCP, maxW = max(maxCP, countActive(k, RoleControlPlane)), max(maxW, countActive(k, RoleWorker))
		if k.Status == kubernetescluster.StatusActive && upgraded(k, "v1.32.0") {
			break
		}
		if bootstrapping := countRole(k, RoleControlPlane, StateBootstrapping) + countRole(k, RoleWorker, StateBootstrapping); bootstrapping > 1 {
			t.Fatalf("%d nodes bootstrapping at once during the upgrade", bootstrapping)
		}
		reportAll(t, e.c, k)
		if time.Now().After(deadline) {
			t.Fatalf("upgrade stuck: %s (%s) %+v", k.Status, k.StatusReason, k.Nodes)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if maxCP > 4 || maxW > 3 {
		t.Errorf("upgrade surged to %d control planes and %d workers, want one node at a time", maxCP, maxW)
	}
	for _, vm := range clusterVMs(t, e.c, k.ID) {
		if vm.Type == virtualmachine.TypeControlPlane && strings.Contains(vm.UserData, "kubeadm init") {
			t.Errorf("%s after the upgrade runs kubeadm init: only the first control plane ever does", vm.Name)
		}
	}

	// Delete: VMs, then the VIP and load balancer, then the PKI with the record.
	vip := k.APIVip
	if err := s.inTx(ctx, func(ctx context.Context, c *ent.Client) error { return s.Delete(ctx, c, k.ID) }); err != nil {
		t.Fatal(err)
	}
	waitFor(t, e.c, k.ID, "gone", func(*ent.KubernetesCluster) bool { return false })
	if n := len(clusterVMs(t, e.c, k.ID)); n != 0 {
		t.Errorf("%d VMs left", n)
	}
	if e.c.LoadBalancer.Query().Where(loadbalancer.ID(lb.ID)).ExistX(ctx) || e.c.IPAddress.Query().Where(ipaddress.Address(vip)).ExistX(ctx) {
		t.Error("the load balancer or its VIP outlived the cluster")
	}
}

func (e *env) change(s *Service, fn func(context.Context, *ent.Client) (*ent.KubernetesCluster, error)) (*ent.KubernetesCluster, error) {
	var out *ent.KubernetesCluster
	err := s.inTx(placementtest.Ctx(), func(ctx context.Context, c *ent.Client) error {
		var err error
		out, err = fn(ctx, c)
		return err
	})
	return out, err
}

// countRole counts role's nodes in state ("" any but REMOVING).
func countRole(k *ent.KubernetesCluster, role, state string) int {
	n := 0
	for _, node := range k.Nodes {
		if node.Role == role && (node.State == state || (state == "" && node.State != StateRemoving)) {
			n++
		}
	}
	return n
}

func countActive(k *ent.KubernetesCluster, role string) int { return countRole(k, role, "") }

func upgraded(k *ent.KubernetesCluster, version string) bool {
	for _, n := range k.Nodes {
		if n.Role != RoleBastion && (n.Version != version || n.State != StateReady) {
			return false
		}
	}
	return countActive(k, RoleControlPlane) == k.ControlPlaneCount && countActive(k, RoleWorker) == k.WorkerCount
}

// TestQuotaTooSmall: a cluster the tenant's quota cannot hold in full creates nothing: no
// VM, no VIP; it is in ERROR with the quota named.
func TestQuotaTooSmall(t *testing.T) {
	e := newEnv(t)
	ctx := placementtest.Ctx()
	if _, err := e.site.Quota(ctx, e.site.Tenant, 10, 0); err != nil { // 5 VMs of 2 vCPUs; the cluster needs 7
		t.Fatal(err)
	}
	s := e.service(nil)
	k := e.create(t, s, "small", 3, 3, true)
	for range 3 {
		if err := s.Step(context.Background(), k.ID); err != nil {
			t.Fatal(err)
		}
	}
	k = get(t, e.c, k.ID)
	if k.Status != kubernetescluster.StatusError || !strings.Contains(k.StatusReason, "quota") || k.Phase != kubernetescluster.PhasePending {
		t.Errorf("status %s (%s), phase %s", k.Status, k.StatusReason, k.Phase)
	}
	if n := len(clusterVMs(t, e.c, k.ID)); n != 0 {
		t.Errorf("%d VMs created", n)
	}
	if n := e.c.VirtualMachine.Query().Where(virtualmachine.NameHasPrefix("small-")).CountX(ctx); n != 0 {
		t.Errorf("%d VMs named after the cluster", n)
	}
	if e.c.LoadBalancer.Query().Where(loadbalancer.Name("small-api")).ExistX(ctx) {
		t.Error("a VIP was allocated")
	}
}

// TestCreateValidation: bad input is VALIDATION on its field, and nothing is written.
func TestCreateValidation(t *testing.T) {
	e := newEnv(t)
	s := e.service(nil)
	for _, tc := range []struct {
		field string
		in    func(*ent.CreateKubernetesClusterInput)
	}{
		{"flavorID", func(in *ent.CreateKubernetesClusterInput) { in.FlavorID = nil }},
		{"plugins", func(in *ent.CreateKubernetesClusterInput) { in.Plugins = []string{"calico", "flannel"} }},
		{"serviceCidr", func(in *ent.CreateKubernetesClusterInput) { in.ServiceCidr = new("10.244.1.0/24") }},
		{"podCidr", func(in *ent.CreateKubernetesClusterInput) { in.PodCidr = new("banana") }},
		{"regionID", func(in *ent.CreateKubernetesClusterInput) {
			in.RegionID = e.c.Region.Create().SetName(e.site.Prefix + "-bare").SaveX(placementtest.Ctx()).ID
		}},
	} {
		in := ent.CreateKubernetesClusterInput{Name: "bad-" + strings.ToLower(tc.field), Version: "1.31", TenantID: e.site.Tenant,
			RegionID: e.site.Region, FlavorID: &e.flavor.ID}
		tc.in(&in)
		err := s.inTx(placementtest.Ctx(), func(ctx context.Context, c *ent.Client) error {
			_, err := s.Create(ctx, c, in)
			return err
		})
		if ae, ok := apierr.As(err); !ok || ae.Code != apierr.CodeValidation || ae.Field != tc.field {
			t.Errorf("%s: %v", tc.field, err)
		}
	}
}

// TestKubeconfigAccess: the tenant's admins, operators and admins read the kubeconfig (each
// read audited); a tenant member and a platform viewer are FORBIDDEN; another tenant's admin
// gets NOT_FOUND.
func TestKubeconfigAccess(t *testing.T) {
	e := newEnv(t)
	s := e.service(nil)
	k := e.create(t, s, "kc", 1, 0, false)
	for range 4 {
		if err := s.Step(context.Background(), k.ID); err != nil {
			t.Fatal(err)
		}
	}
	other := e.c.Tenant.Create().SetName(e.site.Prefix + "-other").SaveX(placementtest.Ctx())
	viewer := func(role authz.Role, domain string) context.Context {
		return authz.NewContext(context.Background(), &authz.Viewer{Name: string(role), Bindings: []authz.Binding{{Role: role, Domain: domain}}})
	}
	tenant := authz.TenantDomain(e.site.Tenant)
	for _, tc := range []struct {
		name string
		ctx  context.Context
		code apierr.Code
	}{
		{"tenant admin", viewer(authz.RoleTenantAdmin, tenant), ""},
		{"operator", viewer(authz.RoleOperator, authz.Platform), ""},
		{"admin", viewer(authz.RoleAdmin, authz.Platform), ""},
		{"tenant member", viewer(authz.RoleTenantMember, tenant), apierr.CodeForbidden},
		{"platform viewer", viewer(authz.RoleViewer, authz.Platform), apierr.CodeForbidden},
		{"other tenant's admin", viewer(authz.RoleTenantAdmin, authz.TenantDomain(other.ID)), apierr.CodeNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := e.audits(t, k.ID)
			kc, err := s.Kubeconfig(tc.ctx, e.c, k.ID)
			if tc.code == "" {
				if err != nil || kc == nil || !strings.Contains(*kc, "client-key-data") {
					t.Fatalf("kubeconfig: %v", err)
				}
				if got := e.audits(t, k.ID); got != before+1 {
					t.Errorf("%d audit rows for one read", got-before)
				}
				return
			}
			if ae, ok := apierr.As(err); !ok || ae.Code != tc.code || kc != nil {
				t.Fatalf("got %v, want %s", err, tc.code)
			}
			if ae, _ := apierr.As(err); tc.code == apierr.CodeNotFound && strings.Contains(ae.Message, "kc") {
				t.Errorf("NOT_FOUND names the cluster: %s", ae.Message)
			}
		})
	}
}

// TestNodeBootstrapAccess: a cluster node's userData (the first control plane's holds the
// CA key) and its assignment's configDrive follow the kubeconfig's policy: the tenant's
// admins, operators and admins read them, a tenant member and a platform viewer do not (the
// GraphQL fields are null for them); the agent of the node reads its assignment's drive; an
// ordinary VM of the tenant stays readable by its members.
func TestNodeBootstrapAccess(t *testing.T) {
	e := newEnv(t)
	s := e.service(nil)
	k := e.create(t, s, "ud", 1, 0, false)
	for range 4 {
		if err := s.Step(context.Background(), k.ID); err != nil {
			t.Fatal(err)
		}
	}
	ctx := placementtest.Ctx()
	cp := e.c.VirtualMachine.Query().Where(virtualmachine.Name("ud-cp-0")).OnlyX(ctx)
	if !strings.Contains(cp.UserData, "/etc/kubernetes/pki/ca.key") {
		t.Fatalf("the first control plane has no CA key in its user-data")
	}
	// The assignment the provisioning task would write (no worker runs here).
	node := e.c.ComputeNode.Query().FirstIDX(ctx)
	a := e.c.Assignment.Create().SetNodeID(node).SetVirtualMachineID(cp.ID).SetVMID(cp.ID).
		SetConfigDrive(`{"user_data": "..."}`).SaveX(ctx)
	plain := e.c.VirtualMachine.Create().SetName(e.site.Prefix + "-plain").SetTenantID(e.site.Tenant).
		SetRegionID(e.site.Region).SetFlavorID(e.flavor.ID).SetUserData("#cloud-config\n").SaveX(ctx)
	viewer := func(role authz.Role, domain string) context.Context {
		return authz.NewContext(context.Background(), &authz.Viewer{Name: string(role), Bindings: []authz.Binding{{Role: role, Domain: domain}}})
	}
	tenant := authz.TenantDomain(e.site.Tenant)
	for _, tc := range []struct {
		name            string
		ctx             context.Context
		userData, drive bool
	}{
		{"tenant admin", viewer(authz.RoleTenantAdmin, tenant), true, true},
		{"operator", viewer(authz.RoleOperator, authz.Platform), true, true},
		{"admin", viewer(authz.RoleAdmin, authz.Platform), true, true},
		{"tenant member", viewer(authz.RoleTenantMember, tenant), false, false},
		{"platform viewer", viewer(authz.RoleViewer, authz.Platform), false, false},
		{"agent of the node", viewer(authz.RoleAgent, authz.NodeDomain(node)), false, true},
		{"agent of another node", viewer(authz.RoleAgent, authz.NodeDomain(node+100000)), false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ud, err := MayReadNodeBootstrap(tc.ctx, e.c, cp.ID)
			if err != nil || ud != tc.userData {
				t.Errorf("userData readable: %v (%v), want %v", ud, err, tc.userData)
			}
			drive, err := MayReadAssignmentDrive(tc.ctx, e.c, a)
			if err != nil || drive != tc.drive {
				t.Errorf("configDrive readable: %v (%v), want %v", drive, err, tc.drive)
			}
		})
	}
	if ok, err := MayReadNodeBootstrap(viewer(authz.RoleTenantMember, tenant), e.c, plain.ID); err != nil || !ok {
		t.Errorf("a member cannot read an ordinary VM's userData: %v", err)
	}
}

func (e *env) audits(t testing.TB, id int) int {
	t.Helper()
	n, err := e.c.AuditLog.Query().Where(auditlog.Action("readKubeconfig"), auditlog.ObjectID(id)).Count(placementtest.Ctx())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestServiceMeshAndFailure: a cluster with an Istio mesh renders the mesh's install into
// its first control plane's bootstrap; a report that kubeadm init failed puts the cluster
// in ERROR with the node, the step and the reason; the report of success (mesh installed)
// makes the cluster ACTIVE and its mesh, and the mesh itself, ACTIVE.
func TestServiceMeshAndFailure(t *testing.T) {
	e := newEnv(t)
	ctx := placementtest.Ctx()
	s := e.service(nil)
	mesh := e.c.ServiceMesh.Create().SetName(e.site.Prefix + "-mesh").SetType(servicemesh.TypeIstio).SaveX(ctx)
	var k *ent.KubernetesCluster
	err := s.inTx(ctx, func(ctx context.Context, c *ent.Client) error {
		var err error
		k, err = s.Create(ctx, c, ent.CreateKubernetesClusterInput{Name: "meshy", Version: "1.31", TenantID: e.site.Tenant,
			RegionID: e.site.Region, FlavorID: &e.flavor.ID, ControlPlaneCount: new(1), WorkerCount: new(1), ServiceMeshID: &mesh.ID})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for range 4 {
		if err := s.Step(context.Background(), k.ID); err != nil {
			t.Fatal(err)
		}
	}
	k = get(t, e.c, k.ID)
	if k.ServiceMeshStatus != kubernetescluster.ServiceMeshStatusInstalling {
		t.Errorf("mesh %s before any report", k.ServiceMeshStatus)
	}
	cp := e.c.VirtualMachine.Query().Where(virtualmachine.Name("meshy-cp-0")).OnlyX(ctx)
	if !strings.Contains(cp.UserData, "istioctl install") || !strings.Contains(cp.UserData, "MESH=ok") {
		t.Error("the first control plane does not install the mesh")
	}
	if err := RecordReport(context.Background(), e.c, time.Now(), cp.ID, Report{Step: StepInit, Result: "failed",
		Reason: "[ERROR Port-6443]: Port 6443 is in use"}); err != nil {
		t.Fatal(err)
	}
	k = get(t, e.c, k.ID)
	if k.Status != kubernetescluster.StatusError || !strings.Contains(k.StatusReason, "meshy-cp-0 failed at kubeadm-init: [ERROR Port-6443]") {
		t.Errorf("after a failed init: %s (%s)", k.Status, k.StatusReason)
	}
	if k.Nodes[0].State != StateFailed || k.Nodes[0].Step != StepInit {
		t.Errorf("node %+v", k.Nodes[0])
	}
	// The guest ran its script again (a reboot) and it went through.
	if err := RecordReport(context.Background(), e.c, time.Now(), cp.ID, Report{Step: StepReady, Result: "ok", Mesh: "ok"}); err != nil {
		t.Fatal(err)
	}
	k = get(t, e.c, k.ID)
	if k.Status != kubernetescluster.StatusActive || k.ServiceMeshStatus != kubernetescluster.ServiceMeshStatusActive ||
		e.c.ServiceMesh.GetX(ctx, mesh.ID).Status != servicemesh.StatusActive {
		t.Errorf("after success: %s (%s), mesh %s", k.Status, k.StatusReason, k.ServiceMeshStatus)
	}
	if !strings.Contains(k.StatusReason, "1/1 control planes and 0/1 workers ready") {
		t.Errorf("progress %q", k.StatusReason)
	}
}

// TestReplaceFailedWorker: a worker whose VM ends in ERROR is replaced by a new worker (a
// fresh index, never the old name) and its VM deleted; the cluster stays at its worker count.
func TestReplaceFailedWorker(t *testing.T) {
	e := newEnv(t)
	ctx := placementtest.Ctx()
	s := e.service(nil)
	k := e.create(t, s, "heal", 1, 2, false)
	for range 4 {
		if err := s.Step(context.Background(), k.ID); err != nil {
			t.Fatal(err)
		}
	}
	reportAll(t, e.c, get(t, e.c, k.ID))
	bad := e.c.VirtualMachine.Query().Where(virtualmachine.Name("heal-w-1")).OnlyX(ctx)
	e.c.VirtualMachine.UpdateOne(bad).SetStatus(virtualmachine.StatusError).SetStatusReason("its node could not make it RUNNING").ExecX(ctx)
	for range 3 { // replace, then forget the deleted one
		if err := s.Step(context.Background(), k.ID); err != nil {
			t.Fatal(err)
		}
	}
	k = get(t, e.c, k.ID)
	var names []string
	for _, n := range k.Nodes {
		if n.Role == RoleWorker {
			names = append(names, n.Name+":"+n.State)
		}
	}
	if !slices.Equal(names, []string{"heal-w-0:READY", "heal-w-2:BOOTSTRAPPING"}) {
		t.Errorf("workers %v", names)
	}
	if e.c.VirtualMachine.Query().Where(virtualmachine.ID(bad.ID)).ExistX(ctx) {
		t.Error("the failed VM was not deleted")
	}
	if k.Status != kubernetescluster.StatusUpdating && k.Status != kubernetescluster.StatusActive {
		t.Errorf("status %s", k.Status)
	}
	reportAll(t, e.c, k)
	if k = get(t, e.c, k.ID); k.Status != kubernetescluster.StatusActive || !strings.Contains(k.StatusReason, "2/2 workers ready") {
		t.Errorf("after the replacement joined: %s (%s)", k.Status, k.StatusReason)
	}
}
