package scheduler

// CPUFit rejects nodes without enough free cores (no overcommit). Dedicated flavors also
// need that many free dedicated cores.
type CPUFit struct{}

var _ Filter = (*CPUFit)(nil)

var (
	statusInsufficientCPU       = known("INSUFFICIENT_CPU", "not enough free cores")
	statusInsufficientDedicated = known("INSUFFICIENT_DEDICATED_CPU", "not enough free dedicated cores")
)

// Name implements Filter.
func (CPUFit) Name() string { return "CPUFit" }

func (CPUFit) prepareFilter(*attempt) bool { return true }

func (CPUFit) filterBatch(a *attempt, fi int, cand []int32) []int32 {
	n, hot := 0, a.hot
	f := a.st.Request.Flavor
	for _, c := range cand {
		h := &hot[c]
		if h.cpuCap-h.cpuUsed < int64(f.VCPUs) {
			a.reject(c, fi, statusInsufficientCPU.id)
			continue
		}
		if f.Dedicated && h.dedFree < int64(f.VCPUs) {
			a.reject(c, fi, statusInsufficientDedicated.id)
			continue
		}
		cand[n] = c
		n++
	}
	return cand[:n]
}

func (CPUFit) stable() bool { return true }
