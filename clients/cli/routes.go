package cli

import (
	"context"
	"flag"

	"github.com/virtflow/virtflow/clients/apiclient"
)

// runRoutes lists the routes of the VMs in routed network mode: which node announces which
// address, from which namespace (vmRoutes).
//
//	routes [--first N]
func runRoutes(ctx context.Context, a *app, args []string) error {
	fs := flag.NewFlagSet("routes", flag.ContinueOnError)
	first := fs.Int("first", 500, "at most this many routes")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("routes [--first N]")
	}
	c, err := a.api()
	if err != nil {
		return err
	}
	r, err := apiclient.VMRoutes(ctx, c, first)
	if err != nil {
		return err
	}
	rows := make([]map[string]any, 0, len(r.VmRoutes))
	for _, e := range r.VmRoutes {
		rows = append(rows, map[string]any{"address": e.Route.Address, "node": e.Route.Node, "announced": e.Route.Announced,
			"vm": e.VirtualMachine.Name, "vmID": e.VirtualMachine.Id, "namespace": e.Route.Namespace, "linkAddress": e.Route.LinkAddress,
			"updatedAt": e.Route.UpdatedAt})
	}
	return a.show(rows, []string{"address", "node", "announced", "vm", "vmID", "namespace", "linkAddress"})
}
