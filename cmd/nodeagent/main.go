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
//	--token            VIRTFLOW_AGENT_TOKEN      the node's agent token (required)
//	--node-id          VIRTFLOW_NODE_ID          the ComputeNode id; empty: the one the token may read
//	--libvirt-socket   VIRTFLOW_LIBVIRT_SOCKET   libvirtd socket (/run/libvirt/libvirt-sock)
//	--libvirt-uri      VIRTFLOW_LIBVIRT_URI      libvirt URI (qemu:///system)
//	--simulate         VIRTFLOW_SIMULATE=true    use an in-memory simulated hypervisor instead
//	--disk-dir         VIRTFLOW_DISK_DIR         where root disks vf-<vm id>.qcow2 are (empty: diskless)
//	--heartbeat, --resync                        intervals (10s, 30s)
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/virtflow/virtflow/hypervisor"
	"github.com/virtflow/virtflow/nodeagent"
)

func main() {
	cfg := nodeagent.Config{}
	flag.StringVar(&cfg.APIURL, "api-url", envOr("VIRTFLOW_API_URL", "http://127.0.0.1:8080/query"), "GraphQL endpoint of the VirtFlow API (VIRTFLOW_API_URL)")
	flag.StringVar(&cfg.Token, "token", os.Getenv("VIRTFLOW_AGENT_TOKEN"), "agent token of this node (VIRTFLOW_AGENT_TOKEN)")
	flag.StringVar(&cfg.NodeID, "node-id", os.Getenv("VIRTFLOW_NODE_ID"), "ComputeNode id; empty discovers it from the token (VIRTFLOW_NODE_ID)")
	flag.StringVar(&cfg.DiskDir, "disk-dir", os.Getenv("VIRTFLOW_DISK_DIR"), "directory of the VMs' root disks vf-<vm id>.qcow2; empty makes diskless domains (VIRTFLOW_DISK_DIR)")
	flag.DurationVar(&cfg.HeartbeatInterval, "heartbeat", nodeagent.DefaultHeartbeatInterval, "heartbeat interval")
	flag.DurationVar(&cfg.ResyncInterval, "resync", nodeagent.DefaultResyncInterval, "full resync interval")
	socket := flag.String("libvirt-socket", envOr("VIRTFLOW_LIBVIRT_SOCKET", hypervisor.DefaultSocket), "libvirtd socket (VIRTFLOW_LIBVIRT_SOCKET)")
	uri := flag.String("libvirt-uri", envOr("VIRTFLOW_LIBVIRT_URI", hypervisor.DefaultURI), "libvirt connection URI (VIRTFLOW_LIBVIRT_URI)")
	simulate := flag.Bool("simulate", envBool("VIRTFLOW_SIMULATE"), "use a simulated in-memory hypervisor instead of libvirt (VIRTFLOW_SIMULATE)")
	flag.Parse()

	log := slog.New(slog.NewJSONHandler(os.Stderr, nil)).With("component", "nodeagent")
	if err := run(cfg, *socket, *uri, *simulate, log); err != nil {
		log.Error("node agent failed", "err", err)
		os.Exit(1)
	}
}

// run connects to the hypervisor and runs the agent until SIGINT or SIGTERM.
func run(cfg nodeagent.Config, socket, uri string, simulate bool, log *slog.Logger) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if cfg.Token == "" {
		return fmt.Errorf("no agent token: set --token or VIRTFLOW_AGENT_TOKEN")
	}
	var hv hypervisor.Hypervisor
	if simulate {
		s, err := hypervisor.NewSimulated(hypervisor.SimulatedConfig{})
		if err != nil {
			return err
		}
		hv = s
	} else {
		dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		l, err := hypervisor.NewLibvirt(dctx, hypervisor.LibvirtConfig{Socket: socket, URI: uri})
		cancel()
		if err != nil {
			return fmt.Errorf("connect to libvirt %s at %s: %w", uri, socket, err)
		}
		hv = l
	}
	defer hv.Close()
	cfg.Hypervisor = hv
	cfg.Log = log
	ag, err := nodeagent.New(cfg)
	if err != nil {
		return err
	}
	return ag.Run(ctx)
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func envBool(key string) bool {
	b, _ := strconv.ParseBool(os.Getenv(key))
	return b
}
