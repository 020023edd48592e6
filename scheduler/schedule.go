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
	if cfg.RequireQuota {
		filters = withRequiredQuota(filters)
	}

	clusters, excluded := selectClusters(s, &r)
	reasons := map[string]int{}
	if excluded > 0 {
		reasons[ReasonCluster] = excluded
	}
	var best *attempt
	quotaBlocked := false
	for _, c := range clusters {
		a := tryCluster(s, &r, c, filters, scorers)
		a.quiet = cfg.Quiet
		if len(a.st.placed) == r.Count {
			return a.decision(), nil
		}
		for name, n := range a.reasons {
			reasons[name] += n
		}
		quotaBlocked = quotaBlocked || a.reasons[QuotaFit{}.Name()] > 0
		if best == nil || len(a.st.placed) > len(best.st.placed) {
			best = a
		}
	}
	if r.AllowPartial && best != nil && len(best.st.placed) > 0 {
		return best.decision(), nil
	}
	e := &NoPlacementError{Err: ErrNoCapacity, Reasons: reasons}
	if quotaBlocked {
		e.Err = ErrQuotaExceeded
	}
	if best != nil {
		e.Placed = len(best.st.placed)
	}
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

// clusterCandidate is a cluster with the free capacity used to break weight ties.
type clusterCandidate struct {
	*Cluster
	freeCPU int
	freeMem int64
	nodes   int
}

// selectClusters returns the clusters that may take the request, best first, and how
// many were excluded by region, name or labels.
func selectClusters(s *Snapshot, r *Request) ([]clusterCandidate, int) {
	var out []clusterCandidate
	excluded := 0
	idx := map[int]int{}
	for i := range s.Clusters {
		c := &s.Clusters[i]
		if (r.Region != "" && c.Region != r.Region) ||
			(len(r.Policy.ClusterNames) > 0 && !contains(r.Policy.ClusterNames, c.Name)) ||
			!hasAll(c.Labels, r.Policy.ClusterLabels) {
			excluded++
			continue
		}
		idx[c.ID] = len(out)
		out = append(out, clusterCandidate{Cluster: c})
	}
	for i := range s.Nodes {
		n := &s.Nodes[i]
		j, ok := idx[n.ClusterID]
		if ok {
			out[j].nodes++
		}
		if ok && n.Ready && n.Schedulable {
			out[j].freeCPU += n.CPUCapacity - n.CPUAllocated
			out[j].freeMem += n.MemoryMB - n.MemoryAllocatedMB
		}
	}
	sort.Slice(out, func(i, j int) bool {
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
