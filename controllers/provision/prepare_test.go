package provision_test

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/hibiken/asynq"
	"golang.org/x/crypto/ssh"

	"github.com/virtflow/virtflow/agent/configdrive"
	"github.com/virtflow/virtflow/controllers/provision"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/image"
)

// TestCreateRendersConfigDrive: vm:create writes the assignment with the VM's config drive:
// its NIC (MAC, address with the network's prefix length, gateway, DNS), its SSH key and
// user-data, ready for the agent; the image it waits for is ACTIVE.
func TestCreateRendersConfigDrive(t *testing.T) {
	f := newFixture(t)
	n, err := f.c.Network.Create().SetName(f.site.Prefix + "-vmnet").SetCidr("10.70.0.0/24").SetVrf(f.site.Prefix).SetGateway("10.70.0.1").
		SetDNSServers([]string{"192.0.2.53"}).SetDatacenterID(f.site.Datacenter).Save(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	priv := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{3}, ed25519.SeedSize))
	pub, _ := ssh.NewPublicKey(priv.Public())
	key, err := f.c.SSHKey.Create().SetName("k").SetPublicKey(string(ssh.MarshalAuthorizedKey(pub))).
		SetTenantID(f.site.Tenant).Save(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if key.Fingerprint != ssh.FingerprintSHA256(pub) {
		t.Errorf("fingerprint %q, want %q", key.Fingerprint, ssh.FingerprintSHA256(pub))
	}
	img, err := f.c.Image.Create().SetName(f.site.Prefix + "-img").SetSource("http://example.com/i.qcow2").SetStatus(image.StatusActive).Save(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	ud := "#cloud-config\nhostname: ignored\n"
	vm, err := f.svc.CreateVM(f.ctx, f.c, ent.CreateVirtualMachineInput{Name: "drive", TenantID: f.site.Tenant,
		RegionID: f.site.Region, FlavorID: f.flav.ID, ImageID: &img.ID, NetworkIDs: []int{n.ID}, SSHKeyIDs: []int{key.ID}, UserData: &ud})
	if err != nil {
		t.Fatal(err)
	}
	f.run(t, provision.TypeVMCreate, vm.ID, 0)
	a := f.assignment(t, vm.ID)
	var spec configdrive.Spec
	if err := json.Unmarshal([]byte(a.ConfigDrive), &spec); err != nil {
		t.Fatalf("config drive %q: %v", a.ConfigDrive, err)
	}
	p := f.c.VirtualMachine.QueryPorts(vm).WithIPAddresses().OnlyX(f.ctx)
	want := configdrive.NIC{MAC: p.MAC, Addresses: []string{p.Edges.IPAddresses[0].Address + "/24"},
		Gateways: []string{"10.70.0.1"}, DNS: []string{"192.0.2.53"}}
	if spec.InstanceID != fmt.Sprintf("vm-%d", vm.ID) || spec.Hostname != "drive" || spec.UserData != ud ||
		len(spec.NICs) != 1 || fmt.Sprint(spec.NICs[0]) != fmt.Sprint(want) ||
		len(spec.SSHKeys) != 1 || !strings.HasPrefix(spec.SSHKeys[0], "ssh-ed25519 ") {
		t.Errorf("config drive %+v; want vm-%d, drive, the user-data, NIC %+v and the key", spec, vm.ID, want)
	}
	if _, err := configdrive.Render(spec); err != nil {
		t.Errorf("the agent could not build it: %v", err)
	}
	// The package's tests share a database and count its rows: leave none.
	f.c.Assignment.DeleteOneID(a.ID).ExecX(f.ctx)
	if err := f.svc.Placer().DeleteVM(f.ctx, f.c, vm.ID); err != nil {
		t.Fatal(err)
	}

	// Bad user-data is refused by the mutation, naming the field.
	bad := "packages: [x]\n"
	_, err = f.svc.CreateVM(f.ctx, f.c, ent.CreateVirtualMachineInput{Name: "bad-ud", TenantID: f.site.Tenant,
		RegionID: f.site.Region, FlavorID: f.flav.ID, UserData: &bad})
	if err == nil || !strings.Contains(err.Error(), "cloud-config") {
		t.Errorf("user-data without #cloud-config: %v, want a VALIDATION naming the header", err)
	}
}

// TestNotReadyWaitsWithoutUsingRetries: an attempt that found the image not ready does not
// count as a failure and is retried after NotReadyDelay.
func TestNotReadyWaitsWithoutUsingRetries(t *testing.T) {
	err := fmt.Errorf("image x is DOWNLOADING: %w", provision.ErrNotReady)
	if provision.IsFailure(err) {
		t.Error("a not-ready attempt counts as a failure")
	}
	if !provision.IsFailure(errors.New("boom")) {
		t.Error("an ordinary error does not count as a failure")
	}
	if d := provision.RetryDelay(7, err, asynq.NewTask(provision.TypeVMCreate, nil)); d != provision.NotReadyDelay {
		t.Errorf("retry delay %s, want %s", d, provision.NotReadyDelay)
	}
}
