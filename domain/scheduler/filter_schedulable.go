package scheduler

// Schedulable rejects nodes an operator cordoned.
type Schedulable struct{}

var _ Filter = (*Schedulable)(nil)

var statusUnschedulable = known("UNSCHEDULABLE", "node is cordoned")

// Name implements Filter.
func (Schedulable) Name() string { return "Schedulable" }

func (Schedulable) prepareFilter(*attempt) bool { return true }

func (Schedulable) filterBatch(a *attempt, fi int, cand []int32) []int32 {
	n, hot := 0, a.hot
	for _, c := range cand {
		if !hot[c].schedulable {
			a.reject(c, fi, statusUnschedulable.id)
			continue
		}
		cand[n] = c
		n++
	}
	return cand[:n]
}

func (Schedulable) stable() bool { return true }
