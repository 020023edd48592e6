package authztest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/fabric"
	"github.com/virtflow/virtflow/domain/identity"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/alert"
	"github.com/virtflow/virtflow/ent/apitoken"
	"github.com/virtflow/virtflow/ent/assignment"
	"github.com/virtflow/virtflow/ent/auditlog"
	"github.com/virtflow/virtflow/ent/backup"
	"github.com/virtflow/virtflow/ent/rolebinding"
	"github.com/virtflow/virtflow/ent/snapshot"
	"github.com/virtflow/virtflow/ent/user"
	"github.com/virtflow/virtflow/ent/virtualmachine"
	"github.com/virtflow/virtflow/ent/volume"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
)

// clientAddr is the address audited requests come from.
const (
	clientAddr = "203.0.113.7:4711"
	clientIP   = "203.0.113.7"
)

// tenantTagged are the types whose audit rows name their tenant (graph.tenantOf: a Tenant,
// and records with a tenant edge), so that tenant admins see them.
var tenantTagged = []string{"Tenant", "APIToken", "GlobalService", "KubernetesCluster", "LoadBalancer", "Network", "Notice",
	"Quota", "RegionService", "RoleBinding", "SSHKey", "SecurityRule", "UsageRecord", "VirtualMachine", "Volume", "Snapshot", "Backup"}

// auditWant is the audit row a successful mutation should leave.
type auditWant struct {
	actor         string
	actorID       int
	tokenID       int // 0: not checked
	objectType    string
	objectID      int
	tenant        int
	before, after bool
	secrets       []string // must appear nowhere in the row
}

// auditRun performs one mutation successfully with the given request id from clientAddr and
// says what its audit row should be.
type auditRun func(t *testing.T, w *world, rid string) auditWant

// adminWant is the audit row of a mutation the bootstrap admin made.
func adminWant(w *world, typ string, id int, tenant int, before, after bool) auditWant {
	switch {
	case typ == "Tenant":
		tenant = id
	case !slices.Contains(tenantTagged, typ):
		tenant = 0
	}
	return auditWant{actor: identity.AdminUsername, actorID: w.adminID, tokenID: w.adminTokenID, objectType: typ, objectID: id,
		tenant: tenant, before: before, after: after, secrets: []string{gqltest.AdminToken, identity.HashToken(gqltest.AdminToken)}}
}

// asAdmin sends query as the admin from clientAddr with request id rid and decodes the data.
func asAdmin(t *testing.T, w *world, rid, query string, vars map[string]any) map[string]json.RawMessage {
	t.Helper()
	r := send(t, w.env.Handler, call{token: gqltest.AdminToken, query: query, vars: vars, requestID: rid, remoteAddr: clientAddr})
	var out map[string]json.RawMessage
	mustData(t, r, &out)
	return out
}

func idOf(t *testing.T, raw json.RawMessage, path ...string) int {
	t.Helper()
	var v any
	_ = json.Unmarshal(raw, &v)
	for _, p := range path {
		m, _ := v.(map[string]any)
		v = m[p]
	}
	s, _ := v.(string)
	var id int
	if _, err := fmt.Sscan(s, &id); err != nil {
		t.Fatalf("no id at %v in %s", path, raw)
	}
	return id
}

// auditRunners returns how to run each Mutation field: the generic createX, updateX and
// deleteX from the entities, and the identity mutations.
func auditRunners() map[string]auditRun {
	runs := map[string]auditRun{}
	for typ, e := range entities {
		if e.create != nil {
			runs["create"+typ] = func(t *testing.T, w *world, rid string) auditWant {
				in, own := e.create(w)
				out := asAdmin(t, w, rid, fmt.Sprintf(`mutation($input: Create%sInput!) { create%s(input: $input) { id } }`, typ, typ), map[string]any{"input": in})
				return adminWant(w, typ, idOf(t, out["create"+typ], "id"), own.tenant, false, true)
			}
		}
		if e.update != nil {
			runs["update"+typ] = func(t *testing.T, w *world, rid string) auditWant {
				id, own := e.make(w)
				asAdmin(t, w, rid, fmt.Sprintf(`mutation($id: ID!, $input: Update%sInput!) { update%s(id: $id, input: $input) { id } }`, typ, typ),
					map[string]any{"id": gid(id), "input": e.update})
				return adminWant(w, typ, id, own.tenant, true, true)
			}
		}
		runs["delete"+typ] = func(t *testing.T, w *world, rid string) auditWant {
			id, own := e.make(w)
			asAdmin(t, w, rid, fmt.Sprintf(`mutation($id: ID!) { delete%s(id: $id) }`, typ), map[string]any{"id": gid(id)})
			return adminWant(w, typ, id, own.tenant, true, false)
		}
	}
	runs["login"] = func(t *testing.T, w *world, rid string) auditWant {
		const password = "login-password-for-audit"
		u := w.newUserWithPassword("signin", password)
		username := w.c.User.GetX(w.ctx, u).Username
		r := send(t, w.env.Handler, call{query: `mutation($u: String!, $p: String!) { login(username: $u, password: $p) { token apiToken { id } } }`,
			vars: map[string]any{"u": username, "p": password}, requestID: rid, remoteAddr: clientAddr})
		var out struct {
			Login struct {
				Token    string
				APIToken struct{ ID string }
			}
		}
		mustData(t, r, &out)
		var id int
		fmt.Sscan(out.Login.APIToken.ID, &id)
		// The one who acts is the user signing in.
		return auditWant{actor: username, actorID: u, objectType: "APIToken", objectID: id, after: true,
			secrets: []string{out.Login.Token, identity.HashToken(out.Login.Token), password}}
	}
	runs["createAPIToken"] = func(t *testing.T, w *world, rid string) auditWant {
		out := asAdmin(t, w, rid, `mutation($in: CreateAPITokenInput!) { createAPIToken(input: $in) { token apiToken { id } } }`,
			map[string]any{"in": map[string]any{"name": uniq("ci"), "scope": "READ_WRITE"}})
		var p struct {
			Token    string
			APIToken struct{ ID string }
		}
		_ = json.Unmarshal(out["createAPIToken"], &p)
		want := adminWant(w, "APIToken", idOf(t, out["createAPIToken"], "apiToken", "id"), 0, false, true)
		want.secrets = append(want.secrets, p.Token, identity.HashToken(p.Token))
		return want
	}
	runs["createJoinToken"] = func(t *testing.T, w *world, rid string) auditWant {
		out := asAdmin(t, w, rid, `mutation($in: CreateJoinTokenInput!) { createJoinToken(input: $in) { token joinToken { id } } }`,
			map[string]any{"in": map[string]any{"clusterID": gid(w.cluster)}})
		var p struct{ Token string }
		_ = json.Unmarshal(out["createJoinToken"], &p)
		want := adminWant(w, "JoinToken", idOf(t, out["createJoinToken"], "joinToken", "id"), 0, false, true)
		want.secrets = append(want.secrets, p.Token, identity.HashToken(p.Token))
		return want
	}
	runs["reenrollComputeNode"] = func(t *testing.T, w *world, rid string) auditWant {
		node := w.newNode(0)
		out := asAdmin(t, w, rid, `mutation($id: ID!) { reenrollComputeNode(id: $id) { token joinToken { id } } }`,
			map[string]any{"id": gid(node)})
		var p struct{ Token string }
		_ = json.Unmarshal(out["reenrollComputeNode"], &p)
		want := adminWant(w, "ComputeNode", node, 0, true, true)
		want.secrets = append(want.secrets, p.Token, identity.HashToken(p.Token))
		return want
	}
	runs["registerNode"] = func(t *testing.T, w *world, rid string) auditWant {
		node := w.newNode(0)
		plain, _, err := w.env.Identity.CreateJoinToken(w.ctx, identity.CreateJoinTokenInput{NodeID: &node})
		if err != nil {
			t.Fatal(err)
		}
		r := send(t, w.env.Handler, call{query: `mutation($t: String!) { registerNode(joinToken: $t, input: {hostname: "audited"}) { token node { id } apiToken { id } } }`,
			vars: map[string]any{"t": plain}, requestID: rid, remoteAddr: clientAddr})
		var out struct {
			RegisterNode struct {
				Token    string
				APIToken struct{ ID string }
			}
		}
		mustData(t, r, &out)
		agent := w.c.User.Query().Where(user.Username(identity.AgentUsername(node))).OnlyX(w.ctx)
		// The one who acts is the node's agent, signed in by its join token.
		return auditWant{actor: agent.Username, actorID: agent.ID, objectType: "ComputeNode", objectID: node, after: true,
			secrets: []string{plain, identity.HashToken(plain), out.RegisterNode.Token, identity.HashToken(out.RegisterNode.Token)}}
	}
	runs["revokeAPIToken"] = func(t *testing.T, w *world, rid string) auditWant {
		plain, id := w.mintToken(w.newUser("revokee", w.tenantA), tokenOpts{tenant: w.tenantA})
		asAdmin(t, w, rid, `mutation($id: ID!) { revokeAPIToken(id: $id) { id revokedAt } }`, map[string]any{"id": gid(id)})
		want := adminWant(w, "APIToken", id, w.tenantA, true, true)
		want.secrets = append(want.secrets, plain, identity.HashToken(plain))
		return want
	}
	runs["grantRole"] = func(t *testing.T, w *world, rid string) auditWant {
		u := w.newUser("grantee", w.tenantA)
		out := asAdmin(t, w, rid, `mutation($in: GrantRoleInput!) { grantRole(input: $in) { id } }`,
			map[string]any{"in": map[string]any{"userID": gid(u), "role": "TENANT_MEMBER", "tenantID": gid(w.tenantA)}})
		return adminWant(w, "RoleBinding", idOf(t, out["grantRole"], "id"), w.tenantA, false, true)
	}
	runs["revokeRole"] = func(t *testing.T, w *world, rid string) auditWant {
		u := w.newUser("revoked-role", w.tenantA)
		w.grant(u, authz.RoleTenantMember, w.tenantA, 0)
		id := w.c.RoleBinding.Query().Where(rolebinding.Domain(authz.TenantDomain(w.tenantA)), rolebinding.HasUserWith(user.ID(u))).OnlyIDX(w.ctx)
		asAdmin(t, w, rid, `mutation($id: ID!) { revokeRole(id: $id) }`, map[string]any{"id": gid(id)})
		return adminWant(w, "RoleBinding", id, w.tenantA, true, false)
	}
	runs["scaleRegionService"] = func(t *testing.T, w *world, rid string) auditWant {
		id := w.c.RegionService.Create().SetName(uniq("svc")).SetTenantID(w.tenantA).SetRegionID(w.region).
			SetFlavorID(w.flavor).SetReplicas(0).SaveX(w.ctx).ID
		asAdmin(t, w, rid, `mutation($id: ID!) { scaleRegionService(id: $id, replicas: 2) { id replicas } }`, map[string]any{"id": gid(id)})
		return adminWant(w, "RegionService", id, w.tenantA, true, true)
	}
	runs["scaleKubernetesCluster"] = func(t *testing.T, w *world, rid string) auditWant {
		id := w.c.KubernetesCluster.Create().SetName(uniq("k8s")).SetVersion("1.31.2").SetTenantID(w.tenantA).
			SetRegionID(w.region).SetFlavorID(w.flavor).SaveX(w.ctx).ID
		asAdmin(t, w, rid, `mutation($id: ID!) { scaleKubernetesCluster(id: $id, workers: 5) { id workerCount } }`, map[string]any{"id": gid(id)})
		return adminWant(w, "KubernetesCluster", id, w.tenantA, true, true)
	}
	runs["upgradeKubernetesCluster"] = func(t *testing.T, w *world, rid string) auditWant {
		id := w.c.KubernetesCluster.Create().SetName(uniq("k8s")).SetVersion("1.31.2").SetTenantID(w.tenantA).
			SetRegionID(w.region).SetFlavorID(w.flavor).SaveX(w.ctx).ID
		asAdmin(t, w, rid, `mutation($id: ID!) { upgradeKubernetesCluster(id: $id, version: "1.32.0") { id version } }`, map[string]any{"id": gid(id)})
		return adminWant(w, "KubernetesCluster", id, w.tenantA, true, true)
	}
	runs["setQuota"] = func(t *testing.T, w *world, rid string) auditWant {
		hg := w.c.HostGroup.Create().SetName(uniq("hg")).SaveX(w.ctx).ID
		out := asAdmin(t, w, rid, `mutation($in: SetQuotaInput!) { setQuota(input: $in) { id } }`,
			map[string]any{"in": map[string]any{"tenantID": gid(w.tenantA), "hostGroupID": gid(hg), "vcpus": 8}})
		return adminWant(w, "Quota", idOf(t, out["setQuota"], "id"), w.tenantA, false, true)
	}
	runs["allocateIPAddress"] = func(t *testing.T, w *world, rid string) auditWant {
		out := asAdmin(t, w, rid, `mutation($in: AllocateIPAddressInput!) { allocateIPAddress(input: $in) { id } }`,
			map[string]any{"in": map[string]any{"networkID": gid(w.netA), "address": w.nextIP()}})
		return adminWant(w, "IPAddress", idOf(t, out["allocateIPAddress"], "id"), 0, false, true)
	}
	runs["addPrice"] = func(t *testing.T, w *world, rid string) auditWant {
		out := asAdmin(t, w, rid, `mutation($in: AddPriceInput!) { addPrice(input: $in) { id } }`,
			map[string]any{"in": map[string]any{"kind": "IP_ADDRESS", "amount": "0.005", "effectiveFrom": time.Date(2030, 1, 1, 0, 0, int(seq.Add(1)), 0, time.UTC).Format(time.RFC3339)}})
		return adminWant(w, "Price", idOf(t, out["addPrice"], "id"), 0, false, true)
	}
	// A bulk import writes one row per record it creates: one device here.
	runs["importDCIM"] = func(t *testing.T, w *world, rid string) auditWant {
		out := asAdmin(t, w, rid, `mutation($c: String!) { importDCIM(kind: HOSTS, csv: $c, dryRun: false) { rows { id } } }`,
			map[string]any{"c": "name,kind\n" + uniq("imported") + ",server\n"})
		var res struct{ Rows []json.RawMessage }
		if err := json.Unmarshal(out["importDCIM"], &res); err != nil || len(res.Rows) != 1 {
			t.Fatalf("importDCIM = %s (%v)", out["importDCIM"], err)
		}
		return adminWant(w, "Host", idOf(t, res.Rows[0], "id"), 0, false, true)
	}
	runs["releaseIPAddress"] = func(t *testing.T, w *world, rid string) auditWant {
		id := w.c.IPAddress.Create().SetAddress(w.nextIP()).SetNetworkID(w.netA).SaveX(w.ctx).ID
		asAdmin(t, w, rid, `mutation($id: ID!) { releaseIPAddress(id: $id) }`, map[string]any{"id": gid(id)})
		return adminWant(w, "IPAddress", id, 0, true, false)
	}
	runs["buildFabricRoot"] = func(t *testing.T, w *world, rid string) auditWant {
		dc := w.c.Datacenter.Create().SetName(uniq("dc")).SetRegionID(w.region).SaveX(w.ctx).ID
		asAdmin(t, w, rid, `mutation($in: BuildFabricRootInput!) { buildFabricRoot(input: $in) { datacenterID } }`,
			map[string]any{"in": map[string]any{"datacenterID": gid(dc), "hostPrefix": uniq("audit") + "-"}})
		// The result names no record of its own: the row keeps the payload only.
		return adminWant(w, "", 0, 0, false, true)
	}
	runs["buildFabric"] = func(t *testing.T, w *world, rid string) auditWant {
		prefix := uniq("audit") + "-"
		dc := w.c.Datacenter.Create().SetName(uniq("dc")).SetRegionID(w.region).SaveX(w.ctx).ID
		if _, err := fabric.BuildRoot(w.ctx, w.c, dc, fabric.WithHostPrefix(prefix)); err != nil {
			t.Fatalf("build root: %v", err)
		}
		fl := w.c.Floor.Create().SetName("floor-1-1-1").SetDatacenterID(dc).SaveX(w.ctx).ID
		netRack := w.c.Rack.Create().SetName("net").SetRow("9").SetPosition(1).SetFloorID(fl).SaveX(w.ctx).ID
		for pos := 1; pos <= 2; pos++ {
			rk := w.c.Rack.Create().SetName(fmt.Sprintf("rack-1-%d", pos)).SetRow("1").SetPosition(pos).SetFloorID(fl).SaveX(w.ctx).ID
			w.c.Host.Create().SetName(uniq("srv")).SetRackID(rk).SetPosition(1).SaveX(w.ctx)
		}
		asAdmin(t, w, rid, `mutation($in: BuildFabricInput!) { buildFabric(input: $in) { links } }`,
			map[string]any{"in": map[string]any{"floorID": gid(fl), "networkRackID": gid(netRack), "hostPrefix": prefix}})
		return adminWant(w, "Floor", fl, 0, false, true)
	}
	runs["setUserPassword"] = func(t *testing.T, w *world, rid string) auditWant {
		const password = "a-new-password-nobody-knows"
		u := w.newUser("pw", w.tenantA)
		asAdmin(t, w, rid, `mutation($id: ID!, $p: String!) { setUserPassword(id: $id, password: $p) { id } }`,
			map[string]any{"id": gid(u), "p": password})
		want := adminWant(w, "User", u, 0, true, true)
		hash := w.c.User.GetX(w.ctx, u).PasswordHash
		want.secrets = append(want.secrets, password, hash, "$2a$", "$2b$")
		return want
	}
	runs["reportNodeStatus"] = func(t *testing.T, w *world, rid string) auditWant {
		id := w.newNode(w.m1)
		asAdmin(t, w, rid, `mutation($in: NodeStatusInput!) { reportNodeStatus(input: $in) { id } }`,
			map[string]any{"in": map[string]any{"nodeID": gid(id), "healthy": true, "cpuCapacity": 16}})
		// The node is named inside the input, not by an id argument: the row has no before image.
		want := adminWant(w, "ComputeNode", id, 0, false, true)
		// The same heartbeat again changes nothing but its time: no second row.
		since := lastAuditID(w)
		asAdmin(t, w, rid+"-again", `mutation($in: NodeStatusInput!) { reportNodeStatus(input: $in) { id } }`,
			map[string]any{"in": map[string]any{"nodeID": gid(id), "healthy": true, "cpuCapacity": 16}})
		if rows := newAuditRows(w, since); len(rows) != 0 {
			t.Errorf("a heartbeat that changed nothing wrote %d audit rows", len(rows))
		}
		return want
	}
	// Provisioning power actions: a VM realized on its node (an assignment), in the state the
	// action starts from.
	powered := func(w *world, status virtualmachine.Status, desired assignment.DesiredState) int {
		vm := w0vm(w, status)
		w.c.Assignment.Create().SetNodeID(w.spare).SetVirtualMachineID(vm).SetDesiredState(desired).
			SetStatus(assignment.StatusApplied).SaveX(w.ctx)
		return vm
	}
	for action, from := range map[string]struct {
		status  virtualmachine.Status
		desired assignment.DesiredState
	}{
		"startVirtualMachine":  {virtualmachine.StatusStopped, assignment.DesiredStateStopped},
		"stopVirtualMachine":   {virtualmachine.StatusActive, assignment.DesiredStateRunning},
		"rebootVirtualMachine": {virtualmachine.StatusActive, assignment.DesiredStateRunning},
	} {
		runs[action] = func(t *testing.T, w *world, rid string) auditWant {
			id := powered(w, from.status, from.desired)
			asAdmin(t, w, rid, fmt.Sprintf(`mutation($id: ID!) { %s(id: $id) { id status } }`, action), map[string]any{"id": gid(id)})
			return adminWant(w, "VirtualMachine", id, w.tenantA, true, true)
		}
	}
	runs["resizeVirtualMachine"] = func(t *testing.T, w *world, rid string) auditWant {
		id := powered(w, virtualmachine.StatusStopped, assignment.DesiredStateStopped)
		f := w.c.Flavor.Create().SetName(uniq("flavor")).SetVcpus(1).SetMemoryMB(512).SaveX(w.ctx).ID
		asAdmin(t, w, rid, `mutation($id: ID!, $f: ID!) { resizeVirtualMachine(id: $id, flavorID: $f) { id revision } }`,
			map[string]any{"id": gid(id), "f": gid(f)})
		return adminWant(w, "VirtualMachine", id, w.tenantA, true, true)
	}
	// Volumes: attached to a VM on a node with disk to hold them, detached again.
	volumeAndVM := func(w *world) (vol, vm int) {
		node := w.newNode(w.m1)
		w.c.ComputeNode.UpdateOneID(node).SetDiskCapacityGB(100).ExecX(w.ctx)
		vm = w.newVM(w.tenantA, node)
		vol = w.c.Volume.Create().SetName(uniq("vol")).SetSizeGB(1).SetTenantID(w.tenantA).SaveX(w.ctx).ID
		return vol, vm
	}
	// Snapshots and backups (issue 29): of a running VM with an image, on a node.
	copyVM := func(w *world) int {
		vm := w.newVM(w.tenantA, w.spare)
		w.c.VirtualMachine.UpdateOneID(vm).SetStatus(virtualmachine.StatusActive).ExecX(w.ctx)
		return vm
	}
	withTarget := func(t *testing.T, w *world) {
		w.c.Region.UpdateOneID(w.region).SetBackupTarget(t.TempDir()).ExecX(w.ctx)
	}
	runs["createSnapshot"] = func(t *testing.T, w *world, rid string) auditWant {
		out := asAdmin(t, w, rid, `mutation($vm: ID!, $n: String!) { createSnapshot(input: {virtualMachineID: $vm, name: $n}) { id status } }`,
			map[string]any{"vm": gid(copyVM(w)), "n": uniq("snap")})
		return adminWant(w, "Snapshot", idOf(t, out["createSnapshot"], "id"), w.tenantA, false, true)
	}
	availableSnapshot := func(w *world) int {
		vm := copyVM(w)
		w.c.VirtualMachine.UpdateOneID(vm).SetStatus(virtualmachine.StatusStopped).ExecX(w.ctx)
		s := w.c.Snapshot.Create().SetName(uniq("snap")).SetTenantID(w.tenantA).SetVirtualMachineID(vm).
			SetNodeID(w.spare).SetStatus(snapshot.StatusAvailable).SaveX(w.ctx).ID
		w.c.Assignment.Create().SetNodeID(w.spare).SetSnapshotID(s).SetStatus(assignment.StatusApplied).ExecX(w.ctx)
		return s
	}
	runs["revertSnapshot"] = func(t *testing.T, w *world, rid string) auditWant {
		s := availableSnapshot(w)
		asAdmin(t, w, rid, `mutation($id: ID!) { revertSnapshot(id: $id) { id status } }`, map[string]any{"id": gid(s)})
		return adminWant(w, "Snapshot", s, w.tenantA, true, true)
	}
	runs["deleteSnapshot"] = func(t *testing.T, w *world, rid string) auditWant {
		s := availableSnapshot(w)
		asAdmin(t, w, rid, `mutation($id: ID!) { deleteSnapshot(id: $id) }`, map[string]any{"id": gid(s)})
		return adminWant(w, "Snapshot", s, w.tenantA, true, false)
	}
	runs["createBackup"] = func(t *testing.T, w *world, rid string) auditWant {
		withTarget(t, w)
		out := asAdmin(t, w, rid, `mutation($vm: ID!, $n: String!) { createBackup(input: {virtualMachineID: $vm, name: $n}) { id status } }`,
			map[string]any{"vm": gid(copyVM(w)), "n": uniq("backup")})
		return adminWant(w, "Backup", idOf(t, out["createBackup"], "id"), w.tenantA, false, true)
	}
	availableBackup := func(t *testing.T, w *world) int {
		withTarget(t, w)
		return w.c.Backup.Create().SetName(uniq("backup")).SetTenantID(w.tenantA).SetRegionID(w.region).SetSizeGB(1).
			SetNodeID(w.spare).SetLocation(t.TempDir()).SetStatus(backup.StatusAvailable).SaveX(w.ctx).ID
	}
	runs["deleteBackup"] = func(t *testing.T, w *world, rid string) auditWant {
		b := availableBackup(t, w)
		asAdmin(t, w, rid, `mutation($id: ID!) { deleteBackup(id: $id) }`, map[string]any{"id": gid(b)})
		return adminWant(w, "Backup", b, w.tenantA, true, false)
	}
	vmInput := func(w *world) map[string]any {
		// A flavor whose disk holds the backup (the fixture's has none).
		f := w.c.Flavor.Create().SetName(uniq("flavor")).SetVcpus(1).SetMemoryMB(512).SetDiskGB(10).SaveX(w.ctx).ID
		return map[string]any{"name": uniq("vm"), "tenantID": gid(w.tenantA), "regionID": gid(w.region), "flavorID": gid(f)}
	}
	runs["restoreBackup"] = func(t *testing.T, w *world, rid string) auditWant {
		b := availableBackup(t, w)
		out := asAdmin(t, w, rid, `mutation($id: ID!, $in: CreateVirtualMachineInput!) { restoreBackup(id: $id, input: $in) { id } }`,
			map[string]any{"id": gid(b), "in": vmInput(w)})
		// No before: the new VM is not the record the id names (the backup).
		return adminWant(w, "VirtualMachine", idOf(t, out["restoreBackup"], "id"), w.tenantA, false, true)
	}
	runs["cloneVirtualMachine"] = func(t *testing.T, w *world, rid string) auditWant {
		withTarget(t, w)
		out := asAdmin(t, w, rid, `mutation($id: ID!, $in: CreateVirtualMachineInput!) { cloneVirtualMachine(id: $id, input: $in) { id } }`,
			map[string]any{"id": gid(copyVM(w)), "in": vmInput(w)})
		// No before: the new VM is not the record the id names (the VM cloned).
		return adminWant(w, "VirtualMachine", idOf(t, out["cloneVirtualMachine"], "id"), w.tenantA, false, true)
	}
	runs["createImageFromVirtualMachine"] = func(t *testing.T, w *world, rid string) auditWant {
		vm := copyVM(w)
		w.c.VirtualMachine.UpdateOneID(vm).SetStatus(virtualmachine.StatusStopped).ExecX(w.ctx)
		out := asAdmin(t, w, rid, `mutation($vm: ID!, $n: String!) { createImageFromVirtualMachine(id: $vm, input: {name: $n}) { id status } }`,
			map[string]any{"vm": gid(vm), "n": uniq("image")})
		// No before: the image is not the record the id names (the VM).
		return adminWant(w, "Image", idOf(t, out["createImageFromVirtualMachine"], "id"), w.tenantA, false, true)
	}
	runs["attachVolume"] = func(t *testing.T, w *world, rid string) auditWant {
		vol, vm := volumeAndVM(w)
		asAdmin(t, w, rid, `mutation($id: ID!, $vm: ID!) { attachVolume(id: $id, virtualMachineID: $vm) { id status } }`,
			map[string]any{"id": gid(vol), "vm": gid(vm)})
		return adminWant(w, "Volume", vol, w.tenantA, true, true)
	}
	runs["detachVolume"] = func(t *testing.T, w *world, rid string) auditWant {
		vol, vm := volumeAndVM(w)
		w.c.Volume.UpdateOneID(vol).SetVirtualMachineID(vm).SetStatus(volume.StatusAttaching).ExecX(w.ctx)
		asAdmin(t, w, rid, `mutation($id: ID!) { detachVolume(id: $id) { id status } }`, map[string]any{"id": gid(vol)})
		return adminWant(w, "Volume", vol, w.tenantA, true, true)
	}
	runs["closeAlert"] = func(t *testing.T, w *world, rid string) auditWant {
		id := w.c.Alert.Create().SetName(uniq("alert")).SetSeverity(alert.SeverityWarning).SetHostID(w.hostM).SaveX(w.ctx).ID
		asAdmin(t, w, rid, `mutation($id: ID!) { closeAlert(id: $id) { id status } }`, map[string]any{"id": gid(id)})
		return adminWant(w, "Alert", id, 0, true, true)
	}
	runs["acknowledgeAlert"] = func(t *testing.T, w *world, rid string) auditWant {
		id := w.c.Alert.Create().SetName(uniq("alert")).SetSeverity(alert.SeverityWarning).SetHostID(w.hostM).SaveX(w.ctx).ID
		asAdmin(t, w, rid, `mutation($id: ID!) { acknowledgeAlert(id: $id) { id acknowledgedBy } }`, map[string]any{"id": gid(id)})
		return adminWant(w, "Alert", id, 0, true, true)
	}
	runs["reportEvents"] = func(t *testing.T, w *world, rid string) auditWant {
		asAdmin(t, w, rid, `mutation($in: [ReportEventInput!]!) { reportEvents(input: $in) { id } }`,
			map[string]any{"in": []any{map[string]any{"nodeID": gid(w.node1), "checkName": "disk", "status": "WARNING"}}})
		// A batch: one row for the call, naming no single object.
		return adminWant(w, "", 0, 0, false, false)
	}
	runs["reportAssignmentStatus"] = func(t *testing.T, w *world, rid string) auditWant {
		id := w.c.Assignment.Create().SetNodeID(w.node1).SaveX(w.ctx).ID
		asAdmin(t, w, rid, `mutation($in: AssignmentStatusInput!) { reportAssignmentStatus(input: $in) { id status } }`,
			map[string]any{"in": map[string]any{"id": gid(id), "generation": 1, "status": "APPLIED", "observedState": "running"}})
		// The assignment is named inside the input: the row has no before image.
		return adminWant(w, "Assignment", id, 0, false, true)
	}
	// A load-balancer node's agent reports a load balancer it serves: the load balancer is
	// named inside the input, so the row has no before image.
	runs["reportLoadBalancerState"] = func(t *testing.T, w *world, rid string) auditWant {
		lb := w.c.LoadBalancer.Create().SetName(uniq("lb")).SetTenantID(w.tenantA).AddNodeIDs(w.node1).SaveX(w.ctx).ID
		asAdmin(t, w, rid, `mutation($in: LoadBalancerStateInput!) { reportLoadBalancerState(input: $in) { id status } }`,
			map[string]any{"in": map[string]any{"loadBalancerID": gid(lb), "nodeID": gid(w.node1), "announced": false,
				"forwarding": false, "reason": "haproxy is not running", "members": []any{}}})
		return adminWant(w, "LoadBalancer", lb, w.tenantA, false, true)
	}
	// The node's agent registers the hash of the credential it put on a VM's config drive. The
	// assignment is named inside the input: the row has no before image, and never the hash.
	runs["registerGuestCredential"] = func(t *testing.T, w *world, rid string) auditWant {
		vm := w0vm(w, virtualmachine.StatusActive)
		a := w.c.Assignment.Create().SetNodeID(w.spare).SetVirtualMachineID(vm).
			SetDesiredState(assignment.DesiredStateRunning).SetStatus(assignment.StatusApplied).SaveX(w.ctx)
		hash := strings.Repeat("ab", 32)
		asAdmin(t, w, rid, `mutation($in: GuestCredentialInput!) { registerGuestCredential(input: $in) { id } }`,
			map[string]any{"in": map[string]any{"assignmentID": gid(a.ID), "generation": a.Generation, "credentialHash": hash}})
		want := adminWant(w, "Assignment", a.ID, 0, false, true)
		want.secrets = append(want.secrets, hash)
		return want
	}
	// Cordon, uncordon and drain (issue 6): on a fresh node each, as the admin.
	runs["cordonNode"] = func(t *testing.T, w *world, rid string) auditWant {
		id := w.newNode(w.m1)
		asAdmin(t, w, rid, `mutation($id: ID!) { cordonNode(id: $id, reason: "audit") { id schedulable } }`, map[string]any{"id": gid(id)})
		return adminWant(w, "ComputeNode", id, 0, true, true)
	}
	runs["uncordonNode"] = func(t *testing.T, w *world, rid string) auditWant {
		id := w.newNode(w.m1)
		w.c.ComputeNode.UpdateOneID(id).SetSchedulable(false).SetCordonReason("audit").ExecX(w.ctx)
		asAdmin(t, w, rid, `mutation($id: ID!) { uncordonNode(id: $id) { id schedulable } }`, map[string]any{"id": gid(id)})
		return adminWant(w, "ComputeNode", id, 0, true, true)
	}
	runs["drainNode"] = func(t *testing.T, w *world, rid string) auditWant {
		id := w.newNode(w.m1)
		asAdmin(t, w, rid, `mutation($id: ID!) { drainNode(id: $id, timeoutSeconds: 60) { node { id drainState } maintenance { id } } }`,
			map[string]any{"id": gid(id)})
		return adminWant(w, "ComputeNode", id, 0, true, true)
	}
	return runs
}

// w0vm makes a VM of tenant A on the spare node in status.
func w0vm(w *world, status virtualmachine.Status) int {
	return w.c.VirtualMachine.Create().SetName(uniq("vm-power")).SetTenantID(w.tenantA).SetRegionID(w.region).
		SetFlavorID(w.flavor).SetClusterID(w.cluster).SetNodeID(w.spare).SetStatus(status).SaveX(w.ctx).ID
}

// newUserWithPassword makes a user who can log in with password.
func (w *world) newUserWithPassword(prefix, password string) int {
	w.tb.Helper()
	hash, err := identity.HashPassword(password)
	if err != nil {
		w.tb.Fatalf("hash password: %v", err)
	}
	return w.c.User.Create().SetUsername(uniq(prefix)).SetPasswordHash(hash).SaveX(w.ctx).ID
}

// lastAuditID is the newest audit row's id (0 when there is none).
func lastAuditID(w *world) int {
	ids := w.c.AuditLog.Query().Order(ent.Desc(auditlog.FieldID)).Limit(1).IDsX(w.ctx)
	if len(ids) == 0 {
		return 0
	}
	return ids[0]
}

// newAuditRows are the audit rows written after id since.
func newAuditRows(w *world, since int) []*ent.AuditLog {
	return w.c.AuditLog.Query().Where(auditlog.IDGT(since)).Order(ent.Asc(auditlog.FieldID)).AllX(w.ctx)
}

// TestAuditEveryMutation runs every Mutation field of the schema once, successfully, as the
// admin (the identity ones as their users), and checks it left exactly one audit row: the
// action, actor and token, object type and id, tenant, request id, source address, before and
// after images as the operation implies, and no secret anywhere in the row.
func TestAuditEveryMutation(t *testing.T) {
	w := newWorld(t)
	runs := auditRunners()
	n := 0
	for _, f := range gqlSchema().Mutation.Fields {
		run, ok := runs[f.Name]
		if !ok {
			t.Errorf("Mutation.%s has no audit case: add one to auditRunners", f.Name)
			continue
		}
		n++
		t.Run(f.Name, func(t *testing.T) {
			rid := fmt.Sprintf("audit-%s-%d", f.Name, seq.Add(1))
			since := lastAuditID(w)
			want := run(t, w, rid)
			rows := newAuditRows(w, since)
			if len(rows) != 1 {
				var got []string
				for _, r := range rows {
					got = append(got, fmt.Sprintf("%s(%s %d, request %s)", r.Action, r.ObjectType, r.ObjectID, r.RequestID))
				}
				t.Fatalf("%s wrote %d audit rows, want 1: %v", f.Name, len(rows), got)
			}
			checkAuditRow(t, f.Name, rows[0], rid, want)
		})
	}
	t.Logf("%d mutation fields audited", n)
}

func checkAuditRow(t *testing.T, action string, row *ent.AuditLog, rid string, want auditWant) {
	t.Helper()
	errorf := func(format string, args ...any) { t.Errorf(action+": "+format, args...) }
	if row.Action != action {
		errorf("action = %q", row.Action)
	}
	if row.Actor != want.actor || row.ActorID != want.actorID {
		errorf("actor = %q (id %d), want %q (id %d)", row.Actor, row.ActorID, want.actor, want.actorID)
	}
	if want.tokenID != 0 && row.TokenID != want.tokenID {
		errorf("token id = %d, want %d", row.TokenID, want.tokenID)
	}
	if row.ObjectType != want.objectType || row.ObjectID != want.objectID {
		errorf("object = %s %d, want %s %d", row.ObjectType, row.ObjectID, want.objectType, want.objectID)
	}
	if row.TenantID != want.tenant {
		errorf("tenant id = %d, want %d", row.TenantID, want.tenant)
	}
	if row.RequestID != rid {
		errorf("request id = %q, want %q", row.RequestID, rid)
	}
	if row.SourceIP != clientIP {
		errorf("source ip = %q, want %q", row.SourceIP, clientIP)
	}
	if (len(row.Before) > 0) != want.before {
		errorf("before = %s, want present = %v", row.Before, want.before)
	}
	// The before image is the whole record, not the fields the mutation's client selected
	// (the mutations here select little): it has its creation time.
	if len(row.Before) > 0 && (!strings.Contains(string(row.Before), `"created_at"`) || strings.Contains(string(row.Before), "0001-01-01")) {
		errorf("before = %s, want the whole record with its creation time", row.Before)
	}
	if (len(row.After) > 0) != want.after {
		errorf("after = %s, want present = %v", row.After, want.after)
	}
	for _, img := range []struct {
		name string
		raw  []byte
	}{{"before", row.Before}, {"after", row.After}} {
		if len(img.raw) == 0 {
			continue
		}
		var doc any
		if err := json.Unmarshal(img.raw, &doc); err != nil {
			errorf("%s is not JSON: %v", img.name, err)
			continue
		}
		if !strings.Contains(string(img.raw), fmt.Sprint(want.objectID)) {
			errorf("%s does not name the object %d: %s", img.name, want.objectID, img.raw)
		}
	}
	all, _ := json.Marshal(row)
	whole := string(all) + string(row.Before) + string(row.After)
	if s := containsAny(whole, want.secrets...); s != "" {
		errorf("the audit row contains a secret (%.12s…): %s", s, whole)
	}
}

// TestFailedMutationLeavesNoAudit checks that a mutation that fails — invalid input, a later
// field of the same operation failing, a forbidden change, a failed login, a bad token
// request — leaves no audit row and changes nothing.
func TestFailedMutationLeavesNoAudit(t *testing.T) {
	w := newWorld(t)
	rack, _ := entities["Rack"].make(w)
	region := w.region
	desc := func(id int) string {
		n, err := w.c.Noder(w.ctx, id)
		if err != nil {
			t.Fatalf("read %d: %v", id, err)
		}
		b, _ := json.Marshal(n)
		return string(b)
	}
	const password = "the-right-password-123"
	u := w.newUserWithPassword("failing", password)
	username := w.c.User.GetX(w.ctx, u).Username
	tokenName := uniq("bad-token")

	cases := []struct {
		name   string
		call   call
		code   string
		before map[int]string
	}{
		{"invalid input", call{token: gqltest.AdminToken,
			query: `mutation($id: ID!) { updateRack(id: $id, input: {height: 0, description: "nope"}) { id } }`,
			vars:  map[string]any{"id": gid(rack)}}, "VALIDATION", nil},
		{"second field fails", call{token: gqltest.AdminToken,
			query: `mutation($r: ID!, $k: ID!) { a: updateRegion(id: $r, input: {description: "half done"}) { id } b: updateRack(id: $k, input: {height: 0}) { id } }`,
			vars:  map[string]any{"r": gid(region), "k": gid(rack)}}, "VALIDATION", nil},
		{"forbidden", call{token: w.viewer("viewer").token,
			query: `mutation($r: ID!) { updateRegion(id: $r, input: {description: "not yours"}) { id } }`,
			vars:  map[string]any{"r": gid(region)}}, "FORBIDDEN", nil},
		{"hidden from a tenant", call{token: w.viewer("member-other-tenant").token,
			query: `mutation($id: ID!) { updateVirtualMachine(id: $id, input: {description: "not yours"}) { id } }`,
			vars:  map[string]any{"id": gid(w.vm1)}}, "NOT_FOUND", nil},
		{"wrong password", call{
			query: `mutation($u: String!, $p: String!) { login(username: $u, password: $p) { token } }`,
			vars:  map[string]any{"u": username, "p": "the-wrong-password-123"}}, "UNAUTHENTICATED", nil},
		{"bad token input", call{token: gqltest.AdminToken,
			query: `mutation($in: CreateAPITokenInput!) { createAPIToken(input: $in) { token } }`,
			vars:  map[string]any{"in": map[string]any{"name": tokenName, "allowedCIDRs": []string{"not-a-network"}}}}, "VALIDATION", nil},
	}
	// Identity mutations in an operation whose later field fails: the whole operation is rolled
	// back, so the token, the role, the revocation and the password must not outlive it.
	victim := w.newUserWithPassword("atomic", password)
	victimTok, victimTokID := w.mintToken(victim, tokenOpts{})
	failing := `b: updateRack(id: $k, input: {height: 0}) { id }`
	grantName := uniq("rolled-back")
	cases = append(cases,
		struct {
			name   string
			call   call
			code   string
			before map[int]string
		}{"createAPIToken then a failing field", call{token: gqltest.AdminToken,
			query: `mutation($k: ID!, $n: String!) { a: createAPIToken(input: {name: $n}) { token } ` + failing + ` }`,
			vars:  map[string]any{"k": gid(rack), "n": grantName}}, "VALIDATION", nil},
		struct {
			name   string
			call   call
			code   string
			before map[int]string
		}{"grantRole then a failing field", call{token: gqltest.AdminToken,
			query: `mutation($k: ID!, $u: ID!) { a: grantRole(input: {userID: $u, role: ADMIN}) { id } ` + failing + ` }`,
			vars:  map[string]any{"k": gid(rack), "u": gid(victim)}}, "VALIDATION", nil},
		struct {
			name   string
			call   call
			code   string
			before map[int]string
		}{"revokeAPIToken then a failing field", call{token: gqltest.AdminToken,
			query: `mutation($k: ID!, $t: ID!) { a: revokeAPIToken(id: $t) { id } ` + failing + ` }`,
			vars:  map[string]any{"k": gid(rack), "t": gid(victimTokID)}}, "VALIDATION", nil},
		struct {
			name   string
			call   call
			code   string
			before map[int]string
		}{"setUserPassword then a failing field", call{token: gqltest.AdminToken,
			query: `mutation($k: ID!, $u: ID!) { a: setUserPassword(id: $u, password: "rolled-back-password") { id } ` + failing + ` }`,
			vars:  map[string]any{"k": gid(rack), "u": gid(victim)}}, "VALIDATION", nil},
	)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			snap := map[int]string{rack: desc(rack), region: desc(region), w.vm1: desc(w.vm1), u: desc(u)}
			since := lastAuditID(w)
			tc.call.requestID = fmt.Sprintf("fail-%d", seq.Add(1))
			tc.call.remoteAddr = clientAddr
			r := send(t, w.env.Handler, tc.call)
			if !onlyCode(r, tc.code) {
				t.Errorf("want %s, got data %s errors %s", tc.code, r.Data, r.ErrorsString())
			}
			if rows := newAuditRows(w, since); len(rows) > 0 {
				t.Errorf("a failed mutation wrote %d audit row(s): first %s %s %d", len(rows), rows[0].Action, rows[0].ObjectType, rows[0].ObjectID)
			}
			for id, before := range snap {
				if after := desc(id); after != before {
					t.Errorf("record %d changed:\nbefore %s\nafter  %s", id, before, after)
				}
			}
		})
	}
	for _, name := range []string{tokenName, grantName} {
		if n := w.c.APIToken.Query().Where(apitoken.Name(name)).CountX(w.ctx); n != 0 {
			t.Errorf("a failed operation stored %d token(s) named %s", n, name)
		}
	}
	if n := w.c.RoleBinding.Query().Where(rolebinding.HasUserWith(user.ID(victim))).CountX(w.ctx); n != 0 {
		t.Errorf("a failed operation granted user %d a role (%d binding(s))", victim, n)
	}
	if name, r := whoami(t, w, victimTok, "", nil); name == "" {
		t.Errorf("a failed operation revoked a token: %s", r.ErrorsString())
	}
	if identity.CheckPassword(w.c.User.GetX(w.ctx, victim).PasswordHash, "rolled-back-password") {
		t.Errorf("a failed operation set a user's password")
	}
}

// TestAuditLogVisibility checks who reads the audit log: admins all of it, tenant admins the
// rows of their tenant (including those of their own changes), everyone else FORBIDDEN.
func TestAuditLogVisibility(t *testing.T) {
	w := newWorld(t)
	mk := func(tenant int) int {
		q := w.c.AuditLog.Create().SetActor("test").SetAction("test")
		if tenant != 0 {
			q.SetTenantID(tenant)
		}
		return q.SaveX(w.ctx).ID
	}
	rowA, rowB, rowNone := mk(w.tenantA), mk(w.tenantB), mk(0)
	ids := []string{gid(rowA), gid(rowB), gid(rowNone)}
	q := `query($ids: [ID!]) { auditLogs(where: {idIn: $ids}) { totalCount edges { node { id tenantID } } } }`
	for _, v := range w.viewers {
		t.Run(v.name, func(t *testing.T) {
			r := w.do(t, v, q, map[string]any{"ids": ids})
			var want []string
			switch {
			case v.anonymous:
				if !onlyCode(r, "UNAUTHENTICATED") {
					t.Errorf("want UNAUTHENTICATED, got %s %s", r.Data, r.ErrorsString())
				}
				return
			case slices.Contains(v.platform, authz.RoleAdmin):
				want = ids
			case v.tenantRole == authz.RoleTenantAdmin:
				want = []string{gid(rowA)}
			default:
				if !onlyCode(r, "FORBIDDEN") {
					t.Errorf("want FORBIDDEN, got %s %s", r.Data, r.ErrorsString())
				}
				return
			}
			var out struct {
				AuditLogs struct {
					TotalCount int
					Edges      []struct{ Node struct{ ID string } }
				}
			}
			mustData(t, r, &out)
			var got []string
			for _, e := range out.AuditLogs.Edges {
				got = append(got, e.Node.ID)
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) || out.AuditLogs.TotalCount != len(want) {
				t.Errorf("auditLogs = %v (totalCount %d), want %v", got, out.AuditLogs.TotalCount, want)
			}
		})
	}

	// A tenant admin's own change to its tenant's VM, then its deletion, are in its audit log.
	admin := w.viewer("tenant-admin")
	vm, _ := entities["VirtualMachine"].make(w)
	for _, m := range []struct{ action, query string }{
		{"updateVirtualMachine", `mutation($id: ID!) { updateVirtualMachine(id: $id, input: {description: "mine"}) { id } }`},
		{"deleteVirtualMachine", `mutation($id: ID!) { deleteVirtualMachine(id: $id) }`},
	} {
		rid := fmt.Sprintf("tenant-%s-%d", m.action, seq.Add(1))
		mustData(t, send(t, w.env.Handler, call{token: admin.token, query: m.query, vars: map[string]any{"id": gid(vm)}, requestID: rid}), nil)
		for _, v := range []*viewer{admin, w.viewer("admin")} {
			var out struct{ AuditLogs struct{ TotalCount int } }
			mustData(t, w.do(t, v, `query($rid: String!) { auditLogs(where: {requestID: $rid}) { totalCount } }`, map[string]any{"rid": rid}), &out)
			if out.AuditLogs.TotalCount != 1 {
				t.Errorf("%s: %s of tenant A's VM: %d audit rows visible, want 1", v.name, m.action, out.AuditLogs.TotalCount)
			}
		}
	}
}
