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
	return usedFraction(n.CPUUsed, n.CPUCapacity, n.MemoryUsedMB, n.MemoryMB, st.Request.Flavor)
}

func usedFraction(cpuUsed, cpuCap int, memUsed, memCap int64, f Flavor) float64 {
	cpu, mem := 1.0, 1.0
	if cpuCap > 0 {
		cpu = clamp01(float64(cpuUsed+f.VCPUs) * (1 / float64(cpuCap)))
	}
	if memCap > 0 {
		mem = clamp01(float64(memUsed+f.MemoryMB) * (1 / float64(memCap)))
	}
	return (cpu + mem) / 2
}

// usedAfterBatch writes usedAfter of each candidate to out. Fractions are taken as a
// product with the capacity's reciprocal (in Score too), so the divisions can be
// shared by the nodes of equal capacity, the common case.
func usedAfterBatch(a *attempt, cand []int32, out []float64) {
	f, hot := a.st.Request.Flavor, a.hot
	lastCPU, lastMem := int32(0), int64(0)
	rCPU, rMem := 0.0, 0.0
	for _, c := range cand {
		h := &hot[c]
		cpu, mem := 1.0, 1.0
		if h.cpuCap > 0 {
			if h.cpuCap != lastCPU {
				lastCPU, rCPU = h.cpuCap, 1/float64(int(h.cpuCap))
			}
			cpu = clamp01(float64(int(h.cpuUsed)+f.VCPUs) * rCPU)
		}
		if h.memCap > 0 {
			if h.memCap != lastMem {
				lastMem, rMem = h.memCap, 1/float64(h.memCap)
			}
			mem = clamp01(float64(h.memUsed+f.MemoryMB) * rMem)
		}
		out[c] = (cpu + mem) / 2
	}
}

func (LeastAllocated) prepareScorer(*attempt) bool { return true }

func (LeastAllocated) scoreBatch(a *attempt, cand []int32, out []float64) {
	usedAfterBatch(a, cand, out)
	for _, c := range cand {
		out[c] = MaxScore * (1 - out[c])
	}
}

func (MostAllocated) prepareScorer(*attempt) bool { return true }

func (MostAllocated) scoreBatch(a *attempt, cand []int32, out []float64) {
	usedAfterBatch(a, cand, out)
	for _, c := range cand {
		out[c] = MaxScore * out[c]
	}
}

func (LeastAllocated) stable() bool { return true }

func (MostAllocated) stable() bool { return true }
