package graph

import (
	"cmp"
	"context"
	"net/netip"
	"slices"

	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/domain/fabric"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/schema/fieldtype"
	"github.com/virtflow/virtflow/ent/virtualmachine"
	"github.com/virtflow/virtflow/graph/model"
)

// nodeBGP is fabric.NodeBGP as GraphQL returns it.
func nodeBGP(b fabric.NodeBGP) *model.NodeBgp {
	out := &model.NodeBgp{RouterID: b.RouterID, Peers: []*model.BGPPeer{}, Missing: b.Missing}
	if b.ASN != nil {
		a := int(*b.ASN)
		out.Asn = &a
	}
	for _, p := range b.Peers {
		out.Peers = append(out.Peers, &model.BGPPeer{Name: p.Name, Asn: int(p.ASN), Address: p.Address, Bfd: p.BFD})
	}
	return out
}

// routeReport is the routes of an assignment report, nil when not reported.
func routeReport(in []*model.VMRouteInput) []fieldtype.VMRoute {
	if in == nil {
		return nil
	}
	out := make([]fieldtype.VMRoute, 0, len(in))
	for _, r := range in {
		if r != nil {
			out = append(out, fieldtype.VMRoute{Address: r.Address, Namespace: r.Namespace, LinkAddress: r.LinkAddress, Announced: r.Announced})
		}
	}
	return out
}

// vmRoutes lists the routes of the VMs the viewer may read, by address.
func vmRoutes(ctx context.Context, c *ent.Client, first *int) ([]*model.RouteEntry, error) {
	n := 500
	if first != nil {
		n = *first
	}
	if n < 0 || n > 5000 {
		return nil, apierr.Validation("first", "between 0 and 5000")
	}
	vms, err := c.VirtualMachine.Query().Where(virtualmachine.StatusNEQ(virtualmachine.StatusDeleted)).
		Order(ent.Asc(virtualmachine.FieldID)).All(ctx)
	if err != nil {
		return nil, err
	}
	out := []*model.RouteEntry{}
	for _, vm := range vms {
		for i := range vm.Routes {
			out = append(out, &model.RouteEntry{VirtualMachine: vm, Route: &vm.Routes[i]})
		}
	}
	slices.SortStableFunc(out, func(a, b *model.RouteEntry) int {
		x, _ := netip.ParseAddr(a.Route.Address)
		y, _ := netip.ParseAddr(b.Route.Address)
		return cmp.Or(x.Compare(y), cmp.Compare(a.VirtualMachine.ID, b.VirtualMachine.ID))
	})
	if len(out) > n {
		out = out[:n]
	}
	return out, nil
}
