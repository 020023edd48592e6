// Package stacktest starts, for tests of API clients (the Terraform provider, the CLI), the
// whole platform in the test process: the API server and a standalone worker
// (app.RunServer, app.RunWorker) on the test's PostgreSQL database and a private Redis, a small site
// (placementtest: a region, racks, compute nodes in a cluster, a tenant, a flavor, an image)
// and a simulated node agent per node (package fleet), so that VMs created through the
// API become ACTIVE as they would on real hosts.
package stacktest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/virtflow/virtflow/agent/configdrive"
	"github.com/virtflow/virtflow/agent/hypervisor"
	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/controllers/kubecluster"
	"github.com/virtflow/virtflow/demo/fleet"
	"github.com/virtflow/virtflow/domain/guest"
	"github.com/virtflow/virtflow/domain/placement/placementtest"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/image"
	"github.com/virtflow/virtflow/internal/app"
	"github.com/virtflow/virtflow/internal/platform/config"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
	"github.com/virtflow/virtflow/internal/testkit/testlog"
)

// Spec sizes the stack.
type Spec struct {
	// Racks and HostsPerRack: one compute node per host (default 2 × 2).
	Racks, HostsPerRack int
	// CPU and MemoryMB of every node (default 64 vCPUs, 64 GiB).
	CPU      int
	MemoryMB int64
	// FailureRate makes that share of the simulated hypervisors' operations fail; Attempts is
	// how often an agent tries an assignment before reporting it FAILED (the VM goes to
	// ERROR). Zero: nothing fails; the agents' default attempts.
	FailureRate float64
	Attempts    int
	// PowerZones spreads the racks over that many power zones (default 1).
	PowerZones int
	// Guests makes every VM's guest call the readiness function GuestBoot after its drive
	// was built (fleet.SimulateGuest), Kubernetes nodes with their bootstrap's outcome;
	// the server and worker then share a secret key (VIRTFLOW_SECRET_KEY) for the clusters' PKI.
	Guests    bool
	GuestBoot time.Duration
}

// Stack is a running platform.
type Stack struct {
	// URL is the server's base URL (http://127.0.0.1:port); GraphQL is URL + "/query".
	URL string
	// AdminToken is a platform admin's API token.
	AdminToken string
	// Client writes fixtures directly (use gqltest.System() as its context).
	Client *ent.Client
	Site   *placementtest.Site
	// Flavor (1 vCPU, 128 MB) and Image (ACTIVE) of the site, and their names.
	Flavor *ent.Flavor
	Image  *ent.Image
}

// Start starts a stack for the test; everything stops when the test ends. dsn is the test's
// PostgreSQL database (testdb.DSN or testdb.New).
func Start(t testing.TB, dsn string, spec Spec) *Stack {
	t.Helper()
	if spec.Racks == 0 {
		spec.Racks = 2
	}
	if spec.HostsPerRack == 0 {
		spec.HostsPerRack = 2
	}
	if spec.CPU == 0 {
		spec.CPU = 64
	}
	if spec.MemoryMB == 0 {
		spec.MemoryMB = 65536
	}
	env := gqltest.Postgres(t, dsn) // migrates; its client writes the fixtures
	ctx := gqltest.System()
	site, err := placementtest.Build(ctx, env.Client, placementtest.Spec{Racks: spec.Racks, HostsPerRack: spec.HostsPerRack,
		PowerZones: max(spec.PowerZones, 1), NetworkZones: 1, CPU: spec.CPU, MemoryMB: spec.MemoryMB, DiskGB: 2000, Cores: spec.CPU / 2})
	if err != nil {
		t.Fatal(err)
	}
	fl, err := site.Flavor(ctx, 1, 128, 0, false)
	if err != nil {
		t.Fatal(err)
	}

	// The admin secret is gqltest's: another secret would retire it. Redis is a private
	// redis-server: the shared one serves every test package at once, and another package's
	// worker must never take this stack's tasks (whose VMs are not in its database).
	cfg := config.Config{Addr: "127.0.0.1:0", DatabaseURL: dsn, AdminToken: gqltest.AdminToken, ShutdownGrace: 5 * time.Second, Introspection: true,
		RedisURL: testdb.PrivateRedis(t), ImageDir: t.TempDir()}
	if spec.Guests {
		cfg.SecretKey = strings.Repeat("5a", 32)
	}
	log := testlog.OnFailure(t)
	runCtx, stop := context.WithCancel(authz.SystemContext(context.Background(), "stacktest"))
	ready, serverDone, workerDone := make(chan string, 1), make(chan error, 1), make(chan error, 1)
	go func() { serverDone <- app.RunServer(runCtx, cfg, log, func(a string) { ready <- a }) }()
	go func() { workerDone <- app.RunWorker(runCtx, cfg, log) }()
	fleetDone := make(chan error, 1)
	fleetDone <- nil
	t.Cleanup(func() { stop(); <-serverDone; <-workerDone; <-fleetDone })
	st := &Stack{AdminToken: gqltest.AdminToken, Client: env.Client, Site: site, Flavor: fl}
	select {
	case a := <-ready:
		st.URL = "http://" + a
	case err := <-serverDone:
		serverDone <- err
		t.Fatalf("server: %v", err)
	case <-time.After(2 * time.Minute):
		t.Fatal("server not ready after 2 minutes")
	}

	st.Image, err = env.Client.Image.Create().SetName(site.Prefix + "-image").SetSource("https://images.example/debian-12.qcow2").
		SetStatus(image.StatusActive).Save(ctx)
	if err != nil {
		t.Fatal(err)
	}

	ids := make([]int, len(site.Nodes))
	for i, n := range site.Nodes {
		ids[i] = n.ID
	}
	nodes, err := fleet.Provision(ctx, env.Client, env.Identity, ids)
	if err != nil {
		t.Fatal(err)
	}
	var onDrive func(configdrive.Spec)
	if spec.Guests {
		onDrive = fleet.SimulateGuest(runCtx, guest.New(env.Client, guest.Config{OnBootstrap: kubecluster.OnBootstrap(time.Now)}),
			spec.GuestBoot, log)
	}
	f, err := fleet.New(fleet.Config{
		OnConfigDrive: onDrive,
		APIURL:        st.URL + "/query", Nodes: nodes, Log: log,
		Delays:            hypervisor.OperationDelays{Define: 20 * time.Millisecond, Start: 50 * time.Millisecond, Shutdown: 50 * time.Millisecond, Stop: 20 * time.Millisecond, Reboot: 50 * time.Millisecond, Undefine: 20 * time.Millisecond},
		HeartbeatInterval: time.Second, ResyncInterval: 5 * time.Second, RetryDelay: 50 * time.Millisecond,
		FailureRate: spec.FailureRate, Attempts: spec.Attempts, Seed: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	<-fleetDone
	go func() { fleetDone <- f.Run(runCtx) }()
	return st
}
