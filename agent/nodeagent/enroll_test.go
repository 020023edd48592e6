package nodeagent_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/virtflow/virtflow/agent/nodeagent"
	"github.com/virtflow/virtflow/domain/identity"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
)

// TestEnrollWithJoinToken: an agent given only a join token registers its host as a new
// node of the token's cluster, keeps the agent token it receives in a 0600 file, runs with
// it (the node turns READY), and at its next start uses the file — the spent join token is
// not needed, nor accepted, again.
func TestEnrollWithJoinToken(t *testing.T) {
	w := newWorld(t)
	ctx := gqltest.System()
	cl := w.env.Client.ComputeNode.QueryCluster(w.node).OnlyX(ctx)
	admin := &gqltest.Env{Handler: w.env.Handler, Token: gqltest.AdminToken}
	var jt struct{ CreateJoinToken struct{ Token string } }
	admin.MustDo(t, `mutation($c: ID!) { createJoinToken(input: {clusterID: $c, expiresInSeconds: 300}) { token } }`,
		map[string]any{"c": gqltest.ID(cl.ID)}, &jt)

	file := filepath.Join(t.TempDir(), "agent", "token")
	hostname := uniq("joined-host")
	sim := mustSim(t)
	e := nodeagent.Enrollment{APIURL: w.url, CredentialFile: file, JoinToken: jt.CreateJoinToken.Token, Hostname: hostname, Hypervisor: sim}
	token, nodeID, err := nodeagent.Enroll(context.Background(), e)
	if err != nil {
		t.Fatal(err)
	}
	if nodeID == "" || !strings.HasPrefix(token, identity.TokenPrefix) {
		t.Fatalf("enrolled as node %q with token %q", nodeID, token)
	}
	st, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("credential file mode %v, want 0600", st.Mode().Perm())
	}
	if b, _ := os.ReadFile(file); strings.TrimSpace(string(b)) != token {
		t.Errorf("credential file holds %q, want the agent token", b)
	}

	// The agent runs with it: its heartbeat makes the new node READY.
	ag, err := nodeagent.New(nodeagent.Config{APIURL: w.url, Token: token, Hypervisor: sim, Log: quiet(),
		NoChecks: true, NoSubscription: true, HeartbeatInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ag.Run(runCtx) }()
	eventually(t, "the joined node is READY", func() bool {
		n, err := w.env.Client.ComputeNode.Query().Where(computenode.Name(hostname)).Only(ctx)
		return err == nil && n.Status == computenode.StatusReady && ag.NodeID() == nodeID
	})
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	// Next start: the file is used, the join token is not sent again.
	again, againNode, err := nodeagent.Enroll(context.Background(), e)
	if err != nil || again != token || againNode != "" {
		t.Fatalf("second start: token %q node %q err %v; want the stored token", again, againNode, err)
	}
	// An operator re-enrolls the node: the stored token is revoked, and the agent given the
	// new join token registers again for the same node.
	var re struct{ ReenrollComputeNode struct{ Token string } }
	admin.MustDo(t, `mutation($id: ID!) { reenrollComputeNode(id: $id) { token } }`, map[string]any{"id": nodeID}, &re)
	e.JoinToken = re.ReenrollComputeNode.Token
	fresh, freshNode, err := nodeagent.Enroll(context.Background(), e)
	if err != nil || fresh == token || freshNode != nodeID {
		t.Fatalf("after re-enrollment: token %q (old %q) node %q err %v; want a new token for node %s", fresh, token, freshNode, err, nodeID)
	}
	if b, _ := os.ReadFile(file); strings.TrimSpace(string(b)) != fresh {
		t.Errorf("credential file holds %q, want the new agent token", b)
	}
	// Without the file, the spent join token is refused.
	e.CredentialFile = filepath.Join(t.TempDir(), "token")
	var apiErr *nodeagent.Error
	if _, _, err := nodeagent.Enroll(context.Background(), e); !errors.As(err, &apiErr) ||
		apiErr.Errors[0].Code() != "UNAUTHENTICATED" || apiErr.Errors[0].Extensions["reason"] != identity.JoinTokenUsed {
		t.Fatalf("spent join token: %v", err)
	}
	if _, err := os.Stat(e.CredentialFile); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused registration wrote %s", e.CredentialFile)
	}
	// Neither a credential nor a join token.
	if _, _, err := nodeagent.Enroll(context.Background(), nodeagent.Enrollment{APIURL: w.url, CredentialFile: e.CredentialFile}); !errors.Is(err, nodeagent.ErrNoCredential) {
		t.Fatalf("no credential: %v", err)
	}
}
