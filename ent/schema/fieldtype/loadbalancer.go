package fieldtype

// Listener protocols, the values of LBListener.Protocol.
const (
	ListenerTCP  = "TCP"
	ListenerHTTP = "HTTP"
)

// Member health, the values of LBMember.Health.
const (
	HealthUp      = "UP"
	HealthDown    = "DOWN"
	HealthUnknown = "UNKNOWN"
)

// LBListener is one port a load balancer accepts connections on: TCP forwards the stream
// (the L4 tier), HTTP terminates HTTP and forwards requests (the optional L7 tier); the
// members receive it on TargetPort. In GraphQL it is LoadBalancerListener.
type LBListener struct {
	Port       int    `json:"port"`
	Protocol   string `json:"protocol"`
	TargetPort int    `json:"targetPort"`
}

// LBMember is one replica of the load balancer's region service as its load-balancer nodes
// see it: its address, its health (UP, DOWN or UNKNOWN before a check), when it was last
// checked and why it is down. In GraphQL it is LoadBalancerMember.
type LBMember struct {
	VMID      int    `json:"vmID"`
	Address   string `json:"address"`
	Health    string `json:"health"`
	LastCheck string `json:"lastCheck,omitempty"`
	Reason    string `json:"reason,omitempty"`
}

// LBNode is the state of one node serving a load balancer as its agent last reported it:
// whether it announces the VIP to its BGP peers and whether its proxy forwards. In GraphQL it
// is LoadBalancerNodeState.
type LBNode struct {
	NodeID     int    `json:"nodeID"`
	NodeName   string `json:"nodeName"`
	Announced  bool   `json:"announced"`
	Forwarding bool   `json:"forwarding"`
	ReportedAt string `json:"reportedAt,omitempty"`
	Reason     string `json:"reason,omitempty"`
}
