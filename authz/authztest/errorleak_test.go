package authztest

import (
	"strings"
	"testing"

	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/volume"
)

// TestErrorsNameNoUnreadableRecords (issue 23, item 10): a maintainer attaching tenant B's
// volume (attached to B's VM, which it does not maintain) to a VM it maintains is refused
// as a read of B's records would be, and the error names neither B's volume nor B's VM; a
// tenant member naming another tenant's network of another purpose is told it does not
// exist, not its name.
func TestErrorsNameNoUnreadableRecords(t *testing.T) {
	w := newWorld(t)
	c, ctx := w.c, w.ctx
	maint := w.viewer("maintainer-own")
	mine := w.newVM(w.tenantA, w.node1) // maintained by M1
	bVM := c.VirtualMachine.Create().SetName(uniq("b-secret-vm")).SetTenantID(w.tenantB).SetRegionID(w.region).
		SetFlavorID(w.flavor).SetImageID(w.image).SetClusterID(w.cluster).SetNodeID(w.node2).SaveX(ctx)
	bVol := c.Volume.Create().SetName(uniq("b-secret-vol")).SetSizeGB(5).SetTenantID(w.tenantB).
		SetNodeID(w.node1).SetVirtualMachineID(bVM.ID).SetStatus(volume.StatusAttached).SaveX(ctx)
	c.ComputeNode.UpdateOneID(w.node1).SetStatus(computenode.StatusReady).ExecX(ctx)

	secrets := []string{bVM.Name, bVol.Name, gid(bVM.ID)}
	check := func(what string, r interface {
		ErrorsString() string
	}, codes ...string) {
		t.Helper()
		s := r.ErrorsString()
		ok := false
		for _, code := range codes {
			ok = ok || strings.Contains(s, `"code":"`+code+`"`)
		}
		if !ok {
			t.Errorf("%s: %s, want %s", what, s, strings.Join(codes, " or "))
		}
		for _, secret := range secrets {
			if strings.Contains(s, secret) {
				t.Errorf("%s: the error names %q, a record of tenant B: %s", what, secret, s)
			}
		}
	}
	check("maintainer: attachVolume(B's volume, my VM)", w.do(t, maint,
		`mutation($id: ID!, $vm: ID!) { attachVolume(id: $id, virtualMachineID: $vm) { id } }`,
		map[string]any{"id": gid(bVol.ID), "vm": gid(mine)}), "FORBIDDEN", "NOT_FOUND")
	check("maintainer: deleteVolume(B's volume)", w.do(t, maint,
		`mutation($id: ID!) { deleteVolume(id: $id) }`, map[string]any{"id": gid(bVol.ID)}), "FORBIDDEN", "NOT_FOUND")
	// The VM's id is the request's own; its name and state are not said.
	secrets = []string{bVM.Name, bVol.Name, string(bVM.Status)}
	for _, action := range []string{"stopVirtualMachine", "rebootVirtualMachine", "deleteVirtualMachine"} {
		sel := " { id }"
		if action == "deleteVirtualMachine" {
			sel = ""
		}
		check("maintainer: "+action+"(B's VM)", w.do(t, maint, `mutation($id: ID!) { `+action+`(id: $id)`+sel+` }`,
			map[string]any{"id": gid(bVM.ID)}), "FORBIDDEN", "NOT_FOUND")
	}
	if got := c.Volume.GetX(ctx, bVol.ID); got.Status != volume.StatusAttached {
		t.Errorf("B's volume is %s after the refused calls", got.Status)
	}

	// A tenant member of A naming B's management network for a new VM.
	bNet := c.Network.Create().SetName(uniq("b-secret-net")).SetCidr("10.201.0.0/16").SetVrf(uniq("vrf")).SetTenantID(w.tenantB).
		SetPurpose("MANAGEMENT").SaveX(ctx)
	secrets = append(secrets, bNet.Name)
	check("member: createVirtualMachine(networkIDs: [B's network])", w.do(t, w.viewer("tenant-member"),
		`mutation($in: CreateVirtualMachineInput!) { createVirtualMachine(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"name": uniq("vm"), "tenantID": gid(w.tenantA), "regionID": gid(w.region),
			"flavorID": gid(w.flavor), "networkIDs": []string{gid(bNet.ID)}}}), "VALIDATION", "FORBIDDEN", "NOT_FOUND")
}
