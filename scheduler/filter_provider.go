package scheduler

// Provider rejects nodes without the request's provider (e.g. libvirt); an empty
// request provider accepts any node.
type Provider struct{}

var _ Filter = (*Provider)(nil)

// Name implements Filter.
func (Provider) Name() string { return "Provider" }

// Filter implements Filter.
func (Provider) Filter(st *State, n *NodeView) Status {
	p := st.Request.Provider
	if p == "" || contains(n.Providers, p) {
		return Pass
	}
	return Reject("NO_PROVIDER", "node lacks the requested provider")
}
