package graph_test

import (
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/identity"
	"github.com/virtflow/virtflow/ent/apitoken"
	"github.com/virtflow/virtflow/ent/auditlog"
	"github.com/virtflow/virtflow/ent/jointoken"
	"github.com/virtflow/virtflow/ent/user"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
)

const (
	createJoinToken = `mutation($in: CreateJoinTokenInput!) { createJoinToken(input: $in) {
  token joinToken { id prefix expiresAt usedAt } } }`
	registerNode = `mutation($t: String!, $in: RegisterNodeInput!) { registerNode(joinToken: $t, input: $in) {
  token node { id name status cpuCapacity memoryCapacityMB cluster { id } host { name } } apiToken { id kind scope } } }`
)

type joinTokenOut struct {
	CreateJoinToken struct {
		Token     string
		JoinToken struct {
			ID, Prefix, ExpiresAt string
			UsedAt                *string
		}
	}
}

type registeredOut struct {
	RegisterNode struct {
		Token string
		Node  struct {
			ID, Name, Status string
			CPUCapacity      int
			MemoryCapacityMB int
			Cluster          struct{ ID string }
			Host             struct{ Name string }
		}
		APIToken struct{ ID, Kind, Scope string }
	}
}

// TestJoinTokenRegistersNewNode: an admin's cluster join token lets an agent without any
// other credential create its host and node, and get an AGENT token that works for that
// node only; the token is spent, and both steps are audited.
func TestJoinTokenRegistersNewNode(t *testing.T) {
	env, f := newEnv(t)
	clusterID := f.Cluster()
	var jt joinTokenOut
	env.MustDo(t, createJoinToken, map[string]any{"in": map[string]any{"clusterID": clusterID, "nodeName": uniq("joined")}}, &jt)
	if len(jt.CreateJoinToken.Token) != identity.TokenLen || jt.CreateJoinToken.JoinToken.UsedAt != nil {
		t.Fatalf("join token: %+v", jt.CreateJoinToken)
	}
	// Only the hash is stored.
	row := env.Client.JoinToken.Query().Where(jointoken.Prefix(jt.CreateJoinToken.JoinToken.Prefix)).OnlyX(gqltest.System())
	if row.TokenHash != identity.HashToken(jt.CreateJoinToken.Token) {
		t.Fatalf("stored hash %q is not the token's", row.TokenHash)
	}

	anon := env.As("")
	host := uniq("hv")
	var reg registeredOut
	anon.MustDo(t, registerNode, map[string]any{"t": jt.CreateJoinToken.Token,
		"in": map[string]any{"hostname": host, "cpuCapacity": 16, "memoryCapacityMB": 65536, "agentVersion": "0.6.0"}}, &reg)
	got := reg.RegisterNode
	if got.Node.Cluster.ID != clusterID || got.Node.Host.Name != host || got.Node.CPUCapacity != 16 ||
		got.Node.MemoryCapacityMB != 65536 || got.APIToken.Kind != "AGENT" || got.APIToken.Scope != "READ_WRITE" {
		t.Fatalf("registered: %+v", got)
	}

	// The agent token reports for its node, and sees no other.
	agent := env.As(got.Token)
	var hb struct{ ReportNodeStatus reportedNode }
	agent.MustDo(t, reportNodeStatus, map[string]any{"in": map[string]any{"nodeID": got.Node.ID, "healthy": true}}, &hb)
	if hb.ReportNodeStatus.Status != "READY" {
		t.Fatalf("heartbeat with the new agent token: %+v", hb.ReportNodeStatus)
	}
	other := f.ComputeNode()
	agent.Do(t, reportNodeStatus, map[string]any{"in": map[string]any{"nodeID": other, "healthy": true}}).ExpectError(t, "NOT_FOUND", "")

	// Spent: a second registration is refused, and nothing more is created.
	e := anon.Do(t, registerNode, map[string]any{"t": jt.CreateJoinToken.Token, "in": map[string]any{"hostname": uniq("hv")}}).
		ExpectError(t, "UNAUTHENTICATED", "joinToken")
	if e.Extensions["reason"] != identity.JoinTokenUsed {
		t.Fatalf("reused join token: %+v", e)
	}

	ctx := gqltest.System()
	for action, actor := range map[string]string{"createJoinToken": "admin", "registerNode": identity.AgentUsername(atoi(t, got.Node.ID))} {
		n := env.Client.AuditLog.Query().Where(auditlog.Action(action), auditlog.Actor(actor)).CountX(ctx)
		if n != 1 {
			t.Errorf("audit rows of %s by %s: %d, want 1", action, actor, n)
		}
	}
	if a := env.Client.AuditLog.Query().Where(auditlog.Action("registerNode")).FirstX(ctx); a.ObjectType != "ComputeNode" ||
		strconv.Itoa(a.ObjectID) != got.Node.ID {
		t.Errorf("registerNode audit row is about %s %d, want ComputeNode %s", a.ObjectType, a.ObjectID, got.Node.ID)
	}
}

// TestJoinTokenBindsNode: a node join token binds an existing node; registering again for
// the node with a new token revokes the agent token issued before.
func TestJoinTokenBindsNode(t *testing.T) {
	env, f := newEnv(t)
	node := f.ComputeNode()
	anon := env.As("")
	var first string
	for i := range 2 {
		var jt joinTokenOut
		env.MustDo(t, createJoinToken, map[string]any{"in": map[string]any{"nodeID": node, "expiresInSeconds": 600}}, &jt)
		var reg registeredOut
		anon.MustDo(t, registerNode, map[string]any{"t": jt.CreateJoinToken.Token, "in": map[string]any{"hostname": "ignored-for-node-tokens"}}, &reg)
		if reg.RegisterNode.Node.ID != node {
			t.Fatalf("bound node %s, want %s", reg.RegisterNode.Node.ID, node)
		}
		if i == 0 {
			first = reg.RegisterNode.Token
			continue
		}
		env.As(first).Do(t, `{ me { id } }`, nil).ExpectError(t, "UNAUTHENTICATED", "")
		env.As(reg.RegisterNode.Token).MustDo(t, `{ me { id } }`, nil, nil)
	}
	live := env.Client.APIToken.Query().Where(apitoken.KindEQ(apitoken.KindAgent), apitoken.RevokedAtIsNil(),
		apitoken.HasOwnerWith(user.Username(identity.AgentUsername(atoi(t, node))))).CountX(gqltest.System())
	if live != 1 {
		t.Fatalf("%d live agent tokens for the node, want 1", live)
	}
}

// TestJoinTokenRefusals: who may create join tokens, bad input naming its field, and unknown
// and expired tokens refused with their reason.
func TestJoinTokenRefusals(t *testing.T) {
	env, f := newEnv(t)
	clusterID, node := f.Cluster(), f.ComputeNode()
	tenant, _ := strconv.Atoi(f.Tenant())
	for _, tt := range []struct {
		name        string
		as          *gqltest.Env
		in          map[string]any
		code, field string
	}{
		{"anonymous", env.As(""), map[string]any{"clusterID": clusterID}, "UNAUTHENTICATED", ""},
		{"tenant member", env.As(memberToken(t, env, tenant)), map[string]any{"clusterID": clusterID}, "FORBIDDEN", ""},
		{"neither node nor cluster", env, map[string]any{}, "VALIDATION", "nodeID"},
		{"both", env, map[string]any{"clusterID": clusterID, "nodeID": node}, "VALIDATION", "clusterID"},
		{"too long", env, map[string]any{"clusterID": clusterID, "expiresInSeconds": 8 * 24 * 3600}, "VALIDATION", "expiresInSeconds"},
		{"zero", env, map[string]any{"clusterID": clusterID, "expiresInSeconds": 0}, "VALIDATION", "expiresInSeconds"},
		{"bad node name", env, map[string]any{"clusterID": clusterID, "nodeName": "Not A Slug"}, "VALIDATION", "nodeName"},
		{"unknown cluster", env, map[string]any{"clusterID": "999999"}, "NOT_FOUND", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.as.Do(t, createJoinToken, map[string]any{"in": tt.in}).ExpectError(t, tt.code, tt.field)
		})
	}

	anon := env.As("")
	e := anon.Do(t, registerNode, map[string]any{"t": "vf_not-a-join-token", "in": map[string]any{"hostname": "h"}}).
		ExpectError(t, "UNAUTHENTICATED", "joinToken")
	if e.Extensions["reason"] != identity.JoinTokenUnknown {
		t.Errorf("unknown token: %+v", e)
	}

	var jt joinTokenOut
	env.MustDo(t, createJoinToken, map[string]any{"in": map[string]any{"clusterID": clusterID}}, &jt)
	anon.Do(t, registerNode, map[string]any{"t": jt.CreateJoinToken.Token, "in": map[string]any{"hostname": "Bad Host"}}).
		ExpectError(t, "VALIDATION", "hostname")
	// A refused registration does not spend the token; expiry does.
	env.Client.JoinToken.Update().Where(jointoken.Prefix(jt.CreateJoinToken.JoinToken.Prefix)).
		SetExpiresAt(time.Now().Add(-time.Second)).ExecX(gqltest.System())
	e = anon.Do(t, registerNode, map[string]any{"t": jt.CreateJoinToken.Token, "in": map[string]any{"hostname": uniq("hv")}}).
		ExpectError(t, "UNAUTHENTICATED", "joinToken")
	if e.Extensions["reason"] != identity.JoinTokenExpired {
		t.Errorf("expired token: %+v", e)
	}
}

// TestJoinTokenConcurrentRegistrations: of many registrations racing with one token, exactly
// one succeeds and the others are refused as USED; one node is created.
func TestJoinTokenConcurrentRegistrations(t *testing.T) {
	env, f := newEnv(t)
	clusterID := f.Cluster()
	var jt joinTokenOut
	env.MustDo(t, createJoinToken, map[string]any{"in": map[string]any{"clusterID": clusterID}}, &jt)
	const racers = 8
	var wg sync.WaitGroup
	results := make([]gqltest.Response, racers)
	for i := range racers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = env.As("").Do(t, registerNode, map[string]any{"t": jt.CreateJoinToken.Token,
				"in": map[string]any{"hostname": uniq("race")}})
		}()
	}
	wg.Wait()
	won := 0
	for _, r := range results {
		if len(r.Errors) == 0 {
			won++
			continue
		}
		if e := r.Errors[0]; e.Code() != "UNAUTHENTICATED" || e.Extensions["reason"] != identity.JoinTokenUsed {
			t.Errorf("loser's error: %s", r.ErrorsString())
		}
	}
	if won != 1 {
		t.Fatalf("%d registrations succeeded with one join token, want 1", won)
	}
	cid := atoi(t, clusterID)
	if n := env.Client.Cluster.GetX(gqltest.System(), cid).QueryNodes().CountX(gqltest.System()); n != 1 {
		t.Fatalf("cluster has %d nodes after the race, want 1", n)
	}
}

const reenrollNode = `mutation($id: ID!) { reenrollComputeNode(id: $id) { token joinToken { id prefix expiresAt usedAt } } }`

// registerHost registers a new host in cluster clusterID with a fresh cluster join token and
// returns what registerNode answered.
func registerHost(t *testing.T, env *gqltest.Env, clusterID, host string) registeredOut {
	t.Helper()
	var jt joinTokenOut
	env.MustDo(t, createJoinToken, map[string]any{"in": map[string]any{"clusterID": clusterID}}, &jt)
	var reg registeredOut
	env.As("").MustDo(t, registerNode, map[string]any{"t": jt.CreateJoinToken.Token, "in": map[string]any{"hostname": host}}, &reg)
	return reg
}

// TestClusterJoinTokenCannotTakeOverNode: a cluster join token and the host name of an
// existing node give no credential for that node: CONFLICT on hostname, saying nothing about
// the node; the node's agent keeps working and the join token stays unspent.
func TestClusterJoinTokenCannotTakeOverNode(t *testing.T) {
	env, f := newEnv(t)
	clusterID := f.Cluster()
	host := uniq("hv")
	first := registerHost(t, env, clusterID, host).RegisterNode

	for _, cluster := range []string{clusterID, f.Cluster()} { // the node's cluster, and another
		var jt joinTokenOut
		env.MustDo(t, createJoinToken, map[string]any{"in": map[string]any{"clusterID": cluster}}, &jt)
		r := env.As("").Do(t, registerNode, map[string]any{"t": jt.CreateJoinToken.Token, "in": map[string]any{"hostname": host}})
		e := r.ExpectError(t, "CONFLICT", "hostname")
		if r.Data != nil && string(r.Data) != "null" {
			t.Errorf("refused registration answered data %s", r.Data)
		}
		if strings.Contains(e.Message, first.Node.Name) || strings.Contains(e.Message, first.Node.ID) {
			t.Errorf("refusal %q names the existing node", e.Message)
		}
		// Not spent: the same token registers a new host.
		var reg registeredOut
		env.As("").MustDo(t, registerNode, map[string]any{"t": jt.CreateJoinToken.Token, "in": map[string]any{"hostname": uniq("hv")}}, &reg)
		if reg.RegisterNode.Node.ID == first.Node.ID {
			t.Fatalf("the cluster join token bound the existing node %s", first.Node.ID)
		}
	}
	var hb struct{ ReportNodeStatus reportedNode }
	env.As(first.Token).MustDo(t, reportNodeStatus, map[string]any{"in": map[string]any{"nodeID": first.Node.ID, "healthy": true}}, &hb)
	live := env.Client.APIToken.Query().Where(apitoken.KindEQ(apitoken.KindAgent), apitoken.RevokedAtIsNil(),
		apitoken.HasOwnerWith(user.Username(identity.AgentUsername(atoi(t, first.Node.ID))))).CountX(gqltest.System())
	if live != 1 {
		t.Fatalf("%d live agent tokens for the node, want 1 (its own agent's)", live)
	}
}

// TestReenrollComputeNode: an operator re-enrolls a node: the old agent token stops
// authenticating at that moment, the returned join token registers the new agent for the
// same node, and the act is audited. Viewers and tenant members may not.
func TestReenrollComputeNode(t *testing.T) {
	env, f := newEnv(t)
	tenant, _ := strconv.Atoi(f.Tenant())
	old := registerHost(t, env, f.Cluster(), uniq("hv")).RegisterNode
	id := old.Node.ID

	env.As(roleToken(t, env, authz.RoleViewer, 0, 0)).Do(t, reenrollNode, map[string]any{"id": id}).ExpectError(t, "FORBIDDEN", "")
	env.As(memberToken(t, env, tenant)).Do(t, reenrollNode, map[string]any{"id": id}).ExpectError(t, "FORBIDDEN", "")
	env.As(old.Token).MustDo(t, `{ me { id } }`, nil, nil) // refusals revoke nothing

	operator := roleToken(t, env, authz.RoleOperator, 0, 0)
	var out struct {
		ReenrollComputeNode struct {
			Token     string
			JoinToken struct{ ID string }
		}
	}
	env.As(operator).MustDo(t, reenrollNode, map[string]any{"id": id}, &out)
	env.As(old.Token).Do(t, `{ me { id } }`, nil).ExpectError(t, "UNAUTHENTICATED", "")

	var reg registeredOut
	env.As("").MustDo(t, registerNode, map[string]any{"t": out.ReenrollComputeNode.Token, "in": map[string]any{"hostname": uniq("new-hv")}}, &reg)
	if reg.RegisterNode.Node.ID != id {
		t.Fatalf("re-enrolled agent registered node %s, want %s", reg.RegisterNode.Node.ID, id)
	}
	var hb struct{ ReportNodeStatus reportedNode }
	env.As(reg.RegisterNode.Token).MustDo(t, reportNodeStatus, map[string]any{"in": map[string]any{"nodeID": id, "healthy": true}}, &hb)
	env.As(old.Token).Do(t, reportNodeStatus, map[string]any{"in": map[string]any{"nodeID": id, "healthy": true}}).
		ExpectError(t, "UNAUTHENTICATED", "")

	ctx := gqltest.System()
	if n := env.Client.AuditLog.Query().Where(auditlog.Action("reenrollComputeNode")).CountX(ctx); n != 1 {
		t.Errorf("%d audit rows of reenrollComputeNode, want 1", n)
	}
}
