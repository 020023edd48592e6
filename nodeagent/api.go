package nodeagent

import (
	"context"
	"errors"
	"fmt"
	"strconv"
)

// Assignment is one assignment of the agent's node as the API returns it, with its VM.
type Assignment struct {
	ID            string  `json:"id"`
	DesiredState  string  `json:"desiredState"` // RUNNING, STOPPED, ABSENT
	Status        string  `json:"status"`       // PENDING, APPLYING, APPLIED, FAILED
	ObservedState *string `json:"observedState"`
	Generation    int64   `json:"generation"`
	// VMID is the id of the assignment's VM, on the assignment itself: the agent reads it
	// even when it may no longer read the VM (moved to another node by a drain, or deleted
	// with force), which is when it must remove the domain.
	VMID           *int64          `json:"vmID"`
	VirtualMachine *VirtualMachine `json:"virtualMachine"`
}

// VirtualMachine is what the agent needs of a VM to build its domain.
type VirtualMachine struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Flavor struct {
		VCPUs     int    `json:"vcpus"`
		MemoryMB  int64  `json:"memoryMB"`
		DiskGB    int64  `json:"diskGB"`
		CPUPolicy string `json:"cpuPolicy"` // SHARED or DEDICATED
	} `json:"flavor"`
	Image *struct {
		ID     string `json:"id"`
		Source string `json:"source"`
		Format string `json:"format"` // QCOW2, RAW, ISO
	} `json:"image"`
	Ports struct {
		Edges []struct {
			Node VMPort `json:"node"`
		} `json:"edges"`
	} `json:"ports"`
}

// VMPort is one network port of a VM.
type VMPort struct {
	MAC    *string `json:"mac"`
	VLAN   *int    `json:"vlan"`
	Driver *string `json:"driver"`
}

// AssignmentReport is the observed state of one assignment, sent with reportAssignmentStatus.
type AssignmentReport struct {
	ID            string `json:"id"`
	Generation    int64  `json:"generation"`
	Status        string `json:"status"` // APPLIED or FAILED
	ObservedState string `json:"observedState"`
	Reason        string `json:"reason,omitempty"`
}

// NodeStatus is one heartbeat, sent with reportNodeStatus.
type NodeStatus struct {
	NodeID           string  `json:"nodeID"`
	CPUCapacity      int     `json:"cpuCapacity"`
	MemoryCapacityMB int     `json:"memoryCapacityMB"`
	DiskCapacityGB   *int    `json:"diskCapacityGB,omitempty"`
	AgentVersion     string  `json:"agentVersion,omitempty"`
	Healthy          bool    `json:"healthy"`
	Message          *string `json:"message,omitempty"`
	RequestCordon    bool    `json:"requestCordon"`
}

// ErrNoNode is returned when the token does not identify exactly one node.
var ErrNoNode = errors.New("nodeagent: the token does not identify exactly one compute node; set the node id")

// discoverNode returns the id of the only compute node the token can read: an agent token
// sees its own node and nothing else.
func (c *Client) discoverNode(ctx context.Context) (string, error) {
	var out struct {
		ComputeNodes struct {
			Edges []struct {
				Node struct {
					ID string `json:"id"`
				} `json:"node"`
			} `json:"edges"`
		} `json:"computeNodes"`
	}
	if err := c.Do(ctx, `{ computeNodes(first: 2) { edges { node { id } } } }`, nil, &out); err != nil {
		return "", fmt.Errorf("discover node: %w", err)
	}
	if len(out.ComputeNodes.Edges) != 1 {
		return "", ErrNoNode
	}
	return out.ComputeNodes.Edges[0].Node.ID, nil
}

// assignmentsQuery reads one page of a node's assignments with everything realize needs.
const assignmentsQuery = `query($node: ID!, $after: Cursor) {
  node(id: $node) { ... on ComputeNode {
    assignments(first: 500, after: $after) {
      pageInfo { hasNextPage endCursor }
      edges { node {
        id desiredState status observedState generation vmID
        virtualMachine {
          id name
          flavor { vcpus memoryMB diskGB cpuPolicy }
          image { id source format }
          ports(first: 32) { edges { node { mac vlan driver } } }
        }
      } }
    }
  } }
}`

// assignments reads all assignments of node, page by page.
func (c *Client) assignments(ctx context.Context, node string) ([]Assignment, error) {
	var all []Assignment
	var after any
	for {
		var out struct {
			Node *struct {
				Assignments struct {
					PageInfo struct {
						HasNextPage bool    `json:"hasNextPage"`
						EndCursor   *string `json:"endCursor"`
					} `json:"pageInfo"`
					Edges []struct {
						Node Assignment `json:"node"`
					} `json:"edges"`
				} `json:"assignments"`
			} `json:"node"`
		}
		if err := c.Do(ctx, assignmentsQuery, map[string]any{"node": node, "after": after}, &out); err != nil {
			return nil, fmt.Errorf("read assignments: %w", err)
		}
		if out.Node == nil {
			return nil, fmt.Errorf("read assignments: node %s not found", node)
		}
		for _, e := range out.Node.Assignments.Edges {
			all = append(all, e.Node)
		}
		pi := out.Node.Assignments.PageInfo
		if !pi.HasNextPage || pi.EndCursor == nil {
			return all, nil
		}
		after = *pi.EndCursor
	}
}

// reportAssignment sends r with reportAssignmentStatus.
func (c *Client) reportAssignment(ctx context.Context, r AssignmentReport) error {
	in := map[string]any{"id": r.ID, "generation": r.Generation, "status": r.Status, "observedState": r.ObservedState}
	if r.Reason != "" {
		in["reason"] = r.Reason
	}
	err := c.Do(ctx, `mutation($in: AssignmentStatusInput!) { reportAssignmentStatus(input: $in) { id } }`,
		map[string]any{"in": in}, nil)
	if err != nil {
		return fmt.Errorf("report assignment %s: %w", r.ID, err)
	}
	return nil
}

// reportNode sends one heartbeat.
func (c *Client) reportNode(ctx context.Context, s NodeStatus) error {
	err := c.Do(ctx, `mutation($in: NodeStatusInput!) { reportNodeStatus(input: $in) { id } }`,
		map[string]any{"in": s}, nil)
	if err != nil {
		return fmt.Errorf("report node status: %w", err)
	}
	return nil
}

// vmID parses a VM's global id.
func vmID(id string) (int64, error) {
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("VM id %q: not a positive integer", id)
	}
	return n, nil
}
