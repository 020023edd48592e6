package nodeagent

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// The agent's queries and mutations are in operations.graphql; genqlient generates their
// typed functions and the types they read and send (Assignment, VirtualMachine, VMPort,
// NodeStatusInput, …) in operations_gen.go from the server's schema, so a schema change the
// agent does not follow breaks its build.

// AssignmentReport is the observed state of one assignment, sent with reportAssignmentStatus.
type AssignmentReport struct {
	ID            string
	Generation    int64
	Status        AssignmentStatus // APPLIED, APPLYING or FAILED
	ObservedState string
	Reason        string
	// Volumes says whether VolumeIDs is reported (for a VM's assignment): the ids of the
	// volumes its domain has now, comma-separated in ascending order ("" for none).
	Volumes   bool
	VolumeIDs string
	// GuestAgent says whether the QEMU guest agent of the running domain answered; then
	// GuestHostname and GuestAddresses (comma-separated, sorted) are what it said.
	GuestAgent     bool
	GuestHostname  string
	GuestAddresses string
	// Routes says whether RouteList is reported (routed network mode): the routes of the
	// VM's addresses, "address|namespace|link address|announced" joined by ";".
	Routes    bool
	RouteList string
}

// ErrNoNode is returned when the token does not identify exactly one node.
var ErrNoNode = errors.New("nodeagent: the token does not identify exactly one compute node; set the node id")

// findNode returns the id of the only compute node the token can read: an agent token
// sees its own node and nothing else.
func findNode(ctx context.Context, c *Client) (string, error) {
	out, err := discoverNode(ctx, c)
	if err != nil {
		return "", fmt.Errorf("discover node: %w", err)
	}
	edges := out.ComputeNodes.Edges
	if len(edges) != 1 || edges[0] == nil || edges[0].Node == nil {
		return "", ErrNoNode
	}
	return edges[0].Node.Id, nil
}

// readAssignments reads all assignments of node, page by page.
func readAssignments(ctx context.Context, c *Client, node string) ([]Assignment, error) {
	var all []Assignment
	var after *string
	for {
		out, err := assignmentsPage(ctx, c, node, after)
		if err != nil {
			return nil, fmt.Errorf("read assignments: %w", err)
		}
		var cn *assignmentsPageNodeComputeNode
		if out.Node != nil {
			cn, _ = (*out.Node).(*assignmentsPageNodeComputeNode)
		}
		if cn == nil {
			return nil, fmt.Errorf("read assignments: node %s not found", node)
		}
		for _, e := range cn.Assignments.Edges {
			if e != nil && e.Node != nil {
				all = append(all, e.Node.Assignment)
			}
		}
		pi := cn.Assignments.PageInfo
		if !pi.HasNextPage || pi.EndCursor == nil {
			return all, nil
		}
		after = pi.EndCursor
	}
}

// sendReport sends r with reportAssignmentStatus.
func sendReport(ctx context.Context, c *Client, r AssignmentReport) error {
	in := AssignmentStatusInput{Id: r.ID, Generation: int(r.Generation), Status: r.Status, ObservedState: &r.ObservedState}
	if r.Reason != "" {
		in.Reason = &r.Reason
	}
	if r.Volumes {
		in.VolumeIDs = []string{}
		if r.VolumeIDs != "" {
			in.VolumeIDs = strings.Split(r.VolumeIDs, ",")
		}
	}
	if r.GuestAgent {
		g := &GuestAgentReportInput{Addresses: []string{}}
		if r.GuestHostname != "" {
			g.Hostname = &r.GuestHostname
		}
		if r.GuestAddresses != "" {
			g.Addresses = strings.Split(r.GuestAddresses, ",")
		}
		in.GuestAgent = g
	}
	if r.Routes {
		in.Routes = decodeRoutes(r.RouteList)
	}
	if _, err := reportAssignmentStatus(ctx, c, in); err != nil {
		return fmt.Errorf("report assignment %s: %w", r.ID, err)
	}
	return nil
}

// sendGuestCredential sends the hash of the guest credential on the drive of
// assignment id at generation.
func sendGuestCredential(ctx context.Context, c *Client, id string, generation int64, hash string) error {
	if _, err := registerGuestCredential(ctx, c, GuestCredentialInput{AssignmentID: id, Generation: int(generation), CredentialHash: hash}); err != nil {
		return fmt.Errorf("register guest credential of assignment %s: %w", id, err)
	}
	return nil
}

// sendHeartbeat sends one heartbeat.
func sendHeartbeat(ctx context.Context, c *Client, s NodeStatusInput) error {
	if _, err := reportNodeStatus(ctx, c, s); err != nil {
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
