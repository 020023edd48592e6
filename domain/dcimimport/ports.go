package dcimimport

import (
	"context"
	"fmt"
	"strings"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/host"
	"github.com/virtflow/virtflow/ent/port"
)

var (
	portRequired = []string{"host", "name"}
	portOptional = []string{"kind", "mac", "speed_mbps", "mtu", "vlan", "description"}
)

// portRow is a checked PORTS row.
type portRow struct {
	hostID           int
	name             string
	kind             *port.Kind
	mac, describe    *string
	speed, mtu, vlan *int
}

// hostPorts loads the hosts named (by name) with their ports and the ports' cables.
func hostPorts(ctx context.Context, c *ent.Client, names []string) (map[string]*ent.Host, error) {
	hosts, err := c.Host.Query().Where(host.NameIn(names...)).
		WithPorts(func(q *ent.PortQuery) { q.WithLinkA().WithLinkB() }).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("look up hosts: %w", err)
	}
	byName := make(map[string]*ent.Host, len(hosts))
	for _, h := range hosts {
		byName[h.Name] = h
	}
	return byName, nil
}

// checkPorts validates PORTS rows: a known host, a name new on it, a new MAC.
func checkPorts(ctx context.Context, c *ent.Client, recs []record) ([]*planned, error) {
	var names, macs []string
	for _, r := range recs {
		names = append(names, r.get("host"))
		if m := r.get("mac"); m != "" {
			macs = append(macs, strings.ToLower(m))
		}
	}
	hosts, err := hostPorts(ctx, c, names)
	if err != nil {
		return nil, err
	}
	taken, err := c.Port.Query().Where(port.MACIn(macs...)).WithHost().WithVirtualMachine().All(authz.Unrestricted(ctx))
	if err != nil {
		return nil, fmt.Errorf("look up MACs: %w", err)
	}
	takenMAC := map[string]string{}
	for _, p := range taken {
		owner := "a virtual machine"
		if p.Edges.Host != nil {
			owner = p.Edges.Host.Name + ":" + p.Name
		}
		takenMAC[p.MAC] = owner
	}
	seen, seenMAC := map[string]int{}, map[string]int{}
	var out []*planned
	for _, rec := range recs {
		rc := newRow(rec, rec.get("host")+":"+rec.get("name"))
		p := &portRow{name: rc.required("name")}
		hostName := rc.required("host")
		h := hosts[hostName]
		if hostName != "" && h == nil {
			rc.fail("host", "no device %s", hostName)
		}
		if p.name != "" {
			if err := call(port.NameValidator, p.name); err != nil {
				rc.fail("name", "%v", err)
			}
			if h != nil {
				p.hostID = h.ID
				for _, existing := range h.Edges.Ports {
					if existing.Name == p.name {
						rc.fail("name", "%s already has a port %s", h.Name, p.name)
					}
				}
			}
			key := hostName + ":" + p.name
			if line, dup := seen[key]; dup {
				rc.fail("name", "%s is also on row %d", key, line)
			}
			seen[key] = rec.line
		}
		p.kind = enum(rc, "kind", port.KindValidator, []port.Kind{port.KindPhysical, port.KindBond, port.KindVirtual})
		if m := rec.get("mac"); m != "" {
			rec.values["mac"] = strings.ToLower(m)
			if p.mac = rc.str("mac", port.MACValidator); p.mac != nil {
				if owner, ok := takenMAC[*p.mac]; ok {
					rc.fail("mac", "%s is the MAC of %s", *p.mac, owner)
				} else if line, dup := seenMAC[*p.mac]; dup {
					rc.fail("mac", "%s is also on row %d", *p.mac, line)
				}
				seenMAC[*p.mac] = rec.line
			}
		}
		p.speed = rc.integer("speed_mbps", port.SpeedMbpsValidator)
		p.mtu = rc.integer("mtu", port.MtuValidator)
		p.vlan = rc.integer("vlan", port.VlanValidator)
		p.describe = rc.str("description", port.DescriptionValidator)
		out = append(out, &planned{row: rc.row, create: p.create})
	}
	return out, nil
}

func (p *portRow) create(ctx context.Context, c *ent.Client) (ent.Noder, int, error) {
	rec, err := c.Port.Create().SetHostID(p.hostID).SetName(p.name).SetNillableKind(p.kind).
		SetNillableMAC(p.mac).SetNillableSpeedMbps(p.speed).SetNillableMtu(p.mtu).SetNillableVlan(p.vlan).
		SetNillableDescription(p.describe).Save(ctx)
	if err != nil {
		return nil, 0, err
	}
	return rec, rec.ID, nil
}

// exportPorts writes every port of a device the viewer may see (VM NICs are not cabling).
func exportPorts(ctx context.Context, c *ent.Client) ([][]string, error) {
	ports, err := c.Port.Query().Where(port.HasHost()).
		WithHost(func(q *ent.HostQuery) { q.Select(host.FieldName) }).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("list ports: %w", err)
	}
	sortPorts(ports)
	rows := make([][]string, 0, len(ports))
	for _, p := range ports {
		rows = append(rows, []string{p.Edges.Host.Name, p.Name, string(p.Kind), p.MAC, optInt(p.SpeedMbps),
			fmt.Sprint(p.Mtu), optInt(p.Vlan), p.Description})
	}
	return rows, nil
}

// optInt writes 0, an unset optional number, as an empty cell.
func optInt(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprint(n)
}
