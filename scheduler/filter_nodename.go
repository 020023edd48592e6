package scheduler

// NodeName keeps only the nodes the policy names, when it names any.
type NodeName struct{}

var _ Filter = (*NodeName)(nil)

// Name implements Filter.
func (NodeName) Name() string { return "NodeName" }

// Filter implements Filter.
func (NodeName) Filter(st *State, n *NodeView) Status {
	names := st.Request.Policy.NodeNames
	if len(names) == 0 || contains(names, n.Name) {
		return Pass
	}
	return Reject("NODE_NAME", "node is not one of the policy's node names")
}
