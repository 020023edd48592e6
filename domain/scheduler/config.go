package scheduler

import (
	"fmt"
	"slices"
)

// Config chooses the filters and the weighted scorers of a decision.
type Config struct {
	// Filters run in order; the first that rejects a node names the reason. Nil means
	// DefaultFilters. Keep Quota last: a node rejected by Quota passed every other
	// filter, which is how ErrQuotaExceeded is told apart from ErrNoCapacity.
	Filters []Filter
	// Weights maps scorer names to their weight; the total of a node is the
	// sum of weight × score. Choose LeastAllocated (spread) or MostAllocated (pack).
	Weights map[string]float64
	// RequireQuota rejects nodes whose host group has no quota for the tenant.
	RequireQuota bool
	// Quiet leaves Decision.Nodes and Decision.Explanation empty. NoPlacementError.Reasons
	// is filled regardless.
	Quiet bool
	// CompactExplain records the explanation only in Decision.Explanation (a few flat
	// arrays per decision) and leaves Decision.Nodes empty: a map of scores per node
	// dominates bulk placement. Decision.Explanation.Nodes() builds them on demand.
	CompactExplain bool
	// ScoreSampleRatio, between 0 and 1, makes each round stop looking once it has found
	// that share of the cluster's nodes feasible (at least 100 nodes, or all), like
	// kube-scheduler's percentageOfNodesToScore; only those are scored. 0 (or 1) means
	// every node is evaluated. Where a round starts is derived from the cluster's
	// allocations (and continues where the previous round of the group stopped), so
	// decisions stay deterministic while successive ones look at different nodes. Nodes
	// not looked at are explained as Skipped. With MaxNodesToScore, the smaller of the
	// two applies.
	ScoreSampleRatio float64
	// MaxNodesToScore, when positive, makes each round stop looking once it has found
	// that many feasible nodes, whatever the size of the cluster, so that the work of a
	// decision does not grow with the fleet (kube-scheduler scores at least 100 feasible
	// nodes). It samples like ScoreSampleRatio: where a round starts is derived from the
	// cluster's allocations, the nodes are looked at interleaved across the cluster's AZs
	// (so that SpreadAZ sees every AZ in any sample), and if fewer nodes are feasible
	// every node is looked at, so sampling never turns a placement into a failure. 0
	// means no limit.
	MaxNodesToScore int
}

// DefaultFilters returns the standard filter chain, cheapest first, Quota last.
func DefaultFilters() []Filter {
	return []Filter{
		Ready{}, Schedulable{}, Lifecycle{}, Provider{}, AvailabilityZone{}, NodeName{},
		NodeLabelHardAffinity{}, NodeLabelExclusion{},
		CPUFit{}, MemoryFit{}, DiskFit{}, Exclusive{}, ZonePolicy{}, NodeLabelHardAntiAffinity{}, QuotaFit{},
	}
}

// The default chains, shared read-only by every decision.
var (
	defaultFilters         = DefaultFilters()
	defaultFiltersRequired = withRequiredQuota(DefaultFilters())
)

// DefaultMaxNodesToScore is DefaultConfig's MaxNodesToScore: kube-scheduler's floor of
// feasible nodes to score. A decision on 20,000 nodes then takes about 1.4× one on 100
// (BenchmarkDecisionFleetSize; 1.6× with 128, 2.7× with 256).
const DefaultMaxNodesToScore = 100

// DefaultConfig spreads: soft label preferences first, then AZ spread and free capacity.
// Each round scores at most DefaultMaxNodesToScore feasible nodes (set MaxNodesToScore to
// 0 to score every feasible node).
func DefaultConfig() Config {
	return Config{Weights: map[string]float64{
		"NodeLabelSoftAffinity":     2,
		"NodeLabelSoftAntiAffinity": 2,
		"NodeLabelSoftExclusion":    2,
		"SpreadAZ":                  1,
		"LeastAllocated":            1,
	}, MaxNodesToScore: DefaultMaxNodesToScore}
}

// Validate reports a weight given to a scorer that does not exist.
func (c Config) Validate() error {
	_, err := c.scorers()
	return err
}

// BinpackConfig is DefaultConfig with MostAllocated instead of LeastAllocated.
func BinpackConfig() Config {
	c := DefaultConfig()
	delete(c.Weights, "LeastAllocated")
	c.Weights["MostAllocated"] = 1
	return c
}

// scorerByName returns the built-in scorer Config.Weights calls name, if there is one. The
// set is fixed: a new scorer is added here, not registered from another package's init().
func scorerByName(name string) (Scorer, bool) {
	for _, s := range []Scorer{NodeLabelSoftAffinity{}, NodeLabelSoftAntiAffinity{}, NodeLabelSoftExclusion{}, SpreadAZ{}, LeastAllocated{}, MostAllocated{}} {
		if s.Name() == name {
			return s, true
		}
	}
	return nil, false
}

type weighted struct {
	Scorer
	weight float64
}

// scorers resolves the weights in name order, so sums are deterministic.
func (c *Config) scorers() ([]weighted, error) {
	var buf [8]string
	names := buf[:0]
	for name := range c.Weights {
		names = append(names, name)
	}
	slices.Sort(names)
	out := make([]weighted, 0, len(names))
	for _, name := range names {
		s, ok := scorerByName(name)
		if !ok {
			return nil, fmt.Errorf("scorer %q: %w", name, ErrUnknownScorer)
		}
		if w := c.Weights[name]; w != 0 {
			out = append(out, weighted{s, w})
		}
	}
	return out, nil
}

// filters is the chain of the decision, with Quota switched to Required when the
// config requires quotas.
func (c *Config) filters() []Filter {
	switch {
	case c.Filters == nil && c.RequireQuota:
		return defaultFiltersRequired
	case c.Filters == nil:
		return defaultFilters
	case c.RequireQuota:
		return withRequiredQuota(c.Filters)
	}
	return c.Filters
}
