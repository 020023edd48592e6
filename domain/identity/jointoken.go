package identity

import (
	"context"
	"fmt"
	"regexp"
	"time"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/domain/nodestatus"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/apitoken"
	"github.com/virtflow/virtflow/ent/cluster"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/host"
	"github.com/virtflow/virtflow/ent/jointoken"
	"github.com/virtflow/virtflow/ent/user"
)

// Join token limits.
const (
	// DefaultJoinTokenTTL is how long a join token lasts when its creator does not say.
	DefaultJoinTokenTTL = time.Hour
	// MaxJoinTokenTTL is the longest a join token may last: it is a bearer secret that
	// creates credentials, so it should not lie around.
	MaxJoinTokenTTL = 7 * 24 * time.Hour
)

// Reasons a join token is refused, sent as extensions.reason with UNAUTHENTICATED.
const (
	JoinTokenUnknown = "UNKNOWN"
	JoinTokenUsed    = "USED"
	JoinTokenExpired = "EXPIRED"
)

// nameRe is the slug every node and host name follows (ent/schema's slugPattern).
var nameRe = regexp.MustCompile(`^[a-z0-9]([a-z0-9._-]{0,126}[a-z0-9])?$`)

// CreateJoinTokenInput describes a join token to create. Validation errors name the fields of
// the GraphQL input CreateJoinTokenInput.
type CreateJoinTokenInput struct {
	// ExpiresIn is the token's lifetime: DefaultJoinTokenTTL when zero, at most
	// MaxJoinTokenTTL.
	ExpiresIn time.Duration
	// NodeID binds the registering agent to an existing compute node.
	NodeID *int
	// ClusterID (when NodeID is nil) makes the registering host a new node of the cluster,
	// named NodeName or, when empty, after the host.
	ClusterID *int
	NodeName  string
}

// CreateJoinToken makes a one-time join token (admins only) and returns its plaintext (shown
// only now; its SHA-256 hash is stored, like an API token's) and its row.
func (s *Service) CreateJoinToken(ctx context.Context, in CreateJoinTokenInput) (string, *ent.JoinToken, error) {
	v, err := writer(ctx)
	if err != nil {
		return "", nil, err
	}
	if !v.Can("JoinToken", authz.ActWrite) {
		return "", nil, apierr.Forbidden("only admins may create join tokens")
	}
	return s.createJoinToken(ctx, v, in)
}

// createJoinToken is CreateJoinToken once the viewer v may.
func (s *Service) createJoinToken(ctx context.Context, v *authz.Viewer, in CreateJoinTokenInput) (string, *ent.JoinToken, error) {
	ttl := in.ExpiresIn
	if ttl == 0 {
		ttl = DefaultJoinTokenTTL
	}
	if ttl < time.Second || ttl > MaxJoinTokenTTL {
		return "", nil, apierr.Validation("expiresInSeconds", "must be between 1 and %d", int(MaxJoinTokenTTL.Seconds()))
	}
	sys := system(ctx)
	db := s.db(ctx)
	create := db.JoinToken.Create()
	switch {
	case in.NodeID != nil && in.ClusterID != nil:
		return "", nil, apierr.Validation("clusterID", "name either a node or a cluster, not both")
	case in.NodeID != nil:
		if in.NodeName != "" {
			return "", nil, apierr.Validation("nodeName", "only a cluster join token names the node it creates")
		}
		if ok, err := db.ComputeNode.Query().Where(computenode.ID(*in.NodeID)).Exist(sys); err != nil {
			return "", nil, fmt.Errorf("identity: read node %d: %w", *in.NodeID, err)
		} else if !ok {
			return "", nil, apierr.NotFound("node %d not found", *in.NodeID)
		}
		create.SetNodeID(*in.NodeID)
	case in.ClusterID != nil:
		if in.NodeName != "" && !nameRe.MatchString(in.NodeName) {
			return "", nil, apierr.Validation("nodeName", "must be lower-case letters, digits, '.', '_' or '-' (1 to 128)")
		}
		if ok, err := db.Cluster.Query().Where(cluster.ID(*in.ClusterID)).Exist(sys); err != nil {
			return "", nil, fmt.Errorf("identity: read cluster %d: %w", *in.ClusterID, err)
		} else if !ok {
			return "", nil, apierr.NotFound("cluster %d not found", *in.ClusterID)
		}
		create.SetClusterID(*in.ClusterID).SetNodeName(in.NodeName)
	default:
		return "", nil, apierr.Validation("nodeID", "name the node to bind (nodeID) or the cluster to join (clusterID)")
	}
	plain, hash, prefix := NewToken(apitoken.KindAgent)
	t, err := create.SetTokenHash(hash).SetPrefix(prefix).SetExpiresAt(s.now().Add(ttl)).Save(sys)
	if err != nil {
		return "", nil, fmt.Errorf("identity: create join token: %w", err)
	}
	s.log().InfoContext(ctx, "identity: join token created", "join_token_id", t.ID, "prefix", prefix, "by", v.Name,
		"expires_at", t.ExpiresAt)
	return plain, t, nil
}

// RegisterNodeInput is what a registering agent says about its host. Validation errors name
// the fields of the GraphQL input RegisterNodeInput.
type RegisterNodeInput struct {
	Hostname                        string
	CPUCapacity                     *int
	MemoryCapacityMB                *int64
	DiskCapacityGB                  *int64
	OSName, OSVersion, AgentVersion *string
	KernelVersion, DomainType       *string
	// Providers is what the node offers (nodestatus.LinkProviders); nil links none.
	Providers []nodestatus.ProviderOffer
}

// RegisterNode spends the join token joinToken: it binds the token's node, or creates a node
// for the host in the token's cluster (with a Host of that name when there is none), and
// issues the node's agent credential (IssueAgentToken), returning its plaintext, the token
// row (owner loaded) and the node. No viewer is needed: the join token is the credential.
//
// The token is consumed by a conditional update in the caller's transaction: of two
// concurrent registrations with one token exactly one wins, and the other is refused as
// USED. A refusal is UNAUTHENTICATED with extensions.reason UNKNOWN, USED or EXPIRED.
func (s *Service) RegisterNode(ctx context.Context, joinToken string, in RegisterNodeInput) (string, *ent.APIToken, *ent.ComputeNode, error) {
	sys := system(ctx)
	db := s.db(ctx)
	now := s.now()
	jt, err := db.JoinToken.Query().Where(jointoken.TokenHash(HashToken(joinToken))).WithNode().Only(sys)
	switch {
	case ent.IsNotFound(err):
		return "", nil, nil, refuseJoin(JoinTokenUnknown, "unknown join token")
	case err != nil:
		return "", nil, nil, fmt.Errorf("identity: read join token: %w", err)
	case jt.UsedAt != nil:
		return "", nil, nil, refuseJoin(JoinTokenUsed, "the join token was already used (at %s); create a new one", jt.UsedAt.UTC().Format(time.RFC3339))
	case !now.Before(jt.ExpiresAt):
		return "", nil, nil, refuseJoin(JoinTokenExpired, "the join token expired at %s; create a new one", jt.ExpiresAt.UTC().Format(time.RFC3339))
	}
	if err := in.validate(); err != nil {
		return "", nil, nil, err
	}
	// Spend the token first: the row lock this takes makes a concurrent registration wait
	// for this transaction, then find the token used.
	n, err := db.JoinToken.Update().
		Where(jointoken.ID(jt.ID), jointoken.UsedAtIsNil(), jointoken.ExpiresAtGT(now)).
		SetUsedAt(now).Save(sys)
	if err != nil {
		return "", nil, nil, fmt.Errorf("identity: spend join token: %w", err)
	}
	if n == 0 {
		return "", nil, nil, refuseJoin(JoinTokenUsed, "the join token was already used; create a new one")
	}
	node := jt.Edges.Node
	if node == nil {
		clusterID, err := db.JoinToken.QueryCluster(jt).OnlyID(sys)
		if ent.IsNotFound(err) {
			return "", nil, nil, refuseJoin(JoinTokenUnknown, "the join token's node or cluster no longer exists")
		}
		if err != nil {
			return "", nil, nil, fmt.Errorf("identity: read the join token's cluster: %w", err)
		}
		if node, err = s.joinCluster(sys, db, clusterID, jt.NodeName, in); err != nil {
			return "", nil, nil, err
		}
	}
	upd := db.ComputeNode.UpdateOneID(node.ID).
		SetNillableCPUCapacity(in.CPUCapacity).
		SetNillableMemoryCapacityMB(in.MemoryCapacityMB).
		SetNillableDiskCapacityGB(in.DiskCapacityGB).
		SetNillableOsName(in.OSName).
		SetNillableOsVersion(in.OSVersion).
		SetNillableAgentVersion(in.AgentVersion).
		SetNillableKernelVersion(in.KernelVersion).
		SetNillableDomainType(in.DomainType)
	if err := upd.Exec(sys); err != nil {
		return "", nil, nil, fmt.Errorf("identity: update node %d: %w", node.ID, err)
	}
	if in.Providers != nil {
		if err := nodestatus.LinkProviders(sys, db, node.ID, in.Providers); err != nil {
			return "", nil, nil, fmt.Errorf("identity: link providers of node %d: %w", node.ID, err)
		}
	}
	// The caller has no viewer to read edges with later: hand the node over with its
	// cluster and host.
	if node, err = db.ComputeNode.Query().Where(computenode.ID(node.ID)).WithCluster().WithHost().Only(sys); err != nil {
		return "", nil, nil, fmt.Errorf("identity: read node: %w", err)
	}
	if err := db.JoinToken.UpdateOneID(jt.ID).SetNodeID(node.ID).Exec(sys); err != nil {
		return "", nil, nil, fmt.Errorf("identity: record the join token's node: %w", err)
	}
	plain, tok, err := s.IssueAgentToken(ctx, node.ID, fmt.Sprintf("agent of node %s (join token %s)", node.Name, jt.Prefix))
	if err != nil {
		return "", nil, nil, err
	}
	s.log().InfoContext(ctx, "identity: node registered", "node", node.Name, "node_id", node.ID, "join_token_id", jt.ID)
	return plain, tok, node, nil
}

// joinCluster creates the node of host in.Hostname in cluster clusterID, named name (the
// host's name when empty), on the host, which is created when missing. A host that already
// has a node is a CONFLICT on field hostname: re-enrolling it takes ReenrollNode.
func (s *Service) joinCluster(sys context.Context, db *ent.Client, clusterID int, name string, in RegisterNodeInput) (*ent.ComputeNode, error) {
	h, err := db.Host.Query().Where(host.Name(in.Hostname)).WithNode().Only(sys)
	switch {
	case ent.IsNotFound(err):
		if h, err = db.Host.Create().SetName(in.Hostname).SetKind(host.KindServer).Save(sys); err != nil {
			return nil, fmt.Errorf("identity: create host %s: %w", in.Hostname, err)
		}
	case err != nil:
		return nil, fmt.Errorf("identity: read host %s: %w", in.Hostname, err)
	case h.Kind != host.KindServer:
		return nil, apierr.Validation("hostname", "host %s is a %s, not a server", h.Name, h.Kind)
	case h.Edges.Node != nil:
		// A cluster join token only creates nodes. Handing this host's node to whoever
		// holds one would give the newcomer the node's assignments (tenant user-data
		// included) next to the agent that runs it: re-enrolling a node is an operator's
		// act (ReenrollNode). Nothing about the node is said to the unauthenticated caller.
		e := apierr.Conflict("this host name already has a compute node: a cluster join token only creates new nodes; " +
			"to re-enroll an existing node, an operator calls reenrollComputeNode and gives its join token to the agent")
		e.Field = "hostname"
		return nil, e
	}
	if name == "" {
		name = in.Hostname
	}
	node, err := db.ComputeNode.Create().SetName(name).SetHostID(h.ID).SetClusterID(clusterID).Save(sys)
	if err != nil {
		return nil, fmt.Errorf("identity: create node %s: %w", name, err)
	}
	return node, nil
}

func (in RegisterNodeInput) validate() error {
	if !nameRe.MatchString(in.Hostname) {
		return apierr.Validation("hostname", "must be lower-case letters, digits, '.', '_' or '-' (1 to 128)")
	}
	switch {
	case in.CPUCapacity != nil && *in.CPUCapacity < 0:
		return apierr.Validation("cpuCapacity", "must not be negative")
	case in.MemoryCapacityMB != nil && *in.MemoryCapacityMB < 0:
		return apierr.Validation("memoryCapacityMB", "must not be negative")
	case in.DiskCapacityGB != nil && *in.DiskCapacityGB < 0:
		return apierr.Validation("diskCapacityGB", "must not be negative")
	}
	for _, f := range []struct {
		name string
		v    *string
		max  int
	}{{"agentVersion", in.AgentVersion, 64}, {"osName", in.OSName, 64}, {"osVersion", in.OSVersion, 64},
		{"kernelVersion", in.KernelVersion, 128}, {"domainType", in.DomainType, 16}} {
		if f.v != nil && len(*f.v) > f.max {
			return apierr.Validation(f.name, "at most %d characters", f.max)
		}
	}
	return nil
}

// refuseJoin is the UNAUTHENTICATED error of a join token that cannot be used, with its
// reason in extensions.reason.
func refuseJoin(reason, format string, args ...any) error {
	e := apierr.Unauthenticated(format, args...)
	e.Field = "joinToken"
	e.Extra = map[string]any{"reason": reason}
	return e
}

// ReenrollNode prepares compute node nodeID for a new agent, as an operator's or admin's
// act: it revokes at once every token of the node's agent user (the replaced agent stops
// authenticating from its next request), cancels the node's unused join tokens, and returns a
// one-time join token bound to the node (lasting ttl, DefaultJoinTokenTTL when zero) for
// the new agent's registerNode, plaintext and row. It returns how many agent tokens it
// revoked. To anyone who may not change nodes the node does not exist, or is FORBIDDEN
// when they may read it.
func (s *Service) ReenrollNode(ctx context.Context, nodeID int, ttl time.Duration) (string, *ent.JoinToken, int, error) {
	v, err := writer(ctx)
	if err != nil {
		return "", nil, 0, err
	}
	if _, err := s.db(ctx).ComputeNode.Get(ctx, nodeID); ent.IsNotFound(err) {
		return "", nil, 0, apierr.NotFound("node %d not found", nodeID)
	} else if err != nil {
		return "", nil, 0, fmt.Errorf("identity: read node %d: %w", nodeID, err)
	}
	if !v.Can("ComputeNode", authz.ActWrite) {
		return "", nil, 0, apierr.Forbidden("only operators and admins may re-enroll a node")
	}
	sys := system(ctx)
	db := s.db(ctx)
	now := s.now()
	revoked, err := db.APIToken.Update().
		Where(apitoken.HasOwnerWith(user.Username(AgentUsername(nodeID))), apitoken.RevokedAtIsNil()).
		SetRevokedAt(now).Save(sys)
	if err != nil {
		return "", nil, 0, fmt.Errorf("identity: revoke the agent tokens of node %d: %w", nodeID, err)
	}
	if _, err := db.JoinToken.Update().
		Where(jointoken.HasNodeWith(computenode.ID(nodeID)), jointoken.UsedAtIsNil(), jointoken.ExpiresAtGT(now)).
		SetExpiresAt(now).Save(sys); err != nil {
		return "", nil, 0, fmt.Errorf("identity: cancel the join tokens of node %d: %w", nodeID, err)
	}
	plain, jt, err := s.createJoinToken(ctx, v, CreateJoinTokenInput{NodeID: &nodeID, ExpiresIn: ttl})
	if err != nil {
		return "", nil, 0, err
	}
	s.log().InfoContext(ctx, "identity: node re-enrollment started", "node_id", nodeID, "by", v.Name,
		"agent_tokens_revoked", revoked, "join_token_id", jt.ID)
	return plain, jt, revoked, nil
}
