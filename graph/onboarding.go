package graph

import (
	"github.com/virtflow/virtflow/domain/nodestatus"
	"github.com/virtflow/virtflow/graph/model"
)

// int64Ptr widens an optional GraphQL Int to the int64 of a field such as memoryCapacityMB.
func int64Ptr(v *int) *int64 {
	if v == nil {
		return nil
	}
	n := int64(*v)
	return &n
}

// providerOffers converts the providers a node agent reports; nil stays nil (leave the links).
func providerOffers(in []*model.ProviderOfferInput) []nodestatus.ProviderOffer {
	if in == nil {
		return nil
	}
	out := make([]nodestatus.ProviderOffer, 0, len(in))
	for _, p := range in {
		out = append(out, nodestatus.ProviderOffer{Kind: p.Kind, Driver: p.Driver})
	}
	return out
}
