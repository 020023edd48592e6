package livestatus

import "encoding/json"

// Channel is the Redis pub/sub channel status events travel on (Publisher.Channel and
// Hub.Channel default to it; tests sharing a Redis use channels of their own).
const Channel = "virtflow:live"

// Type is the kind of entity an event is about; the names are the GraphQL type names.
type Type string

// The entities whose changes are published.
const (
	VirtualMachine Type = "VirtualMachine"
	ComputeNode    Type = "ComputeNode"
	RegionService  Type = "RegionService"
	Assignment     Type = "Assignment"
	// Alert is any change of an alert (raised, repeated, acknowledged, resolved, closed).
	Alert Type = "Alert"
	// Credentials says that what a user's tokens grant may have changed (a token revoked,
	// a role binding removed, the user disabled); ID is the user's id. Connections of that
	// user authenticate again (Hub.WatchCredentials).
	Credentials Type = "Credentials"
)

// Event says that an entity changed. It carries only what subscribers filter on; the
// entity itself is read again by each subscriber with its own permissions.
type Event struct {
	Type Type `json:"type"`
	ID   int  `json:"id"`
	// TenantID is the owning tenant (VMs, region services), 0 when none.
	TenantID int `json:"tenantID,omitempty"`
	// ClusterID is the cluster of a VM or node, 0 when none.
	ClusterID int `json:"clusterID,omitempty"`
	// NodeID is the node of a VM or assignment (a node's own id for a node), 0 when none.
	NodeID int `json:"nodeID,omitempty"`

	// seq numbers the events a hub dispatched, for sharing re-reads between subscribers.
	seq uint64
}

func (e Event) encode() []byte {
	b, _ := json.Marshal(e)
	return b
}

func decode(payload string) (Event, bool) {
	var e Event
	if err := json.Unmarshal([]byte(payload), &e); err != nil || e.Type == "" || e.ID == 0 {
		return Event{}, false
	}
	return e, true
}
