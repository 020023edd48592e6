package identity

import (
	"context"
	"fmt"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/apitoken"
	"github.com/virtflow/virtflow/ent/user"
)

// AgentUsername is the user the agent of node nodeID acts as.
func AgentUsername(nodeID int) string { return fmt.Sprintf("agent-node-%d", nodeID) }

// IssueAgentToken makes (or keeps) the agent user of node nodeID, with the AGENT role on
// that node and nothing else, and returns a new read-write agent token for it (plaintext and
// row, owner loaded). The agent user's earlier agent tokens are revoked: their plaintext was
// only ever held by an agent that is being replaced, so nothing can use them legitimately any
// more. Only the token's hash is stored. It acts as the system: callers check who may ask
// (registerNode's join token, the simulated fleet).
func (s *Service) IssueAgentToken(ctx context.Context, nodeID int, tokenName string) (string, *ent.APIToken, error) {
	sys := system(ctx)
	db := s.db(ctx)
	name := AgentUsername(nodeID)
	u, err := db.User.Query().Where(user.Username(name)).Only(sys)
	if ent.IsNotFound(err) {
		u, err = db.User.Create().SetUsername(name).SetDisplayName(fmt.Sprintf("node agent of node %d", nodeID)).Save(sys)
		if ent.IsConstraintError(err) { // created concurrently
			u, err = db.User.Query().Where(user.Username(name)).Only(sys)
		}
	}
	if err != nil {
		return "", nil, fmt.Errorf("identity: agent user of node %d: %w", nodeID, err)
	}
	if _, err := s.GrantRole(sys, u.ID, authz.RoleAgent, nil, &nodeID); err != nil {
		return "", nil, fmt.Errorf("identity: grant agent role on node %d: %w", nodeID, err)
	}
	if _, err := db.APIToken.Update().
		Where(apitoken.HasOwnerWith(user.ID(u.ID)), apitoken.KindEQ(apitoken.KindAgent), apitoken.RevokedAtIsNil()).
		SetRevokedAt(s.now()).Save(sys); err != nil {
		return "", nil, fmt.Errorf("identity: revoke old agent tokens of node %d: %w", nodeID, err)
	}
	plain, hash, prefix := NewToken(apitoken.KindAgent)
	t, err := db.APIToken.Create().SetName(tokenName).
		SetTokenHash(hash).SetPrefix(prefix).SetKind(apitoken.KindAgent).SetScope(apitoken.ScopeReadWrite).
		SetOwnerID(u.ID).Save(sys)
	if err != nil {
		return "", nil, fmt.Errorf("identity: create agent token of node %d: %w", nodeID, err)
	}
	t.Edges.Owner = u
	return plain, t, nil
}
