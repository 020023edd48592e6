package nodeagent

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/virtflow/virtflow/agent/hypervisor"
)

// Resync reads every assignment of the node from the API and the domains from the
// hypervisor, and realizes each assignment that is not in its desired state yet, at most
// Parallelism at a time. It returns once all are done; failures of single assignments are
// reported to the API (FAILED with the reason) and retried on the next resync.
func (ag *Agent) Resync(ctx context.Context) error {
	as, err := readAssignments(ctx, ag.api, ag.NodeID())
	if err != nil {
		return err
	}
	doms, err := ag.hv.List(ctx)
	if err != nil {
		return fmt.Errorf("list domains: %w", err)
	}
	byVM := make(map[int64]hypervisor.Domain, len(doms))
	for _, d := range doms {
		byVM[d.VMID] = d
	}
	var pins map[string][]int
	var pinErrs map[string]error
	var shared []int // the CPUs shared VMs float over: none reserved or pinned (nil: all)
	if ag.cfg.ReservedCPUs > 0 || slices.ContainsFunc(as, dedicated) || slices.ContainsFunc(as, exclusive) {
		c, err := ag.hv.Capacity(ctx)
		if err != nil {
			return fmt.Errorf("read host capacity: %w", err)
		}
		pins, pinErrs = pinCPUs(as, c.VCPUs, ag.cfg.ReservedCPUs, c.NUMANodes)
		shared = sharedCPUs(pins, c.VCPUs, ag.cfg.ReservedCPUs)
	}
	// Running shared VMs leave the CPUs a dedicated VM is (about to be) pinned to before
	// that VM starts below.
	ag.confineShared(ctx, as, byVM, shared)

	// Volumes first, one by one (quick): a VM's domain then finds its volumes in the pool.
	for _, a := range as {
		if a.Volume != nil {
			ag.realizeVolume(ctx, a)
		}
	}
	// Snapshots, backups and images made from VMs next, one by one: a revert lands before
	// its VM starts again.
	for _, a := range as {
		switch {
		case a.Snapshot != nil || a.Backup != nil:
			ag.realizeCopy(ctx, a)
		case a.Image != nil:
			ag.realizeImage(ctx, a)
		}
	}

	sem := make(chan struct{}, ag.cfg.Parallelism)
	var wg sync.WaitGroup
	for _, a := range as {
		id, ok, err := assignedVM(a)
		if !ok {
			continue // a volume's assignment: realized above
		}
		if err != nil {
			ag.report(ctx, a, AssignmentStatusFailed, "unknown", err.Error(), true)
			continue
		}
		var dom *hypervisor.Domain
		if d, ok := byVM[id]; ok {
			dom = &d
		}
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			return ctx.Err()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			cpus, ok := pins[a.Id]
			if !ok {
				cpus = shared
			}
			ag.realize(ctx, a, id, dom, cpus, pinErrs[a.Id])
		}()
	}
	wg.Wait()
	ag.pruneNetworks(as)
	ag.pruneRoutes(ctx, as)
	return nil
}

// confineShared moves the running domains of shared VMs onto the shared CPU set when the set
// changed since the agent last applied it (a dedicated VM came or went): live and in the
// definition (Hypervisor.SetCPUAffinity). Failures are logged and tried again next resync.
func (ag *Agent) confineShared(ctx context.Context, as []Assignment, byVM map[int64]hypervisor.Domain, shared []int) {
	want := fmt.Sprint(shared)
	for _, a := range as {
		if a.VirtualMachine == nil || dedicated(a) || a.DesiredState == AssignmentDesiredStateAbsent ||
			a.VirtualMachine.Flavor.Exclusive == FlavorExclusiveNumaNode {
			continue
		}
		id, ok, err := assignedVM(a)
		if !ok || err != nil {
			continue
		}
		dom, ok := byVM[id]
		if !ok || !dom.State.Active() {
			continue // defined with the current set when it next starts
		}
		ag.mu.Lock()
		done := ag.affinity[dom.Name] == want
		ag.mu.Unlock()
		if done {
			continue
		}
		if err := ag.hv.SetCPUAffinity(ctx, dom.Name, shared); err != nil {
			ag.log.Warn("cannot confine a shared VM to the shared CPUs", "domain", dom.Name, "cpus", want, "err", err)
			continue
		}
		ag.mu.Lock()
		ag.affinity[dom.Name] = want
		ag.mu.Unlock()
	}
}

// assignedVM is the VM id of an assignment: the one on the assignment (vmID), else its VM's.
// ok is false for an assignment of no VM (a volume's). An assignment to remove a domain
// needs nothing else: the agent of a node may not read a VM that moved to another node or
// was deleted with force, yet must still remove what it is no longer assigned.
func assignedVM(a Assignment) (id int64, ok bool, err error) {
	switch {
	case a.VmID != nil:
		if *a.VmID <= 0 {
			return 0, true, fmt.Errorf("VM id %d: not a positive integer", *a.VmID)
		}
		return int64(*a.VmID), true, nil
	case a.VirtualMachine != nil:
		id, err := vmID(a.VirtualMachine.Id)
		return id, true, err
	}
	return 0, false, nil
}

// sortedByVM returns the assignments with a VM, ordered by VM id.
func sortedByVM(as []Assignment) []Assignment {
	out := make([]Assignment, 0, len(as))
	for _, a := range as {
		if a.VirtualMachine != nil {
			out = append(out, a)
		}
	}
	key := func(a Assignment) int64 { n, _ := strconv.ParseInt(a.VirtualMachine.Id, 10, 64); return n }
	slices.SortFunc(out, func(x, y Assignment) int { return int(key(x) - key(y)) })
	return out
}
