package scheduler

// Provider rejects nodes without the request's provider (e.g. libvirt); an empty
// request provider accepts any node.
type Provider struct{}

var _ Filter = (*Provider)(nil)

var statusNoProvider = known("NO_PROVIDER", "node lacks the requested provider")

// Name implements Filter.
func (Provider) Name() string { return "Provider" }

// prepareFilter decides once per distinct provider list of the snapshot, and skips the
// filter when every list has the provider.
func (Provider) prepareFilter(a *attempt) bool {
	p := a.st.Request.Provider
	if p == "" {
		return false
	}
	a.provOK = grow(a.provOK, len(a.ix.provSets))
	all := true
	for i := range a.provOK {
		a.provOK[i] = a.ix.hasProvider(int32(i), p)
		all = all && a.provOK[i]
	}
	return !all
}

func (Provider) filterBatch(a *attempt, fi int, cand []int32) []int32 {
	n := 0
	ok, prov := a.provOK, a.ix.prov
	for _, c := range cand {
		if !ok[prov[a.pos[c]]] {
			a.reject(c, fi, statusNoProvider.id)
			continue
		}
		cand[n] = c
		n++
	}
	return cand[:n]
}

func (Provider) stable() bool { return true }
