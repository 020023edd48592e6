package fieldtype

import "fmt"

// Disk media, the values of Disk.Type.
const (
	DiskHDD  = "HDD"
	DiskSSD  = "SSD"
	DiskNVMe = "NVME"
)

// Disk is one physical disk of a host's hardware spec.
type Disk struct {
	Type       string `json:"type"`
	CapacityGB int    `json:"capacityGB"`
	Count      int    `json:"count"`
}

// GPU is a kind of accelerator fitted to a host, with how many of it.
type GPU struct {
	Model    string `json:"model"`
	Count    int    `json:"count"`
	MemoryMB int    `json:"memoryMB"`
}

// NIC is a kind of network card fitted to a host.
type NIC struct {
	Model     string `json:"model"`
	Ports     int    `json:"ports"`
	SpeedMbps int    `json:"speedMbps"`
}

// ModelPrice is the hourly price of a flavor on hosts of one hardware model.
type ModelPrice struct {
	HostModel    string  `json:"hostModel"`
	PricePerHour float64 `json:"pricePerHour"`
}

// ValidateDisks rejects disks of an unknown medium or without capacity.
func ValidateDisks(ds []Disk) error {
	for i, d := range ds {
		switch d.Type {
		case DiskHDD, DiskSSD, DiskNVMe:
		default:
			return fmt.Errorf("disk %d: type %q is not one of HDD, SSD, NVME", i, d.Type)
		}
		if d.CapacityGB <= 0 || d.Count <= 0 {
			return fmt.Errorf("disk %d: capacityGB and count must be positive", i)
		}
	}
	return nil
}

// ValidateGPUs rejects GPUs without a model or count.
func ValidateGPUs(gs []GPU) error {
	for i, g := range gs {
		if g.Model == "" || g.Count <= 0 || g.MemoryMB < 0 {
			return fmt.Errorf("gpu %d: model is required and count must be positive", i)
		}
	}
	return nil
}

// ValidateNICs rejects NICs without ports or speed.
func ValidateNICs(ns []NIC) error {
	for i, n := range ns {
		if n.Ports <= 0 || n.SpeedMbps <= 0 {
			return fmt.Errorf("nic %d: ports and speedMbps must be positive", i)
		}
	}
	return nil
}

// ValidatePrices rejects a price table with a blank model, a negative price or a model listed twice.
func ValidatePrices(ps []ModelPrice) error {
	seen := map[string]bool{}
	for i, p := range ps {
		if p.HostModel == "" || p.PricePerHour < 0 {
			return fmt.Errorf("price %d: hostModel is required and pricePerHour must not be negative", i)
		}
		if seen[p.HostModel] {
			return fmt.Errorf("price %d: host model %q listed twice", i, p.HostModel)
		}
		seen[p.HostModel] = true
	}
	return nil
}

// NUMANode is one NUMA node (cell) of a host as its agent reads it from libvirt's
// capabilities: its id, the host CPUs in it and its memory.
type NUMANode struct {
	ID       int   `json:"id"`
	CPUs     []int `json:"cpus"`
	MemoryMB int64 `json:"memoryMB"`
}

// ValidateNUMANodes rejects NUMA nodes with a negative or repeated id, no CPUs, a CPU in two
// nodes or negative memory, and more than 62 nodes (exclusive_mask keeps one bit per node).
func ValidateNUMANodes(ns []NUMANode) error {
	if len(ns) > 62 {
		return fmt.Errorf("%d NUMA nodes: at most 62", len(ns))
	}
	ids, cpus := map[int]bool{}, map[int]bool{}
	for i, n := range ns {
		if n.ID < 0 || n.ID > 61 || ids[n.ID] {
			return fmt.Errorf("NUMA node %d: id %d is negative, above 61 or repeated", i, n.ID)
		}
		ids[n.ID] = true
		if len(n.CPUs) == 0 || n.MemoryMB < 0 {
			return fmt.Errorf("NUMA node %d: needs CPUs and non-negative memory", n.ID)
		}
		for _, c := range n.CPUs {
			if c < 0 || cpus[c] {
				return fmt.Errorf("NUMA node %d: CPU %d is negative or in another node", n.ID, c)
			}
			cpus[c] = true
		}
	}
	return nil
}
