package graph_test

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"testing"

	"github.com/virtflow/virtflow/demo/fleet"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
)

// TestAuditRedactsUserData (issue 23, item 9): a VM created with user-data holding a
// password, provisioned by the worker (its assignment carries the user-data in its config
// drive) and reported on by the node's agent, leaves the password in no audit row in
// PostgreSQL; the rows keep the user-data's size and SHA-256.
func TestAuditRedactsUserData(t *testing.T) {
	env, _ := newEnv(t)
	s := newPVSite(t, env)
	(&pvPipeline{}).start(t, env, pvRedis(t), []string{s.queue})

	b := make([]byte, 8)
	_, _ = rand.Read(b)
	marker := "pw-" + hex.EncodeToString(b)
	userData := "#cloud-config\nchpasswd:\n  expire: false\npassword: " + marker + "\n"
	var out struct{ CreateVirtualMachine pvVM }
	env.MustDo(t, `mutation($in: CreateVirtualMachineInput!) { createVirtualMachine(input: $in) { `+pvVMFields+` } }`,
		map[string]any{"in": map[string]any{"name": uniq("ud"), "tenantID": gqltest.ID(s.Tenant), "regionID": gqltest.ID(s.Region),
			"flavorID": gqltest.ID(s.flavor), "userData": userData}}, &out)
	vm := pvWait(t, env, out.CreateVirtualMachine.ID, "assigned", func(vm pvVM, exists bool) bool {
		return exists && len(vm.Assignments.Edges) == 1
	})
	a := vm.Assignments.Edges[0].Node
	token, err := fleet.IssueAgentToken(gqltest.System(), env.Client, env.Identity, s.node)
	if err != nil {
		t.Fatal(err)
	}
	if r := env.As(token).Do(t, `mutation($in: AssignmentStatusInput!) { reportAssignmentStatus(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"id": a.ID, "generation": a.Generation, "status": "APPLIED", "observedState": "running"}}); len(r.Errors) > 0 {
		t.Fatal(r.ErrorsString())
	}

	vmID, _ := strconv.Atoi(vm.ID)
	aID, _ := strconv.Atoi(a.ID)
	var rows, leaks, digests int
	sum := sha256.Sum256([]byte(userData))
	digest := fmt.Sprintf("[redacted: %d bytes, sha256:%s]", len(userData), hex.EncodeToString(sum[:]))
	if err := env.DB.DB.QueryRow(`SELECT count(*),
			count(*) FILTER (WHERE l::text LIKE '%' || $3 || '%'),
			count(*) FILTER (WHERE l::text LIKE '%' || $4 || '%')
		FROM audit_logs l WHERE object_id IN ($1, $2)`, vmID, aID, marker, digest).Scan(&rows, &leaks, &digests); err != nil {
		t.Fatal(err)
	}
	var anywhere int
	if err := env.DB.DB.QueryRow(`SELECT count(*) FROM audit_logs l WHERE l::text LIKE '%' || $1 || '%'`, marker).Scan(&anywhere); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d audit rows about the VM and its assignment, %d with the user-data's digest", rows, digests)
	if leaks != 0 || anywhere != 0 {
		t.Errorf("the user-data's password is in %d audit rows", anywhere)
	}
	if rows < 3 || digests == 0 {
		t.Errorf("%d audit rows about the VM and its assignment, %d with %s: the test saw too little", rows, digests, digest)
	}
	// The config drive (JSON holding the user-data) is redacted too, to its own digest.
	var drives int
	if err := env.DB.DB.QueryRow(`SELECT count(*) FROM audit_logs l WHERE object_id = $1 AND l.after::text LIKE '%"config_drive": "[redacted: %'`, aID).Scan(&drives); err != nil {
		t.Fatal(err)
	}
	if drives == 0 {
		t.Errorf("no audit row of assignment %d shows its config drive redacted", aID)
	}
}
