package fleet

import (
	"context"
	"fmt"
	"time"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/apitoken"
	"github.com/virtflow/virtflow/ent/user"
	"github.com/virtflow/virtflow/identity"
)

// AgentUsername is the user the agent of node nodeID acts as.
func AgentUsername(nodeID int) string { return fmt.Sprintf("agent-node-%d", nodeID) }

// IssueAgentToken makes (or keeps) the agent user of node nodeID, with the AGENT role on
// that node and nothing else, and returns a new read-write agent token for it. The agent
// user's earlier agent tokens are revoked: their plaintext was only ever in the memory of a
// process that is gone, so nothing can use them legitimately any more. Only the token's
// hash is stored.
func IssueAgentToken(ctx context.Context, c *ent.Client, ids *identity.Service, nodeID int) (string, error) {
	sys := authz.SystemContext(ctx, "fleet")
	name := AgentUsername(nodeID)
	u, err := c.User.Query().Where(user.Username(name)).Only(sys)
	if ent.IsNotFound(err) {
		u, err = c.User.Create().SetUsername(name).SetDisplayName(fmt.Sprintf("node agent of node %d", nodeID)).Save(sys)
		if ent.IsConstraintError(err) { // created concurrently
			u, err = c.User.Query().Where(user.Username(name)).Only(sys)
		}
	}
	if err != nil {
		return "", fmt.Errorf("agent user of node %d: %w", nodeID, err)
	}
	if _, err := ids.GrantRole(sys, u.ID, authz.RoleAgent, nil, &nodeID); err != nil {
		return "", fmt.Errorf("grant agent role on node %d: %w", nodeID, err)
	}
	if _, err := c.APIToken.Update().
		Where(apitoken.HasOwnerWith(user.ID(u.ID)), apitoken.KindEQ(apitoken.KindAgent), apitoken.RevokedAtIsNil()).
		SetRevokedAt(time.Now()).Save(sys); err != nil {
		return "", fmt.Errorf("revoke old agent tokens of node %d: %w", nodeID, err)
	}
	plain, hash, prefix := identity.NewToken(apitoken.KindAgent)
	if _, err := c.APIToken.Create().SetName(fmt.Sprintf("simulated agent of node %d", nodeID)).
		SetTokenHash(hash).SetPrefix(prefix).SetKind(apitoken.KindAgent).SetScope(apitoken.ScopeReadWrite).
		SetOwnerID(u.ID).Save(sys); err != nil {
		return "", fmt.Errorf("create agent token of node %d: %w", nodeID, err)
	}
	return plain, nil
}
