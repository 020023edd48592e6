package scheduler

// MemoryFit rejects nodes without enough free memory (no overcommit).
type MemoryFit struct{}

var _ Filter = (*MemoryFit)(nil)

var statusInsufficientMemory = known("INSUFFICIENT_MEMORY", "not enough free memory")

// Name implements Filter.
func (MemoryFit) Name() string { return "MemoryFit" }

func (MemoryFit) prepareFilter(*attempt) bool { return true }

func (MemoryFit) filterBatch(a *attempt, fi int, cand []int32) []int32 {
	n, hot := 0, a.hot
	need := a.st.Request.Flavor.MemoryMB
	for _, c := range cand {
		h := &hot[c]
		if h.memCap-h.memUsed < need {
			a.reject(c, fi, statusInsufficientMemory.id)
			continue
		}
		cand[n] = c
		n++
	}
	return cand[:n]
}

func (MemoryFit) stable() bool { return true }
