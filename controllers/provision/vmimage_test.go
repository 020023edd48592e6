package provision_test

import (
	"context"
	"strconv"
	"sync"
	"testing"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/controllers/provision"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/assignment"
	"github.com/virtflow/virtflow/ent/image"
	"github.com/virtflow/virtflow/ent/snapshot"
	"github.com/virtflow/virtflow/ent/virtualmachine"
)

// TestImageFromVMLifecycle: createImageFromVirtualMachine refuses a running VM (VALIDATION on
// id) and a tenant member (FORBIDDEN: images are the catalog's); for a stopped VM, as an
// operator, it writes a PENDING QCOW2 image (source vm:<id>, the OS and minimums of the VM's
// image unless given, the root disk's size) with its own assignment on the VM's node. The
// agent's APPLYING report only says why it is PENDING; FAILED sets ERROR with the reason and
// ends the assignment; APPLIED of an image whose upload did not arrive is ERROR too, and
// APPLIED of an ACTIVE one (the upload arrived) only ends the assignment.
func TestImageFromVMLifecycle(t *testing.T) {
	f := newFixture(t)
	vm := copyVM(t, f, "image-me")
	base := f.c.VirtualMachine.QueryImage(vm).OnlyX(f.ctx)
	f.c.Image.UpdateOneID(base.ID).SetOsName("debian").SetOsVersion("12").SetMinVcpus(2).ExecX(f.ctx)
	operator := authz.NewContext(context.Background(), &authz.Viewer{Name: "op", Bindings: []authz.Binding{{Role: authz.RoleOperator, Domain: authz.Platform}}})
	member := authz.NewContext(context.Background(), &authz.Viewer{Name: "member", Bindings: []authz.Binding{{Role: authz.RoleTenantMember, Domain: authz.TenantDomain(f.site.Tenant)}}})

	if _, err := f.svc.CreateImageFromVM(operator, f.c, vm.ID, provision.ImageFromVM{Name: uniqName("golden")}); !isValidation(err, "id") {
		t.Fatalf("image from a running VM: %v; want VALIDATION on id", err)
	}
	f.c.VirtualMachine.UpdateOneID(vm.ID).SetStatus(virtualmachine.StatusStopped).ExecX(f.ctx)
	if _, err := f.svc.CreateImageFromVM(member, f.c, vm.ID, provision.ImageFromVM{Name: uniqName("golden")}); !isCode(err, apierr.CodeForbidden) {
		t.Fatalf("image as a tenant member: %v; want FORBIDDEN", err)
	}
	if _, err := f.svc.CreateImageFromVM(operator, f.c, 1<<30, provision.ImageFromVM{Name: uniqName("golden")}); !isValidation(err, "id") {
		t.Fatalf("image from a missing VM: %v; want VALIDATION on id", err)
	}

	newImage := func(name string) (*assignmentAndImage, error) {
		img, err := f.svc.CreateImageFromVM(operator, f.c, vm.ID, provision.ImageFromVM{Name: name})
		if err != nil {
			return nil, err
		}
		a := f.c.Assignment.Query().Where(assignment.HasImageWith(image.ID(img.ID))).WithNode().OnlyX(f.ctx)
		return &assignmentAndImage{a: a.ID, node: a.Edges.Node.ID, img: img.ID}, nil
	}
	first, err := newImage(uniqName("golden"))
	if err != nil {
		t.Fatalf("image from a stopped VM: %v", err)
	}
	img := f.c.Image.GetX(f.ctx, first.img)
	if img.Status != image.StatusPending || img.Format != image.FormatQcow2 || img.Source != "vm:"+strconv.Itoa(vm.ID) ||
		img.OsName != "debian" || img.OsVersion != "12" || img.MinVcpus != 2 || img.SizeGB != f.flav.DiskGB {
		t.Fatalf("new image: %+v; want PENDING QCOW2 vm:%d with the base image's OS and minimums, %d GiB", img, vm.ID, f.flav.DiskGB)
	}
	if want := f.vm(t, vm.ID); first.node != f.c.VirtualMachine.QueryNode(want).OnlyIDX(f.ctx) {
		t.Fatalf("image assigned to node %d, not the VM's", first.node)
	}
	why := "another upload of the image runs"
	f.report(t, provision.Report{ID: first.a, Generation: 1, Status: assignment.StatusApplying, Reason: &why})
	if img := f.c.Image.GetX(f.ctx, first.img); img.Status != image.StatusPending || img.StatusReason != "the VM's node waits: "+why {
		t.Fatalf("after APPLYING: %s %q", img.Status, img.StatusReason)
	}
	bad := "no space left"
	f.report(t, provision.Report{ID: first.a, Generation: 1, Status: assignment.StatusFailed, Reason: &bad})
	if img := f.c.Image.GetX(f.ctx, first.img); img.Status != image.StatusError || img.StatusReason != "its node could not make it: "+bad {
		t.Fatalf("after FAILED: %s %q", img.Status, img.StatusReason)
	}
	if n := f.c.Assignment.Query().Where(assignment.ID(first.a)).CountX(f.ctx); n != 0 {
		t.Fatalf("the failed image's assignment is still there")
	}

	second, err := newImage(uniqName("golden"))
	if err != nil {
		t.Fatal(err)
	}
	f.report(t, provision.Report{ID: second.a, Generation: 1, Status: assignment.StatusApplied})
	if img := f.c.Image.GetX(f.ctx, second.img); img.Status != image.StatusError {
		t.Fatalf("APPLIED without the bytes: %s; want ERROR", img.Status)
	}
	third, err := newImage(uniqName("golden"))
	if err != nil {
		t.Fatal(err)
	}
	f.c.Image.UpdateOneID(third.img).SetStatus(image.StatusActive).ExecX(f.ctx) // the upload arrived
	f.report(t, provision.Report{ID: third.a, Generation: 1, Status: assignment.StatusApplied})
	if img := f.c.Image.GetX(f.ctx, third.img); img.Status != image.StatusActive {
		t.Fatalf("APPLIED after the upload: %s; want ACTIVE", img.Status)
	}
	if n := f.c.Assignment.Query().Where(assignment.ID(third.a)).CountX(f.ctx); n != 0 {
		t.Fatalf("the done image's assignment is still there")
	}
}

type assignmentAndImage struct{ a, node, img int }

// TestStartWaitsForItsDiskCopies: a stopped VM whose disk an image is being made from, or a
// snapshot is being reverted onto, does not start (VALIDATION on id naming the copy) until
// the copy ended; and startVirtualMachine racing createImageFromVirtualMachine in two
// transactions on PostgreSQL never both commit (the image would copy a disk in use).
func TestStartWaitsForItsDiskCopies(t *testing.T) {
	f := newFixture(t)
	vm := copyVM(t, f, "start-or-image")
	operator := authz.NewContext(context.Background(), &authz.Viewer{Name: "op", Bindings: []authz.Binding{{Role: authz.RoleOperator, Domain: authz.Platform}}})
	stop := func() {
		f.c.VirtualMachine.UpdateOneID(vm.ID).SetStatus(virtualmachine.StatusStopped).ExecX(f.ctx)
	}
	stop()
	img, err := f.svc.CreateImageFromVM(operator, f.c, vm.ID, provision.ImageFromVM{Name: uniqName("golden")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Start(f.ctx, f.c, vm.ID); !isValidation(err, "id") {
		t.Fatalf("start while an image is made from the disk: %v; want VALIDATION on id", err)
	}
	f.c.Image.UpdateOneID(img.ID).SetStatus(image.StatusError).ExecX(f.ctx)
	snap := f.c.Snapshot.Create().SetName(uniqName("snap")).SetVirtualMachineID(vm.ID).SetTenantID(f.site.Tenant).
		SetNodeID(f.c.VirtualMachine.QueryNode(vm).OnlyIDX(f.ctx)).SetSizeGB(1).SetStatus(snapshot.StatusReverting).SaveX(f.ctx)
	if _, err := f.svc.Start(f.ctx, f.c, vm.ID); !isValidation(err, "id") {
		t.Fatalf("start while a snapshot is reverted onto the disk: %v; want VALIDATION on id", err)
	}
	f.c.Snapshot.UpdateOneID(snap.ID).SetStatus(snapshot.StatusAvailable).ExecX(f.ctx)
	if _, err := f.svc.Start(f.ctx, f.c, vm.ID); err != nil {
		t.Fatalf("start once the copies ended: %v", err)
	}

	both := 0
	for round := range 8 {
		stop()
		var wg sync.WaitGroup
		var imgErr, startErr error
		race := func(fn func(c *ent.Client) error, out *error) {
			defer wg.Done()
			tx, err := f.c.Tx(f.ctx)
			if err != nil {
				*out = err
				return
			}
			if *out = fn(tx.Client()); *out != nil {
				_ = tx.Rollback()
				return
			}
			*out = tx.Commit()
		}
		wg.Add(2)
		go race(func(c *ent.Client) error {
			_, err := f.svc.CreateImageFromVM(operator, c, vm.ID, provision.ImageFromVM{Name: uniqName("race")})
			return err
		}, &imgErr)
		go race(func(c *ent.Client) error { _, err := f.svc.Start(f.ctx, c, vm.ID); return err }, &startErr)
		wg.Wait()
		if imgErr == nil && startErr == nil {
			both++
		}
		if imgErr != nil && startErr != nil {
			t.Fatalf("round %d: both refused: image %v, start %v", round, imgErr, startErr)
		}
		f.c.Image.Update().Where(image.StatusIn(image.StatusPending, image.StatusDownloading)).SetStatus(image.StatusError).ExecX(f.ctx)
	}
	if both > 0 {
		t.Fatalf("in %d of 8 rounds the VM started while an image was made from its disk", both)
	}
}
