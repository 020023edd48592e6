package diagram

import (
	"github.com/virtflow/virtflow/ent/alert"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/host"
	"github.com/virtflow/virtflow/ent/rack"
	"github.com/virtflow/virtflow/ent/virtualmachine"
)

// RackElevation is a rack drawn unit by unit.
type RackElevation struct {
	Rack RackSummary
	// Units lists every unit from the top (Rack.Height) down to 1, empty ones included.
	Units   []RackUnit
	Devices []ElevationDevice
	// UsedUnits counts units occupied on at least one face.
	UsedUnits int
	FreeUnits int
}

// RackSummary names a rack and where it stands.
type RackSummary struct {
	ID             int
	Name           string
	Row            string
	Position       int
	Height         int
	Status         rack.Status
	FloorID        int
	FloorName      string
	DatacenterID   int
	DatacenterName string
	PowerZone      *string
	NetworkZone    *string
	RackZone       *string
}

// RackUnit is one unit of a rack: the device occupying each face, nil when the face is empty.
type RackUnit struct {
	Unit          int
	FrontDeviceID *int
	RearDeviceID  *int
}

// ElevationDevice is a device mounted in a rack.
type ElevationDevice struct {
	ID        int
	Name      string
	Kind      host.Kind
	Role      *host.Role
	Model     string
	Position  int
	Height    int
	Face      host.Face
	FullDepth bool
	Lifecycle host.Lifecycle
	// Node is the compute node of a server, nil for other devices and servers not in a cluster.
	Node        *NodeSummary
	Alerts      AlertCounts
	Maintainers []Responsible
}

// NodeSummary is a compute node's state and allocation.
type NodeSummary struct {
	ID                int
	Name              string
	Status            computenode.Status
	Cordoned          bool
	CPUCapacity       int
	CPUAllocated      int
	MemoryCapacityMB  int64
	MemoryAllocatedMB int64
	VMCount           int
}

// AlertCounts counts open alerts by severity; Worst is nil when there are none.
type AlertCounts struct {
	Fatal    int
	Critical int
	Warning  int
	Worst    *alert.Severity
}

// Responsible is a maintainer or maintainer group responsible for a resource.
type Responsible struct {
	ID    int
	Name  string
	Group bool
}

// FloorView is every rack of a floor.
type FloorView struct {
	ID             int
	Name           string
	DatacenterID   int
	DatacenterName string
	Racks          []FloorRack
}

// FloorRack is one rack of a floor plan.
type FloorRack struct {
	Rack      RackSummary
	UsedUnits int
	FreeUnits int
	Hosts     int
	Capacity  Capacity
	Alerts    AlertCounts
}

// Capacity is compute capacity and its allocation over a set of nodes.
type Capacity struct {
	Nodes             int
	ReadyNodes        int
	CPUCapacity       int
	CPUAllocated      int
	MemoryCapacityMB  int64
	MemoryAllocatedMB int64
	DiskCapacityGB    int64
	DiskAllocatedGB   int64
}

// DatacenterView is a datacenter's floors and clusters.
type DatacenterView struct {
	ID         int
	Name       string
	RegionID   *int
	RegionName *string
	Floors     []FloorSummary
	Clusters   []ClusterSummary
}

// FloorSummary is one floor of a datacenter.
type FloorSummary struct {
	ID         int
	Name       string
	Racks      int
	UsedUnits  int
	TotalUnits int
	Hosts      int
	Capacity   Capacity
	Alerts     AlertCounts
}

// ClusterSummary is one cluster with its capacity and VM count.
type ClusterSummary struct {
	ID       int
	Name     string
	Capacity Capacity
	VMCount  int
}

// ClusterView is a cluster's virtual rack: nodes and the VMs placed on each.
type ClusterView struct {
	Cluster ClusterSummary
	Nodes   []ClusterNode
}

// ClusterNode is a node of the virtual rack with its host's location and its VMs.
type ClusterNode struct {
	Node     NodeSummary
	HostID   int
	HostName string
	RackID   *int
	RackName *string
	VMs      []VMSummary
}

// VMSummary is one VM in a view.
type VMSummary struct {
	ID         int
	Name       string
	Status     virtualmachine.Status
	TenantID   int
	TenantName string
	FlavorName string
	VCPUs      int
	MemoryMB   int64
}

// DiagramNodeKind is the kind of a node of a network diagram.
type DiagramNodeKind string

// Kinds of diagram nodes.
const (
	NodeHost    DiagramNodeKind = "HOST"
	NodeSwitch  DiagramNodeKind = "SWITCH"
	NodeRouter  DiagramNodeKind = "ROUTER"
	NodeVM      DiagramNodeKind = "VM"
	NodeNetwork DiagramNodeKind = "NETWORK"
)

// DiagramEdgeKind is the kind of an edge of a network diagram.
type DiagramEdgeKind string

// Kinds of diagram edges: a cable between two ports, a port attached to a network, or a VM
// running on a host.
const (
	EdgeLink       DiagramEdgeKind = "LINK"
	EdgeAttachment DiagramEdgeKind = "ATTACHMENT"
	// EdgeRunsOn joins a VM to the host it runs on (id: the VM's assignment on the host's node).
	EdgeRunsOn DiagramEdgeKind = "RUNS_ON"
)

// NetworkDiagram is a graph of hosts, switches, routers, VMs and networks.
type NetworkDiagram struct {
	Nodes []DiagramNode
	Edges []DiagramEdge
	// Truncated is true when the diagram stopped at the depth or size limit.
	Truncated bool
}

// DiagramNode is a device, VM or network; ID is its global id.
type DiagramNode struct {
	ID     int
	Kind   DiagramNodeKind
	Name   string
	Role   *host.Role
	Status *string
	// CIDR and VLAN are set for networks.
	CIDR *string
	VLAN *int
}

// DiagramEdge joins two diagram nodes. For a LINK both ports are set and ID is the link;
// for an ATTACHMENT SourcePort is the port and Target the network, ID the port.
type DiagramEdge struct {
	ID         int
	Kind       DiagramEdgeKind
	Source     int
	Target     int
	SourcePort *PortEnd
	TargetPort *PortEnd
	Label      string
}

// PortEnd is one end of an edge.
type PortEnd struct {
	ID        int
	Name      string
	MAC       *string
	VLAN      *int
	Addresses []string
}

// PathTrace lists every hop from a port up to the gateway routers.
type PathTrace struct {
	From PortEnd
	// Hops are in breadth-first order, level 1 being the links leaving the start host.
	Hops []PathHop
	// ReachedGateway is true when at least one path ends at a gateway router.
	ReachedGateway bool
}

// PathHop is one link climbed: from a port of a lower device to a port of a higher one.
type PathHop struct {
	Level        int
	LinkID       int
	FromHostID   int
	FromHostName string
	FromPort     string
	ToHostID     int
	ToHostName   string
	ToPort       string
	ToRole       *host.Role
}
