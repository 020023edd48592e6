package fleet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/virtflow/virtflow/agent/configdrive"
	"github.com/virtflow/virtflow/agent/hypervisor"
	"github.com/virtflow/virtflow/agent/nodeagent"
)

// Node is one simulated node: its id, the agent token it uses and what its host offers.
type Node struct {
	ID       int
	Token    string
	Capacity hypervisor.Capacity // zero: the simulated hypervisor's default
	DiskGB   int
}

// Config configures a [Fleet].
type Config struct {
	// APIURL is the GraphQL endpoint the agents talk to.
	APIURL string
	// Nodes are the simulated nodes.
	Nodes []Node
	// Delays and FailureRate configure every node's simulated hypervisor; Seed makes the
	// failures reproducible (node i uses Seed+i).
	Delays      hypervisor.OperationDelays
	FailureRate float64
	Seed        uint64
	// SharedDirs are the directories every simulated node mounts from one shared storage
	// (hypervisor.SharedStorage), as a region's nodes mount its backup target: a backup one
	// node writes there another restores. Nil: DefaultSharedDirs.
	SharedDirs []string
	// HeartbeatInterval, ResyncInterval and Parallelism are passed to every agent (zero:
	// nodeagent's defaults).
	HeartbeatInterval time.Duration
	ResyncInterval    time.Duration
	Parallelism       int
	// Attempts and RetryDelay are passed to every agent (zero: nodeagent's defaults).
	Attempts   int
	RetryDelay time.Duration
	// HTTPClient is shared by the agents; nil makes one with enough idle connections.
	HTTPClient *http.Client
	// Log receives the agents' logs; slog.Default() when nil.
	Log *slog.Logger
	// OnReport is passed to every agent.
	OnReport func(r nodeagent.AssignmentReport, err error)
	// OnConfigDrive is passed to every agent: what each config drive built says.
	OnConfigDrive func(spec configdrive.Spec)
}

// Fleet is a set of simulated nodes, each with its agent.
type Fleet struct {
	agents   []*nodeagent.Agent
	hvs      map[int]*hypervisor.Simulated
	interval time.Duration // heartbeat interval
}

// DefaultSharedDirs is where the simulated nodes share storage unless Config.SharedDirs
// says otherwise: the backup targets the demo's regions name are under it.
var DefaultSharedDirs = []string{"/var/lib/virtflow/backups"}

// New builds the fleet's hypervisors and agents; Run starts them.
func New(cfg Config) (*Fleet, error) {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	hc := cfg.HTTPClient
	if hc == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConnsPerHost = 64
		hc = &http.Client{Transport: tr, Timeout: 30 * time.Second}
	}
	f := &Fleet{hvs: map[int]*hypervisor.Simulated{}, interval: cfg.HeartbeatInterval}
	if f.interval <= 0 {
		f.interval = nodeagent.DefaultHeartbeatInterval
	}
	dirs := cfg.SharedDirs
	if dirs == nil {
		dirs = DefaultSharedDirs
	}
	shared := &hypervisor.SharedStorage{Dirs: dirs}
	for i, n := range cfg.Nodes {
		hv, err := hypervisor.NewSimulated(hypervisor.SimulatedConfig{
			Capacity: n.Capacity, Delays: cfg.Delays, FailureRate: cfg.FailureRate, Seed: cfg.Seed + uint64(i),
			Shared: shared,
		})
		if err != nil {
			return nil, err
		}
		ag, err := nodeagent.New(nodeagent.Config{
			APIURL: cfg.APIURL, Token: n.Token, NodeID: strconv.Itoa(n.ID), Hypervisor: hv, HTTPClient: hc,
			HeartbeatInterval: cfg.HeartbeatInterval, ResyncInterval: cfg.ResyncInterval, Parallelism: cfg.Parallelism,
			Attempts: cfg.Attempts, RetryDelay: cfg.RetryDelay,
			DiskCapacityGB: n.DiskGB, AgentVersion: nodeagent.Version + "-simulated",
			Log: cfg.Log.With("simulated", true), OnReport: cfg.OnReport, OnConfigDrive: cfg.OnConfigDrive,
			// A simulated node keeps the OS it was given, not this host's.
			Facts: &nodeagent.HostFacts{},
		})
		if err != nil {
			return nil, fmt.Errorf("agent of node %d: %w", n.ID, err)
		}
		f.agents = append(f.agents, ag)
		f.hvs[n.ID] = hv
	}
	return f, nil
}

// Hypervisor returns the simulated hypervisor of node id (nil for a node not in the fleet),
// for tests and benchmarks to look at or crash domains.
func (f *Fleet) Hypervisor(id int) *hypervisor.Simulated { return f.hvs[id] }

// Size is the number of simulated nodes.
func (f *Fleet) Size() int { return len(f.agents) }

// Run runs every agent until ctx ends, then closes the hypervisors. The agents' starts are
// spread over one second per 100 nodes (at most one heartbeat interval), so that a large
// fleet does not send all its heartbeats in the same instant.
func (f *Fleet) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	errs := make([]error, len(f.agents))
	spread := min(time.Duration(len(f.agents))*10*time.Millisecond, f.interval)
	for i, ag := range f.agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if spread > 0 {
				select {
				case <-ctx.Done():
					return
				case <-time.After(spread * time.Duration(i) / time.Duration(len(f.agents))):
				}
			}
			errs[i] = ag.Run(ctx)
		}()
	}
	wg.Wait()
	for _, hv := range f.hvs {
		_ = hv.Close()
	}
	return errors.Join(errs...)
}
