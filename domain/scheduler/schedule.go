package scheduler

import (
	"fmt"
	"sort"
)

// Schedule decides where the request's group of VMs goes. It is pure: the snapshot is
// read, never written, and the same inputs give the same decision.
//
// Clusters of the request's region that match the policy's names and labels are tried
// by weight (highest first, ties by free CPU, then memory, then ID); the first cluster
// that takes the whole group wins. With AllowPartial and no such cluster, the cluster
// that took the most VMs wins. Otherwise the error is a *NoPlacementError.
func Schedule(s *Snapshot, r Request, cfg Config) (Decision, error) {
	return schedule(s, r, cfg, pooledAttempt)
}

// schedule is Schedule with the attempts taken from get (the pool, or new ones for a
// test that must not share buffers).
func schedule(s *Snapshot, r Request, cfg Config, get func() *attempt) (Decision, error) {
	if r.Count == 0 {
		r.Count = 1
	}
	if r.Count < 0 || r.Flavor.VCPUs <= 0 || r.Flavor.MemoryMB < 0 || r.Flavor.DiskGB < 0 {
		return Decision{}, fmt.Errorf("schedule: count %d, flavor %+v: %w", r.Count, r.Flavor, ErrInvalidRequest)
	}
	scorers, err := cfg.scorers()
	if err != nil {
		return Decision{}, fmt.Errorf("schedule: %w", err)
	}
	filters := cfg.filters()
	ix := s.index()

	clusters, excluded := selectClusters(s, ix, &r)
	var reasons map[string]int
	var best *attempt
	var failed []*Explanation // of every cluster tried, unless Quiet
	quotaBlocked := false
	for _, c := range clusters {
		a := tryCluster(get(), s, ix, &r, c, filters, scorers, &cfg)
		if len(a.st.placed) == r.Count {
			d := a.decision(&cfg)
			a.release()
			if best != nil {
				best.release()
			}
			return d, nil
		}
		if reasons == nil {
			reasons = map[string]int{}
		}
		if !cfg.Quiet {
			failed = append(failed, a.explanation())
		}
		for name, n := range a.reasons {
			reasons[name] += n
		}
		quotaBlocked = quotaBlocked || a.reasons[QuotaFit{}.Name()] > 0
		if best == nil || len(a.st.placed) > len(best.st.placed) {
			if best != nil {
				best.release()
			}
			best = a
		} else {
			a.release()
		}
	}
	if best != nil {
		defer best.release()
	}
	if r.AllowPartial && best != nil && len(best.st.placed) > 0 {
		return best.decision(&cfg), nil
	}
	if reasons == nil {
		reasons = map[string]int{}
	}
	if excluded > 0 {
		reasons[ReasonCluster] = excluded
	}
	e := &NoPlacementError{Err: ErrNoCapacity, Reasons: reasons}
	if quotaBlocked {
		e.Err = ErrQuotaExceeded
	}
	if best != nil {
		e.Placed = len(best.st.placed)
	}
	e.Explanation = rejections(failed)
	return Decision{}, e
}

// withRequiredQuota switches the Quota filter of the chain to reject missing quotas.
func withRequiredQuota(fs []Filter) []Filter {
	out := make([]Filter, len(fs))
	for i, f := range fs {
		if _, ok := f.(QuotaFit); ok {
			f = QuotaFit{Required: true}
		}
		out[i] = f
	}
	return out
}

// clusterCandidate is a cluster with its nodes and, when needed to break weight ties,
// its free capacity.
type clusterCandidate struct {
	*Cluster
	pos     []int32 // positions of its nodes in Snapshot.Nodes
	freeCPU int
	freeMem int64
}

// selectClusters returns the clusters that may take the request, best first, and how
// many were excluded by region, name or labels.
func selectClusters(s *Snapshot, ix *index, r *Request) ([]clusterCandidate, int) {
	var out []clusterCandidate
	excluded := 0
	for i := range s.Clusters {
		c := &s.Clusters[i]
		if (r.Region != "" && c.Region != r.Region) ||
			(len(r.Policy.ClusterNames) > 0 && !contains(r.Policy.ClusterNames, c.Name)) ||
			!hasAll(c.Labels, r.Policy.ClusterLabels) {
			excluded++
			continue
		}
		out = append(out, clusterCandidate{Cluster: c, pos: ix.clusters[c.ID]})
	}
	if len(out) < 2 {
		return out, excluded
	}
	// Free capacity only matters between clusters of equal weight.
	for i := range out {
		for j := range out {
			if i != j && out[i].Weight == out[j].Weight {
				out[i].freeCPU, out[i].freeMem = freeCapacity(s, out[i].pos)
				break
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		switch {
		case a.Weight != b.Weight:
			return a.Weight > b.Weight
		case a.freeCPU != b.freeCPU:
			return a.freeCPU > b.freeCPU
		case a.freeMem != b.freeMem:
			return a.freeMem > b.freeMem
		}
		return a.ID < b.ID
	})
	return out, excluded
}

// freeCapacity sums the free CPU and memory of the ready, schedulable nodes.
func freeCapacity(s *Snapshot, pos []int32) (cpu int, mem int64) {
	for _, p := range pos {
		n := &s.Nodes[p]
		if n.Ready && n.Schedulable {
			cpu += n.CPUCapacity - n.CPUAllocated
			mem += n.MemoryMB - n.MemoryAllocatedMB
		}
	}
	return cpu, mem
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// hasAll reports whether labels has every key=value pair of want.
func hasAll(labels, want map[string]string) bool {
	for k, v := range want {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}
