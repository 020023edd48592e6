package fleet

import (
	"context"
	"fmt"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/identity"
	"github.com/virtflow/virtflow/ent"
)

// AgentUsername is the user the agent of node nodeID acts as.
func AgentUsername(nodeID int) string { return identity.AgentUsername(nodeID) }

// IssueAgentToken makes (or keeps) the agent user of node nodeID, with the AGENT role on
// that node and nothing else, and returns a new read-write agent token for it
// (identity.Service.IssueAgentToken, the same path registerNode takes). The agent user's
// earlier agent tokens are revoked. Only the token's hash is stored.
func IssueAgentToken(ctx context.Context, c *ent.Client, ids *identity.Service, nodeID int) (string, error) {
	sys := authz.SystemContext(ctx, "fleet")
	if ent.FromContext(sys) == nil {
		sys = ent.NewContext(sys, c)
	}
	plain, _, err := ids.IssueAgentToken(sys, nodeID, fmt.Sprintf("simulated agent of node %d", nodeID))
	return plain, err
}
