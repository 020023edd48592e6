package scheduler

// AvailabilityZone keeps the group in the availability zone the request names
// (Request.AvailabilityZone, the tenant's choice at create).
type AvailabilityZone struct{}

var _ Filter = (*AvailabilityZone)(nil)

var statusOtherAZ = known("OTHER_AVAILABILITY_ZONE", "node is in another availability zone")

// Name implements Filter.
func (AvailabilityZone) Name() string { return "AvailabilityZone" }

func (AvailabilityZone) prepareFilter(a *attempt) bool {
	want := a.st.Request.AvailabilityZone
	if want == "" {
		return false
	}
	a.wantAZ = -1
	for id, name := range a.ix.azNames {
		if name == want {
			a.wantAZ = int32(id)
		}
	}
	return true
}

func (AvailabilityZone) filterBatch(a *attempt, fi int, cand []int32) []int32 {
	n := 0
	for _, c := range cand {
		if a.hot[c].azID != a.wantAZ {
			a.reject(c, fi, statusOtherAZ.id)
			continue
		}
		cand[n] = c
		n++
	}
	return cand[:n]
}

func (AvailabilityZone) stable() bool { return true }
