package graph

import (
	"context"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/ent"
)

// portNetworkID is the id of the port's network, nil for a port of none. Whoever may read
// the port may know which network it is in (a node agent names the network's bridge after
// it), even without reading the network itself: only the id is read, unrestricted.
func portNetworkID(ctx context.Context, p *ent.Port) (*int, error) {
	id, err := p.QueryNetwork().OnlyID(authz.Unrestricted(ctx))
	if ent.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &id, nil
}

// derefAll copies the values of ps (an input list gqlgen binds as pointers); nil stays nil.
func derefAll[T any](ps []*T) []T {
	if ps == nil {
		return nil
	}
	out := make([]T, 0, len(ps))
	for _, p := range ps {
		if p != nil {
			out = append(out, *p)
		}
	}
	return out
}
