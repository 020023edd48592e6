package cli

import (
	"context"
	"flag"
	"time"

	"github.com/virtflow/virtflow/clients/apiclient"
)

// imageColumns are the columns of an image's table.
var imageColumns = []string{"id", "name", "status", "format", "sizeGB", "source", "statusReason"}

// runImage is `virtflow image create-from-vm`: an image made from a stopped VM's root disk
// (createImageFromVirtualMachine; other image changes go through create/update image).
func runImage(ctx context.Context, a *app, args []string) error {
	const usage = "image create-from-vm VM --name NAME [--description TEXT] [--os-name NAME] [--os-version VERSION] [--wait]   (VM: name or id; it must be STOPPED)"
	if len(args) == 0 {
		return usagef("%s", usage)
	}
	verb, args := args[0], args[1:]
	fs := flag.NewFlagSet("image "+verb, flag.ContinueOnError)
	name := fs.String("name", "", "the image's name (a slug, unique among the images)")
	description := fs.String("description", "", "a description")
	osName := fs.String("os-name", "", "the image's OS name (default: that of the VM's image)")
	osVersion := fs.String("os-version", "", "the image's OS version (default: that of the VM's image)")
	wait := fs.Bool("wait", false, "wait until the image is ACTIVE")
	timeout := fs.Duration("timeout", 30*time.Minute, "how long --wait waits")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if verb != "create-from-vm" || len(pos) != 1 || *name == "" {
		return usagef("%s", usage)
	}
	c, err := a.api()
	if err != nil {
		return err
	}
	vm, err := a.ref(ctx, c, "vm", pos[0])
	if err != nil {
		return err
	}
	r, err := apiclient.CreateImageFromVM(ctx, c, vm, apiclient.CreateImageFromVirtualMachineInput{Name: *name,
		Description: optional(*description), OsName: optional(*osName), OsVersion: optional(*osVersion)})
	if err != nil {
		return err
	}
	img := &r.CreateImageFromVirtualMachine.ImageFields
	if *wait {
		img, err = await(ctx, *timeout, "image "+img.Name, img,
			func(i *apiclient.ImageFields) (apiclient.ImageStatus, *string) { return i.Status, i.StatusReason },
			apiclient.ImageStatusActive, apiclient.ImageStatusError,
			func(ctx context.Context) (*apiclient.ImageFields, bool, error) {
				g, err := apiclient.GetImage(ctx, c, img.Id)
				if err != nil || len(g.Images.Edges) == 0 || g.Images.Edges[0].Node == nil {
					return nil, false, err
				}
				return &g.Images.Edges[0].Node.ImageFields, true, nil
			})
		if err != nil {
			return err
		}
	}
	return a.show(img, imageColumns)
}
