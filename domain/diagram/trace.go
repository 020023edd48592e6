package diagram

import (
	"cmp"
	"context"
	"slices"

	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/host"
)

// rank is a device's height in the seed-001 fabric: servers (and anything without a fabric
// role) 0, then rack-leaf, rack-spine, floor-leaf, floor-spine and gateway routers.
func rank(h *ent.Host) int {
	if h.Role == nil {
		return 0
	}
	switch *h.Role {
	case host.RoleRackLeaf:
		return 1
	case host.RoleRackSpine:
		return 2
	case host.RoleFloorLeaf:
		return 3
	case host.RoleFloorSpine:
		return 4
	case host.RoleGatewayRouter:
		return 5
	}
	return 0
}

// maxRank is the rank of the gateway routers: no path climbs more levels than this.
const maxRank = 5

// Trace returns every hop from port portID up the fabric: level 1 is the cable on the port,
// then from each device reached every cable to a device of a strictly higher rank (server <
// rack-leaf < rack-spine < floor-leaf < floor-spine < gateway router), breadth first, each
// device climbed from once. ReachedGateway tells whether a gateway router was reached. Since
// every hop climbs a rank there are at most 5 levels, each read in one batch of 4 statements
// (the ports of the level's devices, the cables on them, the far ends and their devices), so a
// trace runs at most 3 + 4*5 statements whatever the size of the fabric. A port that does not
// exist or that the viewer may not read is NOT_FOUND.
func Trace(ctx context.Context, c *ent.Client, portID int) (*PathTrace, error) {
	start, err := scanPorts(ctx, c, portSet{ids: []int{portID}})
	if err != nil && !isForbidden(err) {
		return nil, err
	}
	if len(start) != 1 {
		return nil, apierr.NotFound("port %d not found", portID)
	}
	from := &start[0]
	addrs, err := scanAddresses(ctx, c, []int{portID})
	if err = optional(err); err != nil {
		return nil, err
	}
	tr := &PathTrace{From: *portEnd(from, addrs[portID]), Hops: []PathHop{}}
	if fk(from.Host) == 0 {
		return tr, nil // a VM's NIC is not cabled to the fabric
	}
	hs, err := loadHosts(ctx, c, []int{fk(from.Host)})
	if err = optional(err); err != nil || len(hs) == 0 {
		return tr, err
	}

	hosts := map[int]*ent.Host{hs[0].ID: hs[0]}
	climbed := map[int]bool{hs[0].ID: true} // devices climbed from, or to be climbed from next
	near := start                           // level 1 climbs from the start port only
	for level := 1; level <= maxRank && len(near) > 0; level++ {
		ports := map[int]*portRow{}
		isNear := map[int]bool{}
		ids := make([]int, len(near))
		for i := range near {
			ports[near[i].ID] = &near[i]
			isNear[near[i].ID] = true
			ids[i] = near[i].ID
		}
		links, err := scanLinks(ctx, c, ids)
		if err = optional(err); err != nil {
			return nil, err
		}
		var farIDs []int
		for _, l := range links {
			for _, p := range []int{fk(l.A), fk(l.B)} {
				if ports[p] == nil {
					farIDs = append(farIDs, p)
				}
			}
		}
		far, err := scanPorts(ctx, c, portSet{ids: farIDs})
		if err = optional(err); err != nil {
			return nil, err
		}
		var newHosts []int
		for i := range far {
			ports[far[i].ID] = &far[i]
			if h := fk(far[i].Host); h != 0 && hosts[h] == nil && !slices.Contains(newHosts, h) {
				newHosts = append(newHosts, h)
			}
		}
		loaded, err := loadHosts(ctx, c, newHosts)
		if err = optional(err); err != nil {
			return nil, err
		}
		for _, h := range loaded {
			hosts[h.ID] = h
		}

		// Every cable from a port of this level to a device of a higher rank is a hop.
		var hops []PathHop
		var next []int
		for _, l := range links {
			for _, ends := range [][2]*portRow{{ports[fk(l.A)], ports[fk(l.B)]}, {ports[fk(l.B)], ports[fk(l.A)]}} {
				lo, hi := ends[0], ends[1]
				if lo == nil || hi == nil || !isNear[lo.ID] {
					continue
				}
				fromHost, toHost := hosts[fk(lo.Host)], hosts[fk(hi.Host)]
				if fromHost == nil || toHost == nil || rank(toHost) <= rank(fromHost) {
					continue
				}
				hop := PathHop{Level: level, LinkID: l.ID,
					FromHostID: fromHost.ID, FromHostName: fromHost.Name, FromPort: lo.Name,
					ToHostID: toHost.ID, ToHostName: toHost.Name, ToPort: hi.Name}
				if toHost.Role != nil {
					hop.ToRole = ptr(*toHost.Role)
				}
				if toHost.Role != nil && *toHost.Role == host.RoleGatewayRouter {
					tr.ReachedGateway = true
				}
				hops = append(hops, hop)
				if !climbed[toHost.ID] {
					climbed[toHost.ID] = true
					next = append(next, toHost.ID)
				}
			}
		}
		slices.SortFunc(hops, func(x, y PathHop) int {
			return cmp.Or(cmp.Compare(x.FromHostName, y.FromHostName), cmp.Compare(x.FromPort, y.FromPort),
				cmp.Compare(x.ToHostName, y.ToHostName), cmp.Compare(x.LinkID, y.LinkID))
		})
		tr.Hops = append(tr.Hops, hops...)

		// The next level climbs from the devices reached, each once.
		if level == maxRank {
			break
		}
		near, err = scanPorts(ctx, c, portSet{hosts: next})
		if err = optional(err); err != nil {
			return nil, err
		}
	}
	return tr, nil
}
