package fieldtype

import "time"

// VMRoute is the routed network of one VM address on the node that runs the VM (the seed's
// L3 design, package vmnet): the address's namespace on the node, the namespace's own
// 169.254.32.0/19 address, and whether the node's BGP speaker announces the address's /32.
// The node agent reports it with the VM's assignment status.
type VMRoute struct {
	Address     string    `json:"address"`
	Node        string    `json:"node"`
	Namespace   string    `json:"namespace"`
	LinkAddress string    `json:"linkAddress"`
	Announced   bool      `json:"announced"`
	UpdatedAt   time.Time `json:"updatedAt"`
}
