package scheduler

// LeastAllocated prefers emptier nodes (spreading load): MaxScore × the mean of the CPU
// and memory fractions left free once the VM is placed.
type LeastAllocated struct{}

// MostAllocated prefers fuller nodes (bin packing): MaxScore × the mean of the CPU and
// memory fractions used once the VM is placed.
type MostAllocated struct{}

var (
	_ Scorer = (*LeastAllocated)(nil)
	_ Scorer = (*MostAllocated)(nil)
)

// Name implements Scorer.
func (LeastAllocated) Name() string { return "LeastAllocated" }

// Score implements Scorer.
func (LeastAllocated) Score(st *State, n *NodeView) float64 {
	return MaxScore * (1 - usedAfter(st, n))
}

// Name implements Scorer.
func (MostAllocated) Name() string { return "MostAllocated" }

// Score implements Scorer.
func (MostAllocated) Score(st *State, n *NodeView) float64 {
	return MaxScore * usedAfter(st, n)
}

// usedAfter is the mean of the CPU and memory fractions used once the VM is placed.
func usedAfter(st *State, n *NodeView) float64 {
	f := st.Request.Flavor
	cpu, mem := 1.0, 1.0
	if n.CPUCapacity > 0 {
		cpu = clamp01(float64(n.CPUUsed+f.VCPUs) / float64(n.CPUCapacity))
	}
	if n.MemoryMB > 0 {
		mem = clamp01(float64(n.MemoryUsedMB+f.MemoryMB) / float64(n.MemoryMB))
	}
	return (cpu + mem) / 2
}
