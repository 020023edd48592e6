package dcimimport

import (
	"context"
	"fmt"
	"strconv"

	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/host"
	"github.com/virtflow/virtflow/ent/link"
	"github.com/virtflow/virtflow/ent/port"
)

var (
	cableRequired = []string{"a_host", "a_port", "b_host", "b_port"}
	cableOptional = []string{"kind", "status", "label", "length_m"}
)

// cableRow is a checked CABLES row.
type cableRow struct {
	a, b    int
	kind    *link.Kind
	status  *link.Status
	label   *string
	lengthM *float64
}

// checkCables validates CABLES rows: both ends are known, distinct ports that end no cable
// yet, nor another row's.
func checkCables(ctx context.Context, c *ent.Client, recs []record) ([]*planned, error) {
	var names []string
	for _, r := range recs {
		names = append(names, r.get("a_host"), r.get("b_host"))
	}
	hosts, err := hostPorts(ctx, c, names)
	if err != nil {
		return nil, err
	}
	used := map[int]int{} // port id -> row that cables it
	var out []*planned
	for _, rec := range recs {
		rc := newRow(rec, rec.get("a_host")+":"+rec.get("a_port")+" → "+rec.get("b_host")+":"+rec.get("b_port"))
		l := &cableRow{}
		end := func(hostCol, portCol string) int {
			hn, pn := rc.required(hostCol), rc.required(portCol)
			if hn == "" || pn == "" {
				return 0
			}
			h := hosts[hn]
			if h == nil {
				rc.fail(hostCol, "no device %s", hn)
				return 0
			}
			var p *ent.Port
			for _, x := range h.Edges.Ports {
				if x.Name == pn {
					p = x
				}
			}
			switch {
			case p == nil:
				rc.fail(portCol, "%s has no port %s", hn, pn)
				return 0
			case p.Edges.LinkA != nil || p.Edges.LinkB != nil:
				rc.fail(portCol, "%s:%s is already cabled", hn, pn)
			default:
				if line, dup := used[p.ID]; dup {
					rc.fail(portCol, "%s:%s is also cabled on row %d", hn, pn, line)
				}
			}
			return p.ID
		}
		l.a = end("a_host", "a_port")
		l.b = end("b_host", "b_port")
		if l.a != 0 && l.a == l.b {
			rc.fail("b_port", "a cable cannot connect a port to itself")
		}
		for _, id := range []int{l.a, l.b} {
			if _, dup := used[id]; id != 0 && !dup {
				used[id] = rec.line
			}
		}
		l.kind = enum(rc, "kind", link.KindValidator, []link.Kind{link.KindCopper, link.KindFiber, link.KindDac, link.KindVirtual})
		l.status = enum(rc, "status", link.StatusValidator, []link.Status{link.StatusPlanned, link.StatusConnected, link.StatusDecommissioning})
		l.label = rc.str("label", link.LabelValidator)
		if v := rec.get("length_m"); v != "" {
			f, err := strconv.ParseFloat(v, 64)
			switch {
			case err != nil:
				rc.fail("length_m", "%q is not a number", v)
			case call(link.LengthMValidator, f) != nil:
				rc.fail("length_m", "%v", call(link.LengthMValidator, f))
			default:
				l.lengthM = &f
			}
		}
		out = append(out, &planned{row: rc.row, create: l.create})
	}
	return out, nil
}

func (l *cableRow) create(ctx context.Context, c *ent.Client) (ent.Noder, int, error) {
	rec, err := c.Link.Create().SetAPortID(l.a).SetBPortID(l.b).SetNillableKind(l.kind).
		SetNillableStatus(l.status).SetNillableLabel(l.label).SetNillableLengthM(l.lengthM).Save(ctx)
	if err != nil {
		return nil, 0, err
	}
	return rec, rec.ID, nil
}

// exportCables writes every cable between two devices' ports the viewer may see.
func exportCables(ctx context.Context, c *ent.Client) ([][]string, error) {
	onHost := func(q *ent.PortQuery) { q.WithHost(func(q *ent.HostQuery) { q.Select(host.FieldName) }) }
	links, err := c.Link.Query().
		Where(link.HasAPortWith(port.HasHost()), link.HasBPortWith(port.HasHost())).
		WithAPort(onHost).WithBPort(onHost).Order(link.ByID()).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("list cables: %w", err)
	}
	rows := make([][]string, 0, len(links))
	for _, l := range links {
		a, b := l.Edges.APort, l.Edges.BPort
		length := ""
		if l.LengthM != 0 {
			length = strconv.FormatFloat(l.LengthM, 'f', -1, 64)
		}
		rows = append(rows, []string{a.Edges.Host.Name, a.Name, b.Edges.Host.Name, b.Name, string(l.Kind), string(l.Status), l.Label, length})
	}
	return rows, nil
}
