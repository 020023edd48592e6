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

// Name implements Scorer.
func (MostAllocated) Name() string { return "MostAllocated" }

// usedAfter writes, for each candidate, the mean of its CPU and memory fractions used
// once the VM is placed to out. Fractions are taken as a product with the capacity's
// reciprocal, so the divisions can be shared by the nodes of equal capacity, the common
// case.
func usedAfter(a *attempt, cand []int32, out []float64) {
	f, hot := a.st.Request.Flavor, a.hot
	lastCPU, lastMem := int64(0), int64(0)
	rCPU, rMem := 0.0, 0.0
	for _, c := range cand {
		h := &hot[c]
		cpu, mem := 1.0, 1.0
		if h.cpuCap > 0 {
			if h.cpuCap != lastCPU {
				lastCPU, rCPU = h.cpuCap, 1/float64(h.cpuCap)
			}
			cpu = clamp01(float64(h.cpuUsed+int64(f.VCPUs)) * rCPU)
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
	usedAfter(a, cand, out)
	for _, c := range cand {
		out[c] = MaxScore * (1 - out[c])
	}
}

func (MostAllocated) prepareScorer(*attempt) bool { return true }

func (MostAllocated) scoreBatch(a *attempt, cand []int32, out []float64) {
	usedAfter(a, cand, out)
	for _, c := range cand {
		out[c] = MaxScore * out[c]
	}
}

func (LeastAllocated) stable() bool { return true }

func (MostAllocated) stable() bool { return true }
