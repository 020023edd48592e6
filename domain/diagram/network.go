package diagram

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/host"
	"github.com/virtflow/virtflow/ent/migrate"
)

// Limits of a network diagram.
const (
	// DefaultDepth is the depth of a network diagram when none is given.
	DefaultDepth = 2
	// MaxDepth is the deepest network diagram: six links reach from a server to the gateways.
	MaxDepth = 6
	// MaxNodes caps the nodes of a network diagram; a larger one is cut and marked truncated.
	MaxNodes = 2000
)

// Network returns the network around the host, network, port or VM with global id from: the
// devices, VMs and networks up to depth (1..MaxDepth, nil meaning DefaultDepth) steps away and
// the edges between them. A step is a cable between two ports (a LINK edge) or a port's
// membership of a network (an ATTACHMENT edge), so a layer-3 switch shows every network its
// ports are in and a VM's NICs appear on their networks. Edges between nodes of the last level
// are included; the diagram is marked truncated when something lies beyond the depth or when
// it reached MaxNodes.
//
// The walk is breadth first and reads each level in one batch of at most 8 statements (the
// level's ports, the cables on them, the far ends, the addresses, the hosts its VMs run on and
// the VMs running on its hosts, and the new hosts, VMs and networks), plus one more batch of at
// most 5 for the edges beyond the last level, so a diagram runs at most 2 + 8*depth + 5
// statements whatever the size of the network. A VM is linked to the host it runs on by a
// RUNS_ON edge whose id is the VM's assignment on that host's compute node. Parts the viewer
// may not read are left out (a tenant sees its VMs and networks, not the hosts and cables); a
// start that does not exist, is not readable or is of another type is NOT_FOUND.
func Network(ctx context.Context, c *ent.Client, from int, depth *int) (*NetworkDiagram, error) {
	d := DefaultDepth
	if depth != nil {
		d = *depth
	}
	if d < 1 || d > MaxDepth {
		return nil, apierr.Validation("depth", "must be between 1 and %d, got %d", MaxDepth, d)
	}
	w := &walk{
		c:     c,
		nodes: map[int]*DiagramNode{},
		ports: map[int]*portRow{},
		addrs: map[int][]string{},
		seen:  map[int]bool{},
		out:   &NetworkDiagram{Nodes: []DiagramNode{}, Edges: []DiagramEdge{}},
	}
	if err := w.start(ctx, from); err != nil {
		return nil, err
	}
	for level := 1; level <= d+1 && len(w.frontier) > 0; level++ {
		if err := w.expand(ctx, level > d); err != nil {
			return nil, err
		}
	}
	for _, n := range w.order {
		w.out.Nodes = append(w.out.Nodes, *w.nodes[n])
	}
	return w.out, nil
}

// walk is the state of a breadth-first walk over the cabling.
type walk struct {
	c        *ent.Client
	nodes    map[int]*DiagramNode // by global id: hosts, VMs and networks in the diagram
	order    []int                // node ids in the order they were found
	frontier []int                // nodes found at the previous level, to expand next
	ports    map[int]*portRow     // every port read so far
	addrs    map[int][]string     // addresses of the ports read so far
	seen     map[int]bool         // ids of the edges added (links and attachment ports)
	out      *NetworkDiagram
}

// start adds the node the diagram starts from: the host, VM or network itself, or the host or
// VM a port belongs to (its network, for a port that belongs to neither).
func (w *walk) start(ctx context.Context, from int) error {
	var hosts, vms, nets []int
	switch tableOf(from) {
	case migrate.HostsTable.Name:
		hosts = []int{from}
	case migrate.VirtualMachinesTable.Name:
		vms = []int{from}
	case migrate.NetworksTable.Name:
		nets = []int{from}
	case migrate.PortsTable.Name:
		ps, err := scanPorts(ctx, w.c, portSet{ids: []int{from}})
		if err != nil && !isForbidden(err) {
			return err
		}
		if len(ps) == 1 {
			p := &ps[0]
			switch {
			case fk(p.Host) != 0:
				hosts = []int{fk(p.Host)}
			case fk(p.VM) != 0:
				vms = []int{fk(p.VM)}
			case fk(p.Network) != 0:
				nets = []int{fk(p.Network)}
			}
		}
	}
	added, err := w.add(ctx, hosts, vms, nets, MaxNodes)
	if err != nil {
		return err
	}
	if added == 0 {
		return apierr.NotFound("no host, network, port or VM %d", from)
	}
	return nil
}

// expand reads the ports of the frontier, the cables on them and their far ends, adds the
// neighbours (unless final, when it only adds the edges between nodes already in the diagram
// and notes whether anything lies beyond), and makes the new nodes the next frontier.
func (w *walk) expand(ctx context.Context, final bool) error {
	var set portSet
	inFrontier := map[int]bool{}
	for _, n := range w.frontier {
		inFrontier[n] = true
		switch w.nodes[n].Kind {
		case NodeNetwork:
			set.networks = append(set.networks, n)
		case NodeVM:
			set.vms = append(set.vms, n)
		default:
			set.hosts = append(set.hosts, n)
		}
	}
	w.frontier = nil

	near, err := scanPorts(ctx, w.c, set)
	if err = optional(err); err != nil {
		return err
	}
	nearIDs := make([]int, len(near))
	for i := range near {
		nearIDs[i] = near[i].ID
		w.ports[near[i].ID] = &near[i]
	}
	links, err := scanLinks(ctx, w.c, nearIDs)
	if err = optional(err); err != nil {
		return err
	}
	far := map[int]bool{}
	for _, l := range links {
		for _, p := range []int{fk(l.A), fk(l.B)} {
			if w.ports[p] == nil {
				far[p] = true
			}
		}
	}
	farPorts, err := scanPorts(ctx, w.c, portSet{ids: sortedKeys(far)})
	if err = optional(err); err != nil {
		return err
	}
	fresh := slices.Clone(nearIDs)
	for i := range farPorts {
		w.ports[farPorts[i].ID] = &farPorts[i]
		fresh = append(fresh, farPorts[i].ID)
	}
	fresh = slices.DeleteFunc(fresh, func(p int) bool { _, ok := w.addrs[p]; return ok })
	addrs, err := scanAddresses(ctx, w.c, fresh)
	if err = optional(err); err != nil {
		return err
	}
	for _, p := range fresh {
		w.addrs[p] = addrs[p]
	}

	// The neighbours: the networks of the frontier's ports, the owners of the ports in the
	// frontier's networks, and the owners of the far ends of the frontier's cables.
	var hosts, vms, nets []int
	candidate := map[int]bool{}
	want := func(n int, p *portRow) {
		if n == 0 || w.nodes[n] != nil || candidate[n] {
			return
		}
		candidate[n] = true
		switch {
		case n == fk(p.Network):
			nets = append(nets, n)
		case n == fk(p.Host):
			hosts = append(hosts, n)
		default:
			vms = append(vms, n)
		}
	}
	for i := range near {
		p := &near[i]
		if inFrontier[p.owner()] {
			want(fk(p.Network), p)
		}
		if inFrontier[fk(p.Network)] {
			want(p.owner(), p)
		}
	}
	for _, l := range links {
		a, b := w.ports[fk(l.A)], w.ports[fk(l.B)]
		if a == nil || b == nil {
			continue
		}
		if inFrontier[a.owner()] {
			want(b.owner(), b)
		}
		if inFrontier[b.owner()] {
			want(a.owner(), a)
		}
	}
	// The hosts the frontier's VMs run on, and the VMs running on the frontier's hosts.
	runsOn, err := scanRunsOn(ctx, w.c, set.vms, set.hosts)
	if err = optional(err); err != nil {
		return err
	}
	for _, r := range runsOn {
		if inFrontier[r.VM] && w.nodes[r.Host] == nil && !candidate[r.Host] {
			candidate[r.Host] = true
			hosts = append(hosts, r.Host)
		}
		if inFrontier[r.Host] && w.nodes[r.VM] == nil && !candidate[r.VM] {
			candidate[r.VM] = true
			vms = append(vms, r.VM)
		}
	}
	if final {
		if len(candidate) > 0 {
			w.out.Truncated = true
		}
	} else if _, err := w.add(ctx, hosts, vms, nets, MaxNodes-len(w.nodes)); err != nil {
		return err
	}

	// The edges whose both ends are now in the diagram.
	for _, l := range links {
		a, b := w.ports[fk(l.A)], w.ports[fk(l.B)]
		if a == nil || b == nil || w.seen[l.ID] {
			continue
		}
		src, dst := w.nodes[a.owner()], w.nodes[b.owner()]
		if src == nil || dst == nil {
			continue
		}
		w.seen[l.ID] = true
		label := l.Label.String
		if label == "" {
			label = src.Name + ":" + a.Name + " -- " + dst.Name + ":" + b.Name
		}
		w.out.Edges = append(w.out.Edges, DiagramEdge{ID: l.ID, Kind: EdgeLink, Source: src.ID, Target: dst.ID,
			SourcePort: portEnd(a, w.addrs[a.ID]), TargetPort: portEnd(b, w.addrs[b.ID]), Label: label})
	}
	for _, r := range runsOn {
		vm, h := w.nodes[r.VM], w.nodes[r.Host]
		if vm == nil || h == nil || w.seen[r.Assignment] {
			continue
		}
		w.seen[r.Assignment] = true
		w.out.Edges = append(w.out.Edges, DiagramEdge{ID: r.Assignment, Kind: EdgeRunsOn, Source: vm.ID, Target: h.ID,
			Label: fmt.Sprintf("%s runs on %s", vm.Name, h.Name)})
	}
	for _, p := range append(near, farPorts...) {
		if w.seen[p.ID] {
			continue
		}
		src, dst := w.nodes[p.owner()], w.nodes[fk(p.Network)]
		if src == nil || dst == nil {
			continue
		}
		w.seen[p.ID] = true
		w.out.Edges = append(w.out.Edges, DiagramEdge{ID: p.ID, Kind: EdgeAttachment, Source: src.ID, Target: dst.ID,
			SourcePort: portEnd(&p, w.addrs[p.ID]), Label: fmt.Sprintf("%s:%s in %s", src.Name, p.Name, dst.Name)})
	}
	return nil
}

// add reads the hosts, VMs and networks given (one statement each) and adds those the viewer
// may read, at most room of them, to the diagram and the next frontier; it marks the diagram
// truncated when there was no room for all.
func (w *walk) add(ctx context.Context, hosts, vms, nets []int, room int) (int, error) {
	var found []DiagramNode
	hs, err := loadHosts(ctx, w.c, hosts)
	if err = optional(err); err != nil {
		return 0, err
	}
	for _, h := range hs {
		n := DiagramNode{ID: h.ID, Kind: hostKind(h.Kind), Name: h.Name, Status: ptr(string(h.Lifecycle))}
		if h.Role != nil {
			n.Role = ptr(*h.Role)
		}
		found = append(found, n)
	}
	ms, err := loadVMs(ctx, w.c, vms)
	if err = optional(err); err != nil {
		return 0, err
	}
	for _, vm := range ms {
		found = append(found, DiagramNode{ID: vm.ID, Kind: NodeVM, Name: vm.Name, Status: ptr(string(vm.Status))})
	}
	ns, err := loadNetworks(ctx, w.c, nets)
	if err = optional(err); err != nil {
		return 0, err
	}
	for _, n := range ns {
		dn := DiagramNode{ID: n.ID, Kind: NodeNetwork, Name: n.Name, CIDR: ptr(n.Cidr)}
		if n.Vlan != 0 {
			dn.VLAN = ptr(n.Vlan)
		}
		found = append(found, dn)
	}
	slices.SortFunc(found, func(a, b DiagramNode) int {
		return cmp.Or(cmp.Compare(kindOrder(a.Kind), kindOrder(b.Kind)), cmp.Compare(a.Name, b.Name), cmp.Compare(a.ID, b.ID))
	})
	if len(found) > room {
		found = found[:max(room, 0)]
		w.out.Truncated = true
	}
	for i := range found {
		n := found[i]
		w.nodes[n.ID] = &n
		w.order = append(w.order, n.ID)
		w.frontier = append(w.frontier, n.ID)
	}
	return len(found), nil
}

// hostKind is the diagram kind of a device.
func hostKind(k host.Kind) DiagramNodeKind {
	switch k {
	case host.KindSwitch:
		return NodeSwitch
	case host.KindRouter:
		return NodeRouter
	}
	return NodeHost
}

// kindOrder orders the nodes of one level: devices, then VMs, then networks.
func kindOrder(k DiagramNodeKind) int {
	return slices.Index([]DiagramNodeKind{NodeRouter, NodeSwitch, NodeHost, NodeVM, NodeNetwork}, k)
}

func ptr[T any](v T) *T { return &v }
