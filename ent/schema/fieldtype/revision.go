package fieldtype

import "time"

// VMRevision is one entry of a VM's spec history: what the VM was at a revision (its
// flavor and the sizes that came with it) and when that revision began. The VM keeps the
// newest maxRevisionHistory entries. In GraphQL it is the type VirtualMachineRevision.
type VMRevision struct {
	Revision   int       `json:"revision"`
	FlavorID   int       `json:"flavorID"`
	FlavorName string    `json:"flavorName"`
	VCPUs      int       `json:"vcpus"`
	MemoryMB   int64     `json:"memoryMB"`
	DiskGB     int64     `json:"diskGB"`
	CreatedAt  time.Time `json:"createdAt"`
}
