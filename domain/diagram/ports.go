package diagram

import (
	"context"
	"fmt"

	"entgo.io/ent/dialect/sql"

	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/host"
	"github.com/virtflow/virtflow/ent/ipaddress"
	"github.com/virtflow/virtflow/ent/link"
	"github.com/virtflow/virtflow/ent/migrate"
	"github.com/virtflow/virtflow/ent/network"
	"github.com/virtflow/virtflow/ent/port"
	"github.com/virtflow/virtflow/ent/virtualmachine"
)

// The network diagram and the path trace walk the cabling one level at a time with the
// batched reads below: each reads the rows for a whole level in one statement, through the
// caller's client so the privacy policy filters them, selecting the foreign keys that ent's
// entities keep private (which host, VM or network a port belongs to; which ports a link
// joins) so no extra statement per edge is needed.

// portRow is a port with the foreign keys that place it.
type portRow struct {
	ID      int            `sql:"id"`
	Name    string         `sql:"name"`
	MAC     sql.NullString `sql:"mac"`
	VLAN    nullInt        `sql:"vlan"`
	Host    nullInt        `sql:"host_ports"`
	VM      nullInt        `sql:"virtual_machine_ports"`
	Network nullInt        `sql:"network_ports"`
}

// owner is the id of the host or VM the port belongs to, 0 when neither.
func (p *portRow) owner() int {
	if h := fk(p.Host); h != 0 {
		return h
	}
	return fk(p.VM)
}

// linkRow is a cable between two ports.
type linkRow struct {
	ID    int            `sql:"id"`
	Label sql.NullString `sql:"label"`
	A     nullInt        `sql:"port_link_a"`
	B     nullInt        `sql:"port_link_b"`
}

// portSet chooses ports by their id, host, VM or network; empty lists choose nothing.
type portSet struct {
	ids, hosts, vms, networks []int
}

func (ps portSet) empty() bool {
	return len(ps.ids)+len(ps.hosts)+len(ps.vms)+len(ps.networks) == 0
}

// scanPorts reads the ports of ps in one statement, ordered by id.
func scanPorts(ctx context.Context, c *ent.Client, ps portSet) ([]portRow, error) {
	if ps.empty() {
		return nil, nil
	}
	var rows []portRow
	err := c.Port.Query().
		Where(func(s *sql.Selector) {
			var or []*sql.Predicate
			for _, by := range []struct {
				col string
				ids []int
			}{{port.FieldID, ps.ids}, {port.HostColumn, ps.hosts}, {port.VirtualMachineColumn, ps.vms}, {port.NetworkColumn, ps.networks}} {
				if len(by.ids) > 0 {
					or = append(or, idIn(s, by.col, by.ids))
				}
			}
			s.Where(sql.Or(or...))
		}).
		Modify(func(s *sql.Selector) {
			s.Select(s.C(port.FieldID), s.C(port.FieldName), s.C(port.FieldMAC), s.C(port.FieldVlan),
				s.C(port.HostColumn), s.C(port.VirtualMachineColumn), s.C(port.NetworkColumn)).
				OrderBy(s.C(port.FieldID))
		}).
		Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("load ports: %w", err)
	}
	return rows, nil
}

// scanLinks reads the links with an end among portIDs in one statement, ordered by id.
func scanLinks(ctx context.Context, c *ent.Client, portIDs []int) ([]linkRow, error) {
	if len(portIDs) == 0 {
		return nil, nil
	}
	var rows []linkRow
	err := c.Link.Query().
		Where(func(s *sql.Selector) {
			s.Where(sql.Or(idIn(s, link.APortColumn, portIDs), idIn(s, link.BPortColumn, portIDs)))
		}).
		Modify(func(s *sql.Selector) {
			s.Select(s.C(link.FieldID), s.C(link.FieldLabel), s.C(link.APortColumn), s.C(link.BPortColumn)).
				OrderBy(s.C(link.FieldID))
		}).
		Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("load links: %w", err)
	}
	return rows, nil
}

// scanAddresses reads the IP addresses bound to portIDs in one statement, by port.
func scanAddresses(ctx context.Context, c *ent.Client, portIDs []int) (map[int][]string, error) {
	out := map[int][]string{}
	if len(portIDs) == 0 {
		return out, nil
	}
	var rows []struct {
		Address string  `sql:"address"`
		Port    nullInt `sql:"port_ip_addresses"`
	}
	err := c.IPAddress.Query().
		Where(func(s *sql.Selector) { s.Where(idIn(s, ipaddress.PortColumn, portIDs)) }).
		Modify(func(s *sql.Selector) {
			s.Select(s.C(ipaddress.FieldAddress), s.C(ipaddress.PortColumn)).
				OrderBy(s.C(ipaddress.PortColumn), s.C(ipaddress.FieldAddress))
		}).
		Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("load addresses: %w", err)
	}
	for _, r := range rows {
		out[fk(r.Port)] = append(out[fk(r.Port)], r.Address)
	}
	return out, nil
}

// loadHosts reads the hosts ids with the columns diagrams show, in one statement.
func loadHosts(ctx context.Context, c *ent.Client, ids []int) ([]*ent.Host, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	hs, err := c.Host.Query().
		Where(func(s *sql.Selector) { s.Where(idIn(s, host.FieldID, ids)) }).
		Select(host.FieldName, host.FieldKind, host.FieldRole, host.FieldLifecycle).
		Order(ent.Asc(host.FieldID)).
		All(ctx)
	if err != nil {
		return nil, fmt.Errorf("load hosts: %w", err)
	}
	return hs, nil
}

// loadVMs reads the VMs ids with the columns diagrams show, in one statement.
func loadVMs(ctx context.Context, c *ent.Client, ids []int) ([]*ent.VirtualMachine, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	vms, err := c.VirtualMachine.Query().
		Where(func(s *sql.Selector) { s.Where(idIn(s, virtualmachine.FieldID, ids)) }).
		Select(virtualmachine.FieldName, virtualmachine.FieldStatus).
		Order(ent.Asc(virtualmachine.FieldID)).
		All(ctx)
	if err != nil {
		return nil, fmt.Errorf("load VMs: %w", err)
	}
	return vms, nil
}

// loadNetworks reads the networks ids with the columns diagrams show, in one statement.
func loadNetworks(ctx context.Context, c *ent.Client, ids []int) ([]*ent.Network, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	ns, err := c.Network.Query().
		Where(func(s *sql.Selector) { s.Where(idIn(s, network.FieldID, ids)) }).
		Select(network.FieldName, network.FieldCidr, network.FieldVlan).
		Order(ent.Asc(network.FieldID)).
		All(ctx)
	if err != nil {
		return nil, fmt.Errorf("load networks: %w", err)
	}
	return ns, nil
}

// tableOf is the table of the record with global id id (ent gives every type its own range of
// 1<<32 ids), or "" when no table has that range. It runs no statement.
func tableOf(id int) string {
	for _, t := range migrate.Tables {
		if t.Annotation == nil || t.Annotation.IncrementStart == nil {
			continue
		}
		if start := *t.Annotation.IncrementStart; id >= start && id < start+1<<32 {
			return t.Name
		}
	}
	return ""
}

// portEnd is the end of an edge at port p with its addresses.
func portEnd(p *portRow, addrs []string) *PortEnd {
	e := &PortEnd{ID: p.ID, Name: p.Name, Addresses: addrs}
	if e.Addresses == nil {
		e.Addresses = []string{}
	}
	if p.MAC.Valid {
		mac := p.MAC.String
		e.MAC = &mac
	}
	if p.VLAN.Valid {
		v := int(p.VLAN.Int64)
		e.VLAN = &v
	}
	return e
}
