package scheduler

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

var (
	// ErrNoCapacity means no cluster had nodes that could take the group.
	ErrNoCapacity = errors.New("no capacity")
	// ErrQuotaExceeded means nodes had room but the tenant's quota did not.
	ErrQuotaExceeded = errors.New("quota exceeded")
	// ErrInvalidRequest means the request itself makes no sense.
	ErrInvalidRequest = errors.New("invalid request")
	// ErrUnknownScorer means Config.Weights names a scorer that does not exist.
	ErrUnknownScorer = errors.New("unknown scorer")
)

// ReasonCluster is the Reasons key counting clusters excluded by region, name or labels.
const ReasonCluster = "Cluster"

// NoPlacementError says why nowhere: Reasons counts, per filter name, the nodes it
// rejected when the group stopped fitting (summed over the clusters tried), and
// ReasonCluster counts excluded clusters. It wraps ErrNoCapacity or ErrQuotaExceeded.
type NoPlacementError struct {
	Err     error
	Reasons map[string]int
	// Placed is the most VMs of the group any cluster could take.
	Placed int
	// Explanation explains every node of every cluster tried (in the order tried), in
	// the round that found no node there: the filter that rejected each. Nil with
	// Config.Quiet or when no cluster was tried.
	Explanation *Explanation
}

func (e *NoPlacementError) Error() string {
	keys := make([]string, 0, len(e.Reasons))
	for k := range e.Reasons {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s: %d", k, e.Reasons[k])
	}
	return fmt.Sprintf("schedule: %v (placed %d; rejected by %s)", e.Err, e.Placed, strings.Join(parts, ", "))
}

// Unwrap returns the sentinel, so errors.Is(err, ErrNoCapacity) works.
func (e *NoPlacementError) Unwrap() error { return e.Err }
