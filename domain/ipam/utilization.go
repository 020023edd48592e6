package ipam

import (
	"context"

	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/ent"
)

// Usage says how much of a network's prefix is used. Counts are float64 because IPv6 prefixes
// exceed 2^53 addresses (and then are rounded). Every usable address is counted once:
// Allocated + Reserved + Free = Usable.
type Usage struct {
	// Prefix is the network's prefix in CIDR notation.
	Prefix string
	// Size is the number of addresses of the prefix.
	Size float64
	// Usable is Size less the network and broadcast addresses of IPv4 prefixes of /30 and
	// wider.
	Usable float64
	// Allocated counts the ALLOCATED addresses and the gateway (unless an address records
	// the gateway, which then counts by its own status).
	Allocated float64
	// Reserved counts the RESERVED addresses and the other addresses of reserved ranges.
	Reserved float64
	// Free counts the addresses the allocator may still hand out.
	Free float64
	// PercentUsed is (Allocated + Reserved) / Usable × 100.
	PercentUsed float64
}

// How many free ranges FreeRanges returns: DefaultFreeRanges unless asked (the GraphQL
// argument's default), at most MaxFreeRanges (the API's largest page).
const (
	DefaultFreeRanges = 100
	MaxFreeRanges     = 1000
)

// Utilization counts the addresses of network n (two queries). It counts every address of
// the network, including those the viewer may not read: the figures say how full the prefix
// is, not what is in it. Inside a transaction (ctx carries one: a mutation's answer) it reads
// through it, so the mutation's own changes count.
func Utilization(ctx context.Context, client *ent.Client, n *ent.Network) (Usage, error) {
	s, err := loadSpace(ctx, reader(ctx, client), n, true)
	if err != nil {
		return Usage{}, err
	}
	return s.usage(), nil
}

// FreeRanges returns the first free ranges of host addresses of network n, lowest first:
// what the allocator could still hand out (two queries; through the transaction ctx carries,
// if any). first must be between 0 and MaxFreeRanges (else VALIDATION on first).
func FreeRanges(ctx context.Context, client *ent.Client, n *ent.Network, first int) ([]Range, error) {
	if first < 0 || first > MaxFreeRanges {
		return nil, apierr.Validation("first", "must be between 0 and %d", MaxFreeRanges)
	}
	if first == 0 {
		return []Range{}, nil
	}
	s, err := loadSpace(ctx, reader(ctx, client), n, false)
	if err != nil {
		return nil, err
	}
	return s.free(first), nil
}
