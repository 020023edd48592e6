package diagram

import (
	"context"
	"fmt"

	"entgo.io/ent/dialect/sql"

	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/alert"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/predicate"
	"github.com/virtflow/virtflow/ent/virtualmachine"
)

// add counts n open alerts of severity s.
func (a *AlertCounts) add(s alert.Severity, n int) {
	switch s {
	case alert.SeverityFatal:
		a.Fatal += n
	case alert.SeverityCritical:
		a.Critical += n
	case alert.SeverityWarning:
		a.Warning += n
	}
	a.setWorst()
}

// merge adds the counts of b.
func (a *AlertCounts) merge(b AlertCounts) {
	a.Fatal += b.Fatal
	a.Critical += b.Critical
	a.Warning += b.Warning
	a.setWorst()
}

func (a *AlertCounts) setWorst() {
	var w alert.Severity
	switch {
	case a.Fatal > 0:
		w = alert.SeverityFatal
	case a.Critical > 0:
		w = alert.SeverityCritical
	case a.Warning > 0:
		w = alert.SeverityWarning
	default:
		a.Worst = nil
		return
	}
	a.Worst = &w
}

// hostAlerts counts the open alerts of hosts, by host id, in one grouped statement. An alert
// counts for a host when it names the host or the host's compute node (nodeHost maps node ids
// to host ids); one naming both counts once. The predicate (alertsOf) chooses the alerts by
// their own foreign-key columns.
func hostAlerts(ctx context.Context, c *ent.Client, where predicate.Alert, nodeHost map[int]int) (map[int]AlertCounts, error) {
	var rows []struct {
		Host     nullInt `sql:"host_alerts"`
		Node     nullInt `sql:"compute_node_alerts"`
		Severity string  `sql:"severity"`
		N        int     `sql:"n"`
	}
	err := c.Alert.Query().
		Where(alert.StatusEQ(alert.StatusOpen), where).
		Modify(func(s *sql.Selector) {
			h, n, sev := s.C(alert.HostColumn), s.C(alert.NodeColumn), s.C(alert.FieldSeverity)
			s.Select(h, n, sev, sql.As(sql.Count("*"), "n")).GroupBy(h, n, sev)
		}).
		Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("count open alerts: %w", err)
	}
	out := map[int]AlertCounts{}
	for _, r := range rows {
		h := fk(r.Host)
		if h == 0 {
			h = nodeHost[fk(r.Node)]
		}
		if h == 0 {
			continue
		}
		a := out[h]
		a.add(alert.Severity(r.Severity), r.N)
		out[h] = a
	}
	return out, nil
}

// alertsOf selects the alerts naming one of the hosts or nodes given by id.
func alertsOf(hostIDs, nodeIDs []int) predicate.Alert {
	return func(s *sql.Selector) {
		var ps []*sql.Predicate
		if len(hostIDs) > 0 {
			ps = append(ps, idIn(s, alert.HostColumn, hostIDs))
		}
		if len(nodeIDs) > 0 {
			ps = append(ps, idIn(s, alert.NodeColumn, nodeIDs))
		}
		if len(ps) == 0 {
			s.Where(sql.False())
			return
		}
		s.Where(sql.Or(ps...))
	}
}

// vmCounts counts the VMs (all but DELETED ones) by the foreign key column (the VM's node or
// cluster) among ids, in one grouped statement.
func vmCounts(ctx context.Context, c *ent.Client, column string, ids []int) (map[int]int, error) {
	out := map[int]int{}
	if len(ids) == 0 {
		return out, nil
	}
	var rows []struct {
		Owner nullInt `sql:"owner"`
		N     int     `sql:"n"`
	}
	err := c.VirtualMachine.Query().
		Where(virtualmachine.StatusNEQ(virtualmachine.StatusDeleted), func(s *sql.Selector) {
			s.Where(idIn(s, column, ids))
		}).
		Modify(func(s *sql.Selector) {
			s.Select(sql.As(s.C(column), "owner"), sql.As(sql.Count("*"), "n")).GroupBy(s.C(column))
		}).
		Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("count VMs: %w", err)
	}
	for _, r := range rows {
		out[fk(r.Owner)] = r.N
	}
	return out, nil
}

// add adds a node's capacity and allocation.
func (c *Capacity) add(n nodeCapacity) {
	c.Nodes++
	if n.Status == computenode.StatusReady {
		c.ReadyNodes++
	}
	c.CPUCapacity += n.CPUCapacity
	c.CPUAllocated += n.CPUAllocated
	c.MemoryCapacityMB += n.MemoryCapacityMB
	c.MemoryAllocatedMB += n.MemoryAllocatedMB
	c.DiskCapacityGB += n.DiskCapacityGB
	c.DiskAllocatedGB += n.DiskAllocatedGB
}

// merge adds the capacity of b.
func (c *Capacity) merge(b Capacity) {
	c.Nodes += b.Nodes
	c.ReadyNodes += b.ReadyNodes
	c.CPUCapacity += b.CPUCapacity
	c.CPUAllocated += b.CPUAllocated
	c.MemoryCapacityMB += b.MemoryCapacityMB
	c.MemoryAllocatedMB += b.MemoryAllocatedMB
	c.DiskCapacityGB += b.DiskCapacityGB
	c.DiskAllocatedGB += b.DiskAllocatedGB
}

// nodeSummary is the state and allocation of a compute node with its VM count.
func nodeSummary(n *ent.ComputeNode, vms int) *NodeSummary {
	return &NodeSummary{
		ID:                n.ID,
		Name:              n.Name,
		Status:            n.Status,
		Cordoned:          !n.Schedulable,
		CPUCapacity:       n.CPUCapacity,
		CPUAllocated:      n.CPUAllocated,
		MemoryCapacityMB:  n.MemoryCapacityMB,
		MemoryAllocatedMB: n.MemoryAllocatedMB,
		VMCount:           vms,
	}
}
