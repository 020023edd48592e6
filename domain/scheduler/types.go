package scheduler

// Snapshot is the immutable view of the fleet a decision is made against. Schedule never
// modifies it; committing a Decision (and re-checking it under a lock) is the caller's job.
// A snapshot kept between decisions may be updated in place: Apply commits a decision to
// it; after editing nodes otherwise, call Invalidate (static attributes) or
// AllocationsChanged (allocations and capacities), since Schedule keeps an index of the
// snapshot.
type Snapshot struct {
	Clusters []Cluster
	Nodes    []Node
	// Quotas holds each tenant's quota per host group. A missing entry means "no quota"
	// unless Config.RequireQuota is set.
	Quotas map[QuotaKey]Quota
}

// Cluster is a scheduling domain; one request is never split across clusters.
type Cluster struct {
	ID     int
	Name   string
	Region string
	Labels map[string]string
	// Weight orders candidate clusters, highest first.
	Weight int
}

// Node is a hypervisor host with its capacity and current allocations.
type Node struct {
	ID               int
	Name             string
	ClusterID        int
	Ready            bool
	Schedulable      bool
	Providers        []string
	Labels           map[string]string
	AvailabilityZone string
	// Failure domains used by zone rules.
	PowerZone, RackZone, NetworkZone string
	HostGroupID                      int

	// Lifecycle is empty for a node that may take new VMs, else the reason it may not
	// (LifecycleRegionClosed etc.), which the Lifecycle filter reports. Like Ready and
	// Schedulable it is read afresh by every decision.
	Lifecycle Code

	// Capacities and allocations are read afresh from the nodes a decision looks at, but
	// the CPU ones are also summed per cluster and AZ with the snapshot's index: edit
	// them in place through Apply, or call Snapshot.AllocationsChanged after.
	CPUCapacity, CPUAllocated   int
	MemoryMB, MemoryAllocatedMB int64
	DiskGB, DiskAllocatedGB     int64
	DedicatedCoresFree          int

	// ExclusiveMask is what exclusive VMs hold of the node (ExclusiveHostBit, NUMABit)
	// and NUMANodes its NUMA nodes as its agent reported them.
	ExclusiveMask int64
	NUMANodes     []NUMANode
}

// NUMANode is one NUMA node of a node: its id, how many CPUs it has and its memory.
type NUMANode struct {
	ID       int
	CPUs     int
	MemoryMB int64
}

// ExclusiveHostBit is the bit of Node.ExclusiveMask an exclusive HOST VM holds.
const ExclusiveHostBit int64 = 1

// NUMABit is the bit of Node.ExclusiveMask an exclusive NUMA_NODE VM on NUMA node id holds.
func NUMABit(id int) int64 { return 1 << (uint(id) + 1) }

// Exclusivity is what a flavor takes of a node alone: nothing (shared), the whole host or
// one NUMA node.
type Exclusivity uint8

// Exclusivities.
const (
	ExclusiveNone Exclusivity = iota
	ExclusiveHost
	ExclusiveNUMANode
)

// QuotaKey identifies a tenant's quota in one host group.
type QuotaKey struct {
	TenantID    int
	HostGroupID int
}

// Quota is a tenant's allowance in a host group and what it already uses. A zero limit
// means that dimension is not limited.
type Quota struct {
	VCPUs, UsedVCPUs int
	// CPUPercent caps the tenant's vCPUs at this percentage of GroupCores.
	CPUPercent float64
	GroupCores int

	MemoryMB, UsedMemoryMB   int64
	StorageGB, UsedStorageGB int64
}

// Flavor is the size of one VM.
type Flavor struct {
	VCPUs     int
	MemoryMB  int64
	DiskGB    int64
	Dedicated bool // needs pinned cores (Node.DedicatedCoresFree)
	// Exclusive takes the whole node or one NUMA node of it, alone (filter Exclusive).
	Exclusive Exclusivity
}

// Request asks for Count VMs of one flavor, placed together in one cluster.
type Request struct {
	TenantID int
	Region   string
	Provider string
	Flavor   Flavor
	// AvailabilityZone, when set, keeps the group in the AZ of this name.
	AvailabilityZone string
	// Count is the size of the group (e.g. a region service); 0 means 1.
	Count  int
	Policy Policy
	// AllowPartial accepts a decision that places fewer than Count VMs.
	AllowPartial bool
	// GroupNodeIDs lists the nodes that already hold VMs of the same group (e.g. the
	// running replicas of a region service being scaled up), once per VM. Zone rules and
	// SpreadAZ count them exactly like VMs placed earlier in this request; their
	// allocations and quota use are already in the snapshot. IDs not in the snapshot are
	// ignored.
	GroupNodeIDs []int
}

// Zone kinds, the values of ZoneRule.Kind (mirrors fieldtype.ZonePower etc.).
const (
	ZonePower   = "POWER"
	ZoneRack    = "RACK"
	ZoneNetwork = "NETWORK"
)

// Zone rule modes, the values of ZoneRule.Mode.
const (
	ZoneAffinity     = "AFFINITY"
	ZoneAntiAffinity = "ANTI_AFFINITY"
)

// ZoneRule keeps a group's VMs in one zone of a kind (AFFINITY, optionally a named zone;
// otherwise the zone of the group's first VM, Request.GroupNodeIDs first) or in distinct
// zones (ANTI_AFFINITY).
type ZoneRule struct {
	Kind string
	Mode string
	Zone string
}

// Policy mirrors fieldtype.SchedulePolicy: which clusters and nodes qualify and which are
// preferred. The affinity maps require (hard) or prefer (soft) key=value pairs on the
// node; the anti-affinity maps spread the group over the values of each key (a topology
// key, as in Kubernetes' pod anti-affinity; the map's values are not used): hard puts
// each VM of the group on a node with a different value, soft as evenly as it can. The
// exclusion maps forbid (hard) or avoid (soft) nodes carrying a key=value pair.
type Policy struct {
	ClusterNames                []string
	ClusterLabels               map[string]string
	NodeNames                   []string
	NodeLabelHardAffinities     map[string]string
	NodeLabelHardAntiAffinities map[string]string
	NodeLabelSoftAffinities     map[string]string
	NodeLabelSoftAntiAffinities map[string]string
	NodeLabelHardExclusions     map[string]string
	NodeLabelSoftExclusions     map[string]string
	Zones                       []ZoneRule
}

// Reasons a node takes no new VMs whatever the request (Node.Lifecycle).
const (
	LifecycleRegionClosed        Code = "REGION_CLOSED"
	LifecycleHostRetired         Code = "HOST_RETIRED"
	LifecycleHostMaintenance     Code = "HOST_MAINTENANCE"
	LifecycleRackDecommissioning Code = "RACK_DECOMMISSIONING"
)

// Decision is the outcome of Schedule: where each VM goes and why.
type Decision struct {
	ClusterID  int
	Placements []Placement
	// Unplaced counts VMs of the group that did not fit (only with AllowPartial).
	Unplaced int
	// Nodes explains every node of the chosen cluster as evaluated in the last round
	// (the last VM placed, or with AllowPartial the one that did not fit): the filter
	// that rejected it, or its scores. Empty with Config.Quiet or Config.CompactExplain.
	Nodes []NodeResult
	// Explanation is the same record in compact form (nil with Config.Quiet); its Nodes
	// method builds Nodes on demand.
	Explanation *Explanation
}

// Placement puts one VM of the group on a node.
type Placement struct {
	NodeID int
	Total  float64
}

// NodeResult explains one node: Rejected names the filter that refused it (Code and
// Reason say why); otherwise Scores holds each scorer's 0..MaxScore result and Total
// their weighted sum. Skipped nodes were not evaluated (Config.MaxNodesToScore,
// Config.ScoreSampleRatio).
type NodeResult struct {
	NodeID   int
	Rejected string
	Code     Code
	Reason   string
	Scores   map[string]float64
	Total    float64
	Skipped  bool
}
