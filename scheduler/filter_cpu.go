package scheduler

// CPUFit rejects nodes without enough free cores (no overcommit). Dedicated flavors also
// need that many free dedicated cores.
type CPUFit struct{}

var _ Filter = (*CPUFit)(nil)

// Name implements Filter.
func (CPUFit) Name() string { return "CPUFit" }

// Filter implements Filter.
func (CPUFit) Filter(st *State, n *NodeView) Status {
	f := st.Request.Flavor
	if n.FreeCPU() < f.VCPUs {
		return Reject("INSUFFICIENT_CPU", "not enough free cores")
	}
	if f.Dedicated && n.DedicatedFree < f.VCPUs {
		return Reject("INSUFFICIENT_DEDICATED_CPU", "not enough free dedicated cores")
	}
	return Pass
}
