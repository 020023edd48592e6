package scheduler

import (
	"fmt"
	"sort"
)

// Config chooses the filters and the weighted scorers of a decision.
type Config struct {
	// Filters run in order; the first that rejects a node names the reason. Nil means
	// DefaultFilters. Keep Quota last: a node rejected by Quota passed every other
	// filter, which is how ErrQuotaExceeded is told apart from ErrNoCapacity.
	Filters []Filter
	// Weights maps registered scorer names to their weight; the total of a node is the
	// sum of weight × score. Choose LeastAllocated (spread) or MostAllocated (pack).
	Weights map[string]float64
	// RequireQuota rejects nodes whose host group has no quota for the tenant.
	RequireQuota bool
	// Quiet leaves Decision.Nodes empty: explaining every node costs a map per node,
	// which dominates bulk placement. NoPlacementError.Reasons is filled regardless.
	Quiet bool
}

// DefaultFilters returns the standard filter chain, cheapest first, Quota last.
func DefaultFilters() []Filter {
	return []Filter{
		Ready{}, Schedulable{}, Provider{}, NodeName{},
		NodeLabelHardAffinity{}, NodeLabelHardAntiAffinity{},
		CPUFit{}, MemoryFit{}, DiskFit{}, ZonePolicy{}, QuotaFit{},
	}
}

// DefaultConfig spreads: soft label preferences first, then AZ spread and free capacity.
func DefaultConfig() Config {
	return Config{Weights: map[string]float64{
		"NodeLabelSoftAffinity":     2,
		"NodeLabelSoftAntiAffinity": 2,
		"SpreadAZ":                  1,
		"LeastAllocated":            1,
	}}
}

// BinpackConfig is DefaultConfig with MostAllocated instead of LeastAllocated.
func BinpackConfig() Config {
	c := DefaultConfig()
	delete(c.Weights, "LeastAllocated")
	c.Weights["MostAllocated"] = 1
	return c
}

var registry = map[string]Scorer{}

// RegisterScorer makes a scorer available to Config.Weights under its Name. It is meant
// to be called from init functions; registering a name twice panics.
func RegisterScorer(s Scorer) {
	if _, dup := registry[s.Name()]; dup {
		panic("scheduler: scorer registered twice: " + s.Name())
	}
	registry[s.Name()] = s
}

func init() {
	RegisterScorer(NodeLabelSoftAffinity{})
	RegisterScorer(NodeLabelSoftAntiAffinity{})
	RegisterScorer(SpreadAZ{})
	RegisterScorer(LeastAllocated{})
	RegisterScorer(MostAllocated{})
}

type weighted struct {
	Scorer
	weight float64
}

// scorers resolves the weights in name order, so sums are deterministic.
func (c Config) scorers() ([]weighted, error) {
	names := make([]string, 0, len(c.Weights))
	for name := range c.Weights {
		names = append(names, name)
	}
	sort.Strings(names)
	out := make([]weighted, 0, len(names))
	for _, name := range names {
		s, ok := registry[name]
		if !ok {
			return nil, fmt.Errorf("scorer %q: %w", name, ErrUnknownScorer)
		}
		if w := c.Weights[name]; w != 0 {
			out = append(out, weighted{s, w})
		}
	}
	return out, nil
}

func (c Config) filters() []Filter {
	if c.Filters == nil {
		return DefaultFilters()
	}
	return c.Filters
}
