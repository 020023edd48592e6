package nodeagent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v5"
	"go.opentelemetry.io/otel/trace"

	"github.com/virtflow/virtflow/agent/bgp"
	"github.com/virtflow/virtflow/agent/configdrive"
	"github.com/virtflow/virtflow/agent/hostnet"
	"github.com/virtflow/virtflow/agent/hypervisor"
	"github.com/virtflow/virtflow/agent/lbnet"
	"github.com/virtflow/virtflow/agent/vmnet"
	"github.com/virtflow/virtflow/internal/platform/telemetry"
)

// Defaults of [Config].
const (
	DefaultHeartbeatInterval = 10 * time.Second
	DefaultResyncInterval    = 30 * time.Second
	DefaultShutdownTimeout   = 60 * time.Second
	DefaultParallelism       = 4
	RequestTimeout           = 30 * time.Second
	DefaultAttempts          = 3
	DefaultRetryDelay        = time.Second
	DefaultNetwork           = "default"
	Version                  = "0.6.0"
)

// Config configures an [Agent].
type Config struct {
	// APIURL is the GraphQL endpoint, e.g. http://api:8080/query.
	APIURL string
	// Token is the agent token (bearer) of the node.
	Token string
	// NodeID is the ComputeNode's id; empty discovers it from the token (the only node the
	// token can read).
	NodeID string
	// Hypervisor realizes the assignments (required).
	Hypervisor hypervisor.Hypervisor
	// HTTPClient sends the requests; when nil, a client whose requests time out after
	// RequestTimeout.
	HTTPClient *http.Client

	// HeartbeatInterval and ResyncInterval: DefaultHeartbeatInterval and
	// DefaultResyncInterval when zero.
	HeartbeatInterval time.Duration
	ResyncInterval    time.Duration
	// ShutdownTimeout bounds a guest's ACPI shutdown before the domain is powered off.
	ShutdownTimeout time.Duration
	// Parallelism bounds the assignments realized at the same time.
	Parallelism int
	// Attempts is how often an assignment is tried before it is reported FAILED
	// (DefaultAttempts when zero); RetryDelay is the first wait between attempts, doubling
	// with jitter (newBackOff) for the next ones (DefaultRetryDelay when zero).
	Attempts   int
	RetryDelay time.Duration

	// DiskDir, when set, is where the root disks of VMs without an image live:
	// <DiskDir>/vf-<vm id>.qcow2 is attached to a VM with a flavor disk. Empty makes such
	// VMs diskless (network boot). A VM with an image gets an overlay in Pool instead.
	DiskDir string
	// Pool is the libvirt storage pool (a directory pool, created if missing, at PoolPath)
	// holding the node's cached images and the VMs' root disks: DefaultPool and
	// DefaultPoolPath when empty.
	Pool     string
	PoolPath string
	// CacheDir holds image downloads in progress and the record of the images cached in
	// the pool; a new temporary directory when empty (the cache is then trusted for this
	// run only: a restarted agent uploads images again).
	CacheDir string
	// ConfigDriveDir is where the VMs' config drives (<domain>-cidata.iso) are built;
	// DiskDir when empty, else a directory under the system's temporary directory.
	ConfigDriveDir string
	// DefaultNetwork is the libvirt network of a port of no network (DefaultNetwork when
	// empty). A port of a network goes to the network's bridge, hostnet.BridgeName.
	DefaultNetwork string
	// Networks, when set, creates the bridge (and VLAN interface) of each network a VM of the
	// node needs before the VM starts, and removes those it created once no VM needs them
	// (hostnet.Manager). Nil leaves host networking to the operator: the bridges must exist.
	Networks HostNetworks
	// NetworkMode is NetworkBridged (default, also when empty) or NetworkRouted: then Routed
	// realizes a namespace and a /32 route per VM address, NICs are taps moved into those
	// namespaces, the config drive gives the guest its /32 with gateway 169.254.1.1, and the
	// addresses are announced by BGP (BGP; peers from the graph).
	NetworkMode string
	// Routed realizes the VM addresses' namespaces in routed mode (*vmnet.Manager).
	Routed RoutedNetwork
	// BGP configures the node's speaker in routed mode.
	BGP BGPConfig
	// MetadataListener, when set in routed mode, is where the agent serves the metadata
	// service (vmnet.NewMetadataHandler) to its VMs: a listener on 169.254.1.2:80.
	MetadataListener net.Listener
	// GuestAPIURL is the URL a VM's guest calls when it is up (written onto its config
	// drive with a fresh credential; see package guest): the API's URL with the path
	// /guest/ready when empty, none with "none". It must be reachable from the VMs'
	// networks, which the API's URL often is not.
	GuestAPIURL string
	// OnConfigDrive, when set, is called with what each config drive the agent built says,
	// its guest credential included: the simulated fleet of --demo plays the guest with it.
	OnConfigDrive func(spec configdrive.Spec)
	// ReservedCPUs are the host CPUs (0 to ReservedCPUs-1) kept for the host: never pinned to
	// a VM, outside the shared set, and not in the capacity reported.
	ReservedCPUs int
	// DiskCapacityGB, when set, is reported as the node's disk capacity instead of the
	// size of Pool.
	DiskCapacityGB int
	// Facts are the host's OS and kernel as reported; ReadHostFacts("") when nil.
	Facts *HostFacts
	// AgentVersion is reported with each heartbeat; Version when empty.
	AgentVersion string

	// CheckTick and CheckRefresh pace the node's checks (RunChecks): DefaultCheckTick and
	// DefaultCheckRefresh when zero. NoChecks turns them off.
	CheckTick, CheckRefresh time.Duration
	NoChecks                bool

	// NoSubscription turns off the assignmentChanged subscription: changes are then picked
	// up by the periodic resync only.
	NoSubscription bool
	// NoConsole turns off the console relay (ConsoleRelay), which otherwise runs when the
	// hypervisor implements hypervisor.Consoler.
	NoConsole bool
	// MetricsAddr is where the agent serves MetricsHandler (cmd/nodeagent --metrics-addr),
	// told to the server for its Prometheus service discovery over the console relay's
	// control connection; empty: none.
	MetricsAddr string

	// Tracer, when set, traces the agent's GraphQL requests (telemetry.FromEnv's provider).
	Tracer trace.TracerProvider

	// FlapLimit power changes of one domain within FlapWindow make it flapping (see
	// flapGuard): DefaultFlapLimit and DefaultFlapWindow when zero. Clock is the flap
	// guard's time (time.Now when nil; tests pass their own).
	FlapLimit  int
	FlapWindow time.Duration
	Clock      func() time.Time

	// LoadBalancers, when set, realizes the load balancers the API says the node serves
	// (package lbnet: HAProxy, VIPs announced over BGP) every LoadBalancerInterval
	// (DefaultLoadBalancerInterval when zero) and reports their state and member health.
	LoadBalancers        *lbnet.Node
	LoadBalancerInterval time.Duration

	// Log receives the agent's logs; slog.Default() when nil.
	Log *slog.Logger
	// OnReport, when set, is called after each assignment report with the error of sending
	// it (for tests and metrics).
	OnReport func(r AssignmentReport, err error)
}

// Agent is one node's agent. Create it with New and run it with Run.
type Agent struct {
	cfg    Config
	api    *Client
	hv     hypervisor.Hypervisor
	images *imageCache
	facts  HostFacts
	log    *slog.Logger
	nodeID string
	flaps  *flapGuard

	mu       sync.Mutex
	reported map[string]AssignmentReport // last report sent per assignment, to send each once
	affinity map[string]string           // shared CPU set last applied to each running domain
	numaSent string                      // the NUMA nodes last reported (fmt.Sprint)

	routes    *bgp.Table                    // what the node announces (VM /32s, VIPs)
	speaker   bgp.Announcer                 // the running BGP speaker, nil when none
	instances map[netip.Addr]vmnet.Instance // the running VMs by address (metadata service)
	nets      map[int64]vmNet               // routed mode: each VM's addresses and rules, last read
}

// HostNetworks creates and removes the host side of the VMs' networks: *hostnet.Manager.
type HostNetworks interface {
	// Ensure makes the network's bridge (and VLAN interface) exist and returns its name.
	Ensure(n hostnet.Network) (string, error)
	// Prune removes what it created for networks whose bridges are not in keep, unless in
	// use, and returns what it removed.
	Prune(keep []string) ([]string, error)
}

// New checks cfg and returns an agent; it does not contact anything yet.
func New(cfg Config) (*Agent, error) {
	if cfg.APIURL == "" || cfg.Token == "" {
		return nil, errors.New("nodeagent: API URL and token are required")
	}
	if cfg.Hypervisor == nil {
		return nil, errors.New("nodeagent: a hypervisor is required")
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: RequestTimeout}
	}
	switch cfg.NetworkMode {
	case "", NetworkBridged:
		cfg.NetworkMode = NetworkBridged
	case NetworkRouted:
		if cfg.Routed == nil {
			return nil, errors.New("nodeagent: routed network mode needs the VM address namespaces (Routed)")
		}
	default:
		return nil, fmt.Errorf("nodeagent: network mode %q: want %s or %s", cfg.NetworkMode, NetworkBridged, NetworkRouted)
	}
	if cfg.HeartbeatInterval <= 0 {
		cfg.HeartbeatInterval = DefaultHeartbeatInterval
	}
	if cfg.ResyncInterval <= 0 {
		cfg.ResyncInterval = DefaultResyncInterval
	}
	if cfg.ShutdownTimeout <= 0 {
		cfg.ShutdownTimeout = DefaultShutdownTimeout
	}
	if cfg.Parallelism <= 0 {
		cfg.Parallelism = DefaultParallelism
	}
	if cfg.Attempts <= 0 {
		cfg.Attempts = DefaultAttempts
	}
	if cfg.RetryDelay <= 0 {
		cfg.RetryDelay = DefaultRetryDelay
	}
	if cfg.DefaultNetwork == "" {
		cfg.DefaultNetwork = DefaultNetwork
	}
	if cfg.AgentVersion == "" {
		cfg.AgentVersion = Version
	}
	log := cfg.Log
	if log == nil {
		log = slog.Default()
	}
	images, err := newImageCache(cfg)
	if err != nil {
		return nil, err
	}
	facts := ReadHostFacts("")
	if cfg.Facts != nil {
		facts = *cfg.Facts
	}
	return &Agent{
		facts: facts,
		cfg:   cfg,
		api: &Client{URL: cfg.APIURL, Token: cfg.Token, HTTP: cfg.HTTPClient, Tracer: tracer(cfg.Tracer),
			Propagator: telemetry.Propagator()},
		hv:       cfg.Hypervisor,
		images:   images,
		log:      log,
		nodeID:   cfg.NodeID,
		flaps:    newFlapGuard(cfg.FlapLimit, cfg.FlapWindow, cfg.Clock),
		reported: map[string]AssignmentReport{},
		affinity: map[string]string{},

		routes:    bgp.NewTable(),
		instances: map[netip.Addr]vmnet.Instance{},
		nets:      map[int64]vmNet{},
	}, nil
}

// tracer is the agent's tracer from tp, nil when tp is nil.
func tracer(tp trace.TracerProvider) trace.Tracer {
	if tp == nil {
		return nil
	}
	return tp.Tracer("github.com/virtflow/virtflow/agent/nodeagent")
}

// NodeID returns the node the agent works for (known once Run has started).
func (ag *Agent) NodeID() string {
	ag.mu.Lock()
	defer ag.mu.Unlock()
	return ag.nodeID
}

// Run heartbeats and resyncs until ctx ends, then returns nil. It fails early only when the
// node cannot be identified; errors of single heartbeats or resyncs are logged and retried on
// the next tick. The hypervisor is left open: its owner closes it.
func (ag *Agent) Run(ctx context.Context) error {
	if ag.NodeID() == "" {
		id, err := retry(ctx, ag.log, "discover node", func(ctx context.Context) (string, error) { return findNode(ctx, ag.api) })
		if err != nil {
			return err
		}
		ag.mu.Lock()
		ag.nodeID = id
		ag.mu.Unlock()
	}
	ag.log = ag.log.With("node", ag.nodeID)
	ag.log.Info("node agent running", "api", ag.cfg.APIURL, "heartbeat", ag.cfg.HeartbeatInterval.String(), "resync", ag.cfg.ResyncInterval.String())

	// The heartbeat, resync and checks loops hold no goroutine between their runs
	// (periodic): the simulated fleet of --demo runs hundreds of agents in one process.
	var wg sync.WaitGroup
	loops := []*periodic{
		ag.every(ctx, ag.cfg.HeartbeatInterval, "heartbeat", ag.Heartbeat),
	}
	resync := ag.every(ctx, ag.cfg.ResyncInterval, "resync", ag.Resync)
	kick := resync.kick // a change seen: resync now, or right after the resync on
	loops = append(loops, resync)
	if !ag.cfg.NoChecks {
		loops = append(loops, ag.startChecks(ctx))
	}
	if !ag.cfg.NoSubscription {
		wg.Add(1)
		go func() { defer wg.Done(); ag.watch(ctx, kick) }()
	}
	if ag.cfg.LoadBalancers != nil {
		wg.Add(1)
		go func() { defer wg.Done(); ag.runLoadBalancers(ctx) }()
	}
	if ag.routed() {
		if err := ag.cfg.Routed.Setup(); err != nil {
			ag.log.Error("routed network: cannot set the node up", "err", err)
		}
		wg.Add(1)
		go func() { defer wg.Done(); ag.runBGP(ctx) }()
		if ag.cfg.MetadataListener != nil {
			wg.Add(1)
			go func() { defer wg.Done(); ag.serveMetadata(ctx, ag.cfg.MetadataListener) }()
		}
	}
	if cons, ok := ag.cfg.Hypervisor.(hypervisor.Consoler); ok && !ag.cfg.NoConsole {
		relay := &ConsoleRelay{APIURL: ag.cfg.APIURL, Token: ag.cfg.Token, Consoles: cons, HTTPClient: ag.cfg.HTTPClient,
			MetricsAddr: ag.cfg.MetricsAddr, Log: ag.log.With("component", "console")}
		relay.Run(ctx) // in Run's own goroutine, which has nothing else to do until ctx ends
	}
	for _, l := range loops {
		l.wait()
	}
	wg.Wait()
	ag.log.Info("node agent stopped")
	return nil
}

// every runs fn at once, then every d and whenever the returned loop is kicked, until ctx
// ends, logging its errors (see periodic; wait on it for the last run to end).
func (ag *Agent) every(ctx context.Context, d time.Duration, what string, fn func(context.Context) error) *periodic {
	return startPeriodic(ctx, d, func(ctx context.Context) {
		if err := fn(ctx); err != nil && ctx.Err() == nil {
			ag.log.Warn(what+" failed", "err", err)
		}
	})
}

// retry calls fn until it succeeds, ctx ends or it fails with ErrNoNode, waiting longer
// between tries (newBackOff: from 1 s up to 30 s, with jitter).
func retry[T any](ctx context.Context, log *slog.Logger, what string, fn func(context.Context) (T, error)) (T, error) {
	return backoff.Retry(ctx, func() (T, error) {
		v, err := fn(ctx)
		if errors.Is(err, ErrNoNode) {
			return v, backoff.Permanent(err)
		}
		return v, err
	}, backoff.WithBackOff(newBackOff(time.Second, 30*time.Second)), backoff.WithMaxElapsedTime(0),
		backoff.WithNotify(func(err error, wait time.Duration) { log.Warn(what+" failed; retrying", "err", err, "in", wait) }))
}
