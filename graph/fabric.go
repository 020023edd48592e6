package graph

import (
	"github.com/virtflow/virtflow/domain/fabric"
	"github.com/virtflow/virtflow/graph/model"
)

// rootOptions turns buildFabricRoot's optional inputs into fabric.RootOptions.
func rootOptions(in model.BuildFabricRootInput) []fabric.RootOption {
	var opts []fabric.RootOption
	if in.RackID != nil {
		opts = append(opts, fabric.WithRack(*in.RackID))
	}
	if in.HostPrefix != nil {
		opts = append(opts, fabric.WithHostPrefix(*in.HostPrefix))
	}
	if in.FloorSpines != nil {
		opts = append(opts, fabric.WithFloorSpines(*in.FloorSpines))
	}
	if in.Gateways != nil {
		opts = append(opts, fabric.WithGateways(*in.Gateways))
	}
	return opts
}

// floorSpec turns buildFabric's input into a fabric.FloorSpec; the root routers are looked up
// by fabric.Build itself.
func floorSpec(in model.BuildFabricInput) fabric.FloorSpec {
	spec := fabric.FloorSpec{FloorID: in.FloorID, NetworkRackID: in.NetworkRackID, RackIDs: in.RackIDs}
	if in.HostPrefix != nil {
		spec.HostPrefix = *in.HostPrefix
	}
	if in.FloorLeaves != nil {
		spec.FloorLeaves = *in.FloorLeaves
	}
	if in.RackSpines != nil {
		spec.RackSpines = *in.RackSpines
	}
	return spec
}
