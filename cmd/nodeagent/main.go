// Command nodeagent runs on every hypervisor host: it heartbeats its node to the VirtFlow API
// every 10 s with capacity and health, reads its assignments (a full resync at start and
// every 30 s), realizes them through libvirt (go-libvirt; qemu:///system by default,
// test:///default in tests) and reports each assignment's real state. It keeps no database:
// after a restart it rebuilds its view from libvirt and the API. The logic lives in package
// nodeagent; this main only reads the configuration and handles signals.
//
// Configuration (flag, or environment variable):
//
//	--api-url          VIRTFLOW_API_URL          GraphQL endpoint (http://127.0.0.1:8080/query)
//	--token            VIRTFLOW_AGENT_TOKEN      the node's agent token
//	--credential-file  VIRTFLOW_CREDENTIAL_FILE  where the agent token is kept (/var/lib/virtflow/agent/token, 0600)
//	--join-token       VIRTFLOW_JOIN_TOKEN       one-time join token: registers the node when there is no credential yet, or the stored one was revoked (reenrollComputeNode)
//	--hostname         VIRTFLOW_HOSTNAME         the host's name when the join token makes a new node (the system's)
//	--node-id          VIRTFLOW_NODE_ID          the ComputeNode id; empty: the one the token may read
//	--libvirt-socket   VIRTFLOW_LIBVIRT_SOCKET   libvirtd socket (/run/libvirt/libvirt-sock)
//	--libvirt-uri      VIRTFLOW_LIBVIRT_URI      libvirt URI (qemu:///system)
//	--domain-type      VIRTFLOW_DOMAIN_TYPE      auto, kvm or qemu (auto: kvm only when a probe guest really boots under KVM)
//	--kvm-probe-timeout VIRTFLOW_KVM_PROBE_TIMEOUT how long auto's probe may take (20s)
//	--simulate         VIRTFLOW_SIMULATE=true    use an in-memory simulated hypervisor instead
//	--config-drive-dir VIRTFLOW_CONFIG_DRIVE_DIR where the config drives <domain>-cidata.iso are built
//	--guest-api-url   VIRTFLOW_GUEST_API_URL   URL the guests call when they are up (default: --api with path /guest/ready; "none": no call)
//	--disk-dir         VIRTFLOW_DISK_DIR         where root disks of VMs without an image are (empty: diskless)
//	--pool             VIRTFLOW_POOL             libvirt storage pool of cached images and root disks (virtflow)
//	--pool-path        VIRTFLOW_POOL_PATH        its directory when the agent creates it (/var/lib/virtflow/pool)
//	--cache-dir        VIRTFLOW_CACHE_DIR        image downloads in progress and the cache's records (/var/lib/virtflow/agent)
//	--heartbeat, --resync                        intervals (10s, 30s)
//	--reserved-cpus    VIRTFLOW_RESERVED_CPUS    host CPUs 0..N-1 kept for the host (0)
//	--uplink           VIRTFLOW_UPLINK           interface carrying networks' VLANs (none)
//	--manage-networks  VIRTFLOW_MANAGE_NETWORKS  create/remove the networks' bridges vfbr-<id> (true)
//	--network-mode     VIRTFLOW_NETWORK_MODE     bridged (default) or routed: a namespace and a /32 per VM address, announced by BGP
//	--bgp-asn          VIRTFLOW_BGP_ASN          routed: the node's ASN (default: its host's bgpAsn in the graph)
//	--bgp-router-id    VIRTFLOW_BGP_ROUTER_ID    routed: the node's router id (default: its host's bgpAddress)
//	--bgp-peers        VIRTFLOW_BGP_PEERS        routed: address:asn[:bfd],... (default: the rack-leaf routers the host is cabled to)
//	--bgp-listen-port  VIRTFLOW_BGP_LISTEN_PORT  routed: port the speaker accepts sessions on (-1: none)
//	--metadata-listen  VIRTFLOW_METADATA_LISTEN  routed: the metadata service's address (169.254.1.2:80; "none": off)
//
// The agent needs its node's agent token: --token, or the one in --credential-file, or, on a
// new host, a one-time --join-token (createJoinToken) with which it registers its node
// (registerNode) and stores the token it receives in --credential-file for its next starts.
// After an operator's reenrollComputeNode, the join token it returned replaces a stored token
// the server now refuses.
// Traces of its GraphQL requests are exported by OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"github.com/virtflow/virtflow/agent/hostnet"
	"github.com/virtflow/virtflow/agent/hypervisor"
	"github.com/virtflow/virtflow/agent/lbnet"
	"github.com/virtflow/virtflow/agent/nodeagent"
	"github.com/virtflow/virtflow/agent/vmnet"
	"github.com/virtflow/virtflow/internal/platform/telemetry"
)

func main() {
	cfg := nodeagent.Config{}
	flag.StringVar(&cfg.APIURL, "api-url", envOr("VIRTFLOW_API_URL", "http://127.0.0.1:8080/query"), "GraphQL endpoint of the VirtFlow API (VIRTFLOW_API_URL)")
	flag.StringVar(&cfg.Token, "token", os.Getenv("VIRTFLOW_AGENT_TOKEN"), "agent token of this node (VIRTFLOW_AGENT_TOKEN)")
	credFile := flag.String("credential-file", envOr("VIRTFLOW_CREDENTIAL_FILE", "/var/lib/virtflow/agent/token"), "file keeping the agent token, written 0600 after registering with a join token (VIRTFLOW_CREDENTIAL_FILE)")
	joinToken := flag.String("join-token", os.Getenv("VIRTFLOW_JOIN_TOKEN"), "one-time join token to register the node with when there is no agent token yet, or the stored one was revoked by a re-enrollment (VIRTFLOW_JOIN_TOKEN)")
	hostname := flag.String("hostname", os.Getenv("VIRTFLOW_HOSTNAME"), "the host's name when a join token makes a new node; the system's hostname when empty (VIRTFLOW_HOSTNAME)")
	flag.StringVar(&cfg.NodeID, "node-id", os.Getenv("VIRTFLOW_NODE_ID"), "ComputeNode id; empty discovers it from the token (VIRTFLOW_NODE_ID)")
	flag.StringVar(&cfg.GuestAPIURL, "guest-api-url", os.Getenv("VIRTFLOW_GUEST_API_URL"), "URL the VMs' guests call when they are up, reachable from the VMs' networks; empty: the --api URL with the path /guest/ready; none: no call (VIRTFLOW_GUEST_API_URL)")
	flag.StringVar(&cfg.ConfigDriveDir, "config-drive-dir", os.Getenv("VIRTFLOW_CONFIG_DRIVE_DIR"), "directory of the VMs' config drives <domain>-cidata.iso; empty: --disk-dir, else a temporary directory (VIRTFLOW_CONFIG_DRIVE_DIR)")
	flag.StringVar(&cfg.DiskDir, "disk-dir", os.Getenv("VIRTFLOW_DISK_DIR"), "directory of the root disks vf-<vm id>.qcow2 of VMs without an image; empty makes them diskless (VIRTFLOW_DISK_DIR)")
	flag.StringVar(&cfg.Pool, "pool", envOr("VIRTFLOW_POOL", nodeagent.DefaultPool), "libvirt storage pool of cached images and root disks (VIRTFLOW_POOL)")
	flag.StringVar(&cfg.PoolPath, "pool-path", envOr("VIRTFLOW_POOL_PATH", nodeagent.DefaultPoolPath), "directory of the pool when the agent creates it (VIRTFLOW_POOL_PATH)")
	flag.StringVar(&cfg.CacheDir, "cache-dir", envOr("VIRTFLOW_CACHE_DIR", "/var/lib/virtflow/agent"), "image downloads in progress and the image cache's records (VIRTFLOW_CACHE_DIR)")
	flag.DurationVar(&cfg.HeartbeatInterval, "heartbeat", nodeagent.DefaultHeartbeatInterval, "heartbeat interval")
	flag.DurationVar(&cfg.ResyncInterval, "resync", nodeagent.DefaultResyncInterval, "full resync interval")
	socket := flag.String("libvirt-socket", envOr("VIRTFLOW_LIBVIRT_SOCKET", hypervisor.DefaultSocket), "libvirtd socket (VIRTFLOW_LIBVIRT_SOCKET)")
	uri := flag.String("libvirt-uri", envOr("VIRTFLOW_LIBVIRT_URI", hypervisor.DefaultURI), "libvirt connection URI (VIRTFLOW_LIBVIRT_URI)")
	domainType := flag.String("domain-type", envOr("VIRTFLOW_DOMAIN_TYPE", hypervisor.DomainTypeAuto), "libvirt domain type of the VMs: auto (kvm when a probe guest boots under KVM, else qemu), kvm or qemu (VIRTFLOW_DOMAIN_TYPE)")
	probeTimeout := flag.Duration("kvm-probe-timeout", envDuration("VIRTFLOW_KVM_PROBE_TIMEOUT", hypervisor.DefaultKVMProbeTimeout), "how long --domain-type auto's KVM probe may take (VIRTFLOW_KVM_PROBE_TIMEOUT)")
	simulate := flag.Bool("simulate", envBool("VIRTFLOW_SIMULATE"), "use a simulated in-memory hypervisor instead of libvirt (VIRTFLOW_SIMULATE)")
	flag.IntVar(&cfg.ReservedCPUs, "reserved-cpus", envInt("VIRTFLOW_RESERVED_CPUS", 0), "host CPUs 0..N-1 kept for the host: no VM runs on them and they are not offered as capacity (VIRTFLOW_RESERVED_CPUS)")
	uplink := flag.String("uplink", os.Getenv("VIRTFLOW_UPLINK"), "host interface carrying the VLANs of networks with a VLAN: the agent adds a VLAN interface vfvlan<id> of it to the network's bridge; empty keeps networks on the node (VIRTFLOW_UPLINK)")
	manageNet := flag.Bool("manage-networks", envBoolDefault("VIRTFLOW_MANAGE_NETWORKS", true), "create the bridge vfbr-<network> (and VLAN interface) each VM's networks need and remove those the agent created once unused; false leaves them to the operator (VIRTFLOW_MANAGE_NETWORKS)")
	flag.StringVar(&cfg.NetworkMode, "network-mode", envOr("VIRTFLOW_NETWORK_MODE", nodeagent.NetworkBridged), "bridged: NICs on the networks' bridges; routed: a namespace and a /32 route per VM address, announced by BGP (VIRTFLOW_NETWORK_MODE)")
	bgpASN := flag.Uint("bgp-asn", uint(envInt("VIRTFLOW_BGP_ASN", 0)), "routed mode: the node's BGP ASN; 0: its host's bgpAsn (VIRTFLOW_BGP_ASN)")
	bgpRouterID := flag.String("bgp-router-id", os.Getenv("VIRTFLOW_BGP_ROUTER_ID"), "routed mode: the node's BGP router id; empty: its host's bgpAddress (VIRTFLOW_BGP_ROUTER_ID)")
	bgpPeers := flag.String("bgp-peers", os.Getenv("VIRTFLOW_BGP_PEERS"), "routed mode: BGP peers address:asn[:bfd],...; empty: the rack-leaf routers the host is cabled to (VIRTFLOW_BGP_PEERS)")
	bgpListen := flag.Int("bgp-listen-port", envInt("VIRTFLOW_BGP_LISTEN_PORT", -1), "routed mode: port the BGP speaker accepts sessions on; -1: it only connects (VIRTFLOW_BGP_LISTEN_PORT)")
	metadataListen := flag.String("metadata-listen", envOr("VIRTFLOW_METADATA_LISTEN", "169.254.1.2:80"), "routed mode: address of the metadata service for the node's VMs; none: off (VIRTFLOW_METADATA_LISTEN)")
	lbDir := flag.String("lb-dir", os.Getenv("VIRTFLOW_LB_DIR"), "directory of the HAProxy serving the load balancers the scheduler puts on this node (VIPs announced with the routed mode's BGP speaker); empty: the node serves none (VIRTFLOW_LB_DIR)")
	metricsAddr := flag.String("metrics-addr", os.Getenv("VIRTFLOW_AGENT_METRICS_ADDR"), "address of the agent's Prometheus /metrics (node and VM usage from libvirt's domain statistics, the agent's own health), e.g. :9101; empty: none (VIRTFLOW_AGENT_METRICS_ADDR)")
	flag.Parse()
	cfg.MetricsAddr = *metricsAddr
	if *lbDir != "" {
		cfg.LoadBalancers = &lbnet.Node{Proxy: &lbnet.Proxy{Dir: *lbDir}, VIPs: lbnet.LoopbackVIPs{}}
	}
	if cfg.NetworkMode == nodeagent.NetworkRouted {
		if err := routedConfig(&cfg, uint32(*bgpASN), *bgpRouterID, *bgpPeers, int32(*bgpListen), *metadataListen); err != nil {
			fmt.Fprintln(os.Stderr, "routed network:", err)
			os.Exit(1)
		}
	}
	if *manageNet && !*simulate && cfg.NetworkMode != nodeagent.NetworkRouted {
		h, err := netlink.NewHandle()
		if err != nil {
			fmt.Fprintln(os.Stderr, "netlink:", err)
			os.Exit(1)
		}
		cfg.Networks = hostnet.New(h, *uplink)
	}

	log := slog.New(slog.NewJSONHandler(os.Stderr, nil)).With("component", "nodeagent")
	enroll := nodeagent.Enrollment{APIURL: cfg.APIURL, CredentialFile: *credFile, JoinToken: *joinToken, Hostname: *hostname}
	lcfg := hypervisor.LibvirtConfig{Socket: *socket, URI: *uri, DomainType: *domainType,
		KVMProbe: hypervisor.QEMUProbe{Timeout: *probeTimeout}}
	if err := run(cfg, enroll, lcfg, *simulate, log); err != nil {
		log.Error("node agent failed", "err", err)
		os.Exit(1)
	}
}

// run connects to the hypervisor, obtains the agent token (enroll) and runs the agent until
// SIGINT or SIGTERM.
func run(cfg nodeagent.Config, enroll nodeagent.Enrollment, lcfg hypervisor.LibvirtConfig, simulate bool, log *slog.Logger) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if cfg.Token == "" && enroll.JoinToken == "" {
		if _, err := os.Stat(enroll.CredentialFile); err != nil {
			return nodeagent.ErrNoCredential
		}
	}
	tr, err := telemetry.FromEnv(ctx, "virtflow-nodeagent", nodeagent.Version)
	if err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = tr.Shutdown(sctx)
	}()
	cfg.Tracer = tr.Provider
	var hv hypervisor.Hypervisor
	if simulate {
		s, err := hypervisor.NewSimulated(hypervisor.SimulatedConfig{})
		if err != nil {
			return err
		}
		hv = s
	} else {
		// The KVM probe of --domain-type auto runs inside NewLibvirt, within its own timeout.
		dctx, cancel := context.WithTimeout(ctx, 30*time.Second+lcfg.KVMProbe.(hypervisor.QEMUProbe).Timeout)
		l, err := hypervisor.NewLibvirt(dctx, lcfg)
		cancel()
		if err != nil {
			return fmt.Errorf("connect to libvirt %s at %s: %w", lcfg.URI, lcfg.Socket, err)
		}
		if l.DomainType() == hypervisor.DomainTypeQEMU && lcfg.DomainType != hypervisor.DomainTypeQEMU {
			log.Warn("VMs run in software emulation (domain type qemu)", "reason", l.DomainTypeReason())
		} else {
			log.Info("domain type chosen", "domain_type", l.DomainType(), "reason", l.DomainTypeReason())
		}
		hv = l
	}
	defer hv.Close()
	if cfg.Token == "" {
		enroll.Hypervisor, enroll.ReservedCPUs = hv, cfg.ReservedCPUs
		enroll.Pool, enroll.PoolPath, enroll.DiskCapacityGB = cfg.Pool, cfg.PoolPath, cfg.DiskCapacityGB
		token, nodeID, err := nodeagent.Enroll(ctx, enroll)
		if err != nil {
			return err
		}
		cfg.Token = token
		if cfg.NodeID == "" {
			cfg.NodeID = nodeID
		}
		if nodeID != "" {
			log.Info("node registered with the join token; agent token stored", "node", nodeID, "credential_file", enroll.CredentialFile)
		}
	}
	cfg.Hypervisor = hv
	cfg.Log = log
	var metricsLn net.Listener
	if cfg.MetricsAddr != "" {
		var err error
		if metricsLn, err = net.Listen("tcp", cfg.MetricsAddr); err != nil {
			return fmt.Errorf("listen on %s (--metrics-addr): %w", cfg.MetricsAddr, err)
		}
		cfg.MetricsAddr = metricsLn.Addr().String()
	}
	ag, err := nodeagent.New(cfg)
	if err != nil {
		return err
	}
	if metricsLn != nil {
		srv := &http.Server{Handler: ag.MetricsHandler(), ReadHeaderTimeout: 5 * time.Second, WriteTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute}
		go func() { _ = srv.Serve(metricsLn) }()
		defer srv.Close()
		log.Info("agent metrics listening", "addr", cfg.MetricsAddr)
	}
	return ag.Run(ctx)
}

// routedConfig sets up routed mode: the VM address namespaces in this process's network
// namespace, the BGP settings given on the command line, and the metadata listener.
func routedConfig(cfg *nodeagent.Config, asn uint32, routerID, peers string, listen int32, metadata string) error {
	host, err := netns.Get()
	if err != nil {
		return err
	}
	m, err := vmnet.New(vmnet.Config{HostNS: host})
	if err != nil {
		return err
	}
	if err := m.Setup(); err != nil {
		return err
	}
	cfg.Routed = m
	cfg.BGP = nodeagent.BGPConfig{ASN: asn, ListenPort: listen}
	if routerID != "" {
		if cfg.BGP.RouterID, err = netip.ParseAddr(routerID); err != nil {
			return fmt.Errorf("--bgp-router-id: %w", err)
		}
	}
	if cfg.BGP.Peers, err = nodeagent.ParseBGPPeers(peers); err != nil {
		return fmt.Errorf("--bgp-peers: %w", err)
	}
	if metadata != "none" {
		if cfg.MetadataListener, err = net.Listen("tcp", metadata); err != nil {
			return fmt.Errorf("metadata service: %w", err)
		}
	}
	return nil
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func envDuration(key string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(os.Getenv(key)); err == nil {
		return d
	}
	return def
}

func envBool(key string) bool {
	b, _ := strconv.ParseBool(os.Getenv(key))
	return b
}

func envInt(key string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(key)); err == nil {
		return n
	}
	return def
}

func envBoolDefault(key string, def bool) bool {
	if b, err := strconv.ParseBool(os.Getenv(key)); err == nil {
		return b
	}
	return def
}
