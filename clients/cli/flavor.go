package cli

import (
	"context"
	"flag"

	"github.com/virtflow/virtflow/clients/apiclient"
)

// runFlavor creates a flavor or changes its network limit and exclusivity (operators):
//
//	flavor create --name NAME --vcpus N --memory-mb N [--disk-gb N] [--dedicated] [--network-mbps N] [--exclusive NONE|HOST|NUMA_NODE]
//	flavor set FLAVOR_ID [--network-mbps N] [--exclusive NONE|HOST|NUMA_NODE]
func runFlavor(ctx context.Context, a *app, args []string) error {
	const usage = "flavor create --name NAME --vcpus N --memory-mb N [--disk-gb N] [--dedicated] [--network-mbps N] [--exclusive NONE|HOST|NUMA_NODE] | flavor set FLAVOR_ID [--network-mbps N] [--exclusive ...]"
	if len(args) == 0 {
		return usagef(usage)
	}
	verb, args := args[0], args[1:]
	fs := flag.NewFlagSet("flavor "+verb, flag.ContinueOnError)
	name := fs.String("name", "", "name (create, required)")
	vcpus := fs.Int("vcpus", 0, "vCPUs (create, required)")
	mem := fs.Int("memory-mb", 0, "memory in MB (create, required)")
	disk := fs.Int("disk-gb", 0, "root disk in GB")
	dedicated := fs.Bool("dedicated", false, "dedicated (pinned) vCPUs")
	netMbps := fs.Int("network-mbps", -1, "bandwidth limit of each NIC in Mbit/s (0: none)")
	exclusive := fs.String("exclusive", "", "NONE, HOST (a whole machine) or NUMA_NODE (one NUMA node of it)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	var excl *apiclient.FlavorExclusive
	switch e := apiclient.FlavorExclusive(*exclusive); e {
	case "":
	case apiclient.FlavorExclusiveNone, apiclient.FlavorExclusiveHost, apiclient.FlavorExclusiveNumaNode:
		excl = &e
	default:
		return usagef("--exclusive %q: want NONE, HOST or NUMA_NODE", *exclusive)
	}
	var limit *int
	if *netMbps >= 0 {
		limit = netMbps
	}
	c, err := a.api()
	if err != nil {
		return err
	}
	switch {
	case verb == "create" && *name != "" && *vcpus > 0 && *mem > 0 && len(pos) == 0:
		in := apiclient.CreateFlavorInput{Name: *name, Vcpus: *vcpus, MemoryMB: *mem, DiskGB: disk,
			NetworkMbpsLimit: limit, Exclusive: excl}
		if *dedicated {
			p := apiclient.FlavorCPUPolicyDedicated
			in.CpuPolicy = &p
		}
		r, err := apiclient.CreateFlavor(ctx, c, in)
		if err != nil {
			return err
		}
		return a.show(&r.CreateFlavor.FlavorFields, []string{"id", "name", "vcpus", "memoryMB", "exclusive"})
	case verb == "set" && len(pos) == 1:
		r, err := apiclient.UpdateFlavor(ctx, c, pos[0], apiclient.UpdateFlavorInput{NetworkMbpsLimit: limit, Exclusive: excl})
		if err != nil {
			return err
		}
		return a.show(&r.UpdateFlavor.FlavorFields, []string{"id", "name", "vcpus", "memoryMB", "exclusive"})
	}
	return usagef(usage)
}
