package diagram

import (
	"context"
	"fmt"

	"entgo.io/ent/dialect/sql"

	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/assignment"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/virtualmachine"
)

// runsOnRow is a VM on the host of its compute node, through the VM's assignment there (the
// record that hands the VM to that node's agent; it is the id of the RUNS_ON edge).
type runsOnRow struct {
	Assignment int `sql:"assignment_id"`
	VM         int `sql:"vm_id"`
	Host       int `sql:"host_id"`
}

// scanRunsOn reads, in one statement, which hosts the VMs vms run on and which VMs run on the
// hosts hosts: VMs assigned to a compute node of the host. The viewer's privacy applies to the
// VMs; the hosts are only added to a diagram through loadHosts, which applies it to them.
func scanRunsOn(ctx context.Context, c *ent.Client, vms, hosts []int) ([]runsOnRow, error) {
	if len(vms) == 0 && len(hosts) == 0 {
		return nil, nil
	}
	var rows []runsOnRow
	err := c.VirtualMachine.Query().Modify(func(s *sql.Selector) {
		cn := sql.Table(computenode.Table).As("cn")
		a := sql.Table(assignment.Table).As("a")
		s.Join(cn).On(s.C(virtualmachine.NodeColumn), cn.C(computenode.FieldID))
		s.Join(a).OnP(sql.And(
			sql.ColumnsEQ(a.C(assignment.VirtualMachineColumn), s.C(virtualmachine.FieldID)),
			sql.ColumnsEQ(a.C(assignment.NodeColumn), cn.C(computenode.FieldID)),
		))
		var or []*sql.Predicate
		if len(vms) > 0 {
			or = append(or, idIn(s, virtualmachine.FieldID, vms))
		}
		if len(hosts) > 0 {
			or = append(or, sql.InInts(cn.C(computenode.HostColumn), hosts...))
		}
		s.Where(sql.Or(or...))
		s.Select()
		s.AppendSelectExprAs(sql.Expr("MAX("+a.C(assignment.FieldID)+")"), "assignment_id")
		s.AppendSelectAs(s.C(virtualmachine.FieldID), "vm_id")
		s.AppendSelectAs(cn.C(computenode.HostColumn), "host_id")
		s.GroupBy(s.C(virtualmachine.FieldID), cn.C(computenode.HostColumn))
		s.OrderBy(s.C(virtualmachine.FieldID))
	}).Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("load the hosts VMs run on: %w", err)
	}
	return rows, nil
}
