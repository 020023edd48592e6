package drain

import (
	"context"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/computenode"
)

// component names the system viewer drain writes as (after authorizing the caller).
const component = "drain"

// loadNode reads the node as the viewer of ctx sees it (NOT_FOUND when it cannot) and
// checks the viewer may take nodes out of service: writing the compute fabric in the
// platform domain (operators, admins, the system). Maintainers, tenants and node agents
// may not, even for a node they may otherwise write.
func loadNode(ctx context.Context, c *ent.Client, id int) (*ent.ComputeNode, error) {
	n, err := c.ComputeNode.Get(ctx, id)
	if ent.IsNotFound(err) {
		return nil, apierr.NotFound("compute node %d not found", id)
	}
	if err != nil {
		return nil, err
	}
	if !authz.FromContext(ctx).Can("ComputeNode", authz.ActWrite) {
		return nil, apierr.Forbidden("only operators may cordon, uncordon or drain a node")
	}
	return n, nil
}

// draining reports whether a drain of n is in progress.
func draining(n *ent.ComputeNode) bool {
	return n.DrainState != nil && *n.DrainState == computenode.DrainStateDraining
}
