// Command loadfixture writes the load harness's region of issue 30 into a server's
// PostgreSQL database: a region of 5,000 READY compute nodes (125 racks of 8 hosts, 25 power
// zones and 5 network zones, one cluster, 5 nodes a host slot over four more batches), a
// tenant with a quota in its host group, and a 1-vCPU flavor. It prints the IDs as the
// flags of `loadtest creates`:
//
//	DATABASE_URL=postgres://postgres@127.0.0.1:5432/virtflow?sslmode=disable go run ./cmd/loadfixture
//	loadtest -url … -token … creates -clients 8 -duration 30s $(go run ./cmd/loadfixture)
//
// It writes through the ORM as the placement tests' beds do (package placementtest), not
// through the API: building 5,000 nodes through mutations would take longer than the run.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/virtflow/virtflow/domain/placement/placementtest"
	"github.com/virtflow/virtflow/internal/platform/infra"
)

func main() {
	nodes := flag.Int("nodes", 5000, "compute nodes of the region, a multiple of 1,000")
	vcpus := flag.Int("quota-vcpus", 1<<30, "vCPUs of the tenant's quota")
	flag.Parse()
	if err := run(*nodes, *vcpus); err != nil {
		fmt.Fprintln(os.Stderr, "loadfixture:", err)
		os.Exit(1)
	}
}

func run(nodes, vcpus int) error {
	url := os.Getenv("DATABASE_URL")
	if url == "" {
		return fmt.Errorf("DATABASE_URL is not set")
	}
	if nodes < 1000 || nodes%1000 != 0 {
		return fmt.Errorf("-nodes %d: want a positive multiple of 1,000", nodes)
	}
	ctx := placementtest.Ctx()
	db, err := infra.OpenDatabase(context.Background(), url, "")
	if err != nil {
		return err
	}
	defer db.Close()
	start := time.Now()
	spec := placementtest.Spec{Racks: 125, HostsPerRack: 8, PowerZones: 25, NetworkZones: 5,
		CPU: 1 << 20, MemoryMB: 1 << 40, DiskGB: 1 << 40, Cores: 1 << 19}
	s, err := placementtest.Build(ctx, db.Client, spec)
	if err != nil {
		return err
	}
	for range nodes/1000 - 1 { // 1,000 nodes at a time: PostgreSQL takes at most 65,535 parameters
		if _, err := s.AddNodes(ctx, s.Cluster, spec); err != nil {
			return err
		}
	}
	f, err := s.Flavor(ctx, 1, 512, 1, false)
	if err != nil {
		return err
	}
	if _, err := s.Quota(ctx, s.Tenant, vcpus, 0); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "loadfixture: %d-node region %s built in %v\n", len(s.Nodes), s.Prefix, time.Since(start).Round(time.Millisecond))
	fmt.Printf("-region %d -tenant %d -flavor %d -image none\n", s.Region, s.Tenant, f.ID)
	return nil
}
