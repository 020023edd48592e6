package scheduler

// Schedulable rejects nodes an operator cordoned.
type Schedulable struct{}

var _ Filter = (*Schedulable)(nil)

// Name implements Filter.
func (Schedulable) Name() string { return "Schedulable" }

// Filter implements Filter.
func (Schedulable) Filter(_ *State, n *NodeView) Status {
	if !n.Schedulable {
		return Reject("UNSCHEDULABLE", "node is cordoned")
	}
	return Pass
}
