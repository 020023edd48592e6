package scheduler

// Ready rejects nodes that are not up.
type Ready struct{}

var _ Filter = (*Ready)(nil)

var statusNotReady = known("NOT_READY", "node is not ready")

// Name implements Filter.
func (Ready) Name() string { return "Ready" }

func (Ready) prepareFilter(*attempt) bool { return true }

func (Ready) filterBatch(a *attempt, fi int, cand []int32) []int32 {
	n, hot := 0, a.hot
	for _, c := range cand {
		if !hot[c].ready {
			a.reject(c, fi, statusNotReady.id)
			continue
		}
		cand[n] = c
		n++
	}
	return cand[:n]
}

func (Ready) stable() bool { return true }
