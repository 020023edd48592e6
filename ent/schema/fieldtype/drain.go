package fieldtype

// DrainUnmovable is a VM a drain cannot move off its node and why (pinned by its schedule
// policy, volumes stored on the node, no room elsewhere in its cluster). The drain lists
// them when it starts (ComputeNode.drainUnmovable) and does not wait for them. In GraphQL it
// is the type DrainUnmovableVM.
type DrainUnmovable struct {
	VMID   int    `json:"vmID"`
	VMName string `json:"vmName"`
	Reason string `json:"reason"`
}
