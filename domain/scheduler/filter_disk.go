package scheduler

// DiskFit rejects nodes without enough free disk (no overcommit).
type DiskFit struct{}

var _ Filter = (*DiskFit)(nil)

var statusInsufficientDisk = known("INSUFFICIENT_DISK", "not enough free disk")

// Name implements Filter.
func (DiskFit) Name() string { return "DiskFit" }

func (DiskFit) prepareFilter(*attempt) bool { return true }

func (DiskFit) filterBatch(a *attempt, fi int, cand []int32) []int32 {
	n, hot := 0, a.hot
	need := a.st.Request.Flavor.DiskGB
	for _, c := range cand {
		h := &hot[c]
		if h.diskCap-h.diskUsed < need {
			a.reject(c, fi, statusInsufficientDisk.id)
			continue
		}
		cand[n] = c
		n++
	}
	return cand[:n]
}

func (DiskFit) stable() bool { return true }
