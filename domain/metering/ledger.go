package metering

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/flavor"
	"github.com/virtflow/virtflow/ent/host"
	"github.com/virtflow/virtflow/ent/region"
	"github.com/virtflow/virtflow/ent/reservationinterval"
	"github.com/virtflow/virtflow/ent/virtualmachine"
)

// Kind is the kind of a reserved resource.
type Kind string

// The kinds of reserved resources.
const (
	KindVM           Kind = "VIRTUAL_MACHINE"
	KindVolume       Kind = "VOLUME"
	KindIPAddress    Kind = "IP_ADDRESS"
	KindLoadBalancer Kind = "LOAD_BALANCER"
	// KindSnapshot is a VM disk snapshot; Quantity is its GiB (metered as GiB-hours).
	KindSnapshot Kind = "SNAPSHOT"
	// KindBackup is a VM backup on the backup target; Quantity is its GiB (GiB-hours).
	KindBackup Kind = "BACKUP"
)

// Exclusivity is the SQL expression, over the flavor row aliased f, that says whether a VM
// takes a whole machine (HOST), one NUMA node of it (NUMA_NODE) or shares it (NONE). Such
// VMs are priced by the machine's own price (MACHINE, MACHINE_NUMA_NODE entries keyed by the
// host model) instead of by their flavor: it is the flavor's exclusive column
// (Flavor.exclusive).
const Exclusivity = "f.exclusive"

// At is the second a change is recorded at: the ledger is exact to the second.
func At(t time.Time) time.Time { return t.UTC().Truncate(time.Second) }

// args collects the positional arguments of a statement and writes their placeholders
// ($1, $2, …: PostgreSQL's, which SQLite reads as numbered parameters too).
type args []any

func (a *args) p(v any) string {
	*a = append(*a, v)
	return fmt.Sprintf("$%d", len(*a))
}

func (a *args) ints(ids []int) string {
	ps := make([]string, len(ids))
	for i, id := range ids {
		ps[i] = a.p(id)
	}
	return strings.Join(ps, ", ")
}

// OpenVMs opens the intervals of placed VMs at now, reading what they reserve (tenant,
// region, flavor, size, CPU policy, IO limits, host model) from their rows in one
// INSERT … SELECT: a create costs one statement more. A VM not placed on a node reserves
// nothing and gets no interval. Run it in the transaction that placed them.
func OpenVMs(ctx context.Context, c *ent.Client, now time.Time, ids ...int) error {
	if len(ids) == 0 {
		return nil
	}
	var a args
	// COALESCE gives the parameter the column's type in PostgreSQL (a bare parameter in a
	// select list is text there); now is never NULL.
	at := a.p(At(now))
	io := func(col string) string { return "COALESCE(CAST(f." + col + " AS TEXT), '-')" }
	ioClass := fmt.Sprintf("CASE WHEN f.%s IS NULL AND f.%s IS NULL AND f.%s IS NULL THEN '' ELSE 'iops=' || %s || ',mbps=' || %s || ',net=' || %s END",
		flavor.FieldDiskIopsLimit, flavor.FieldDiskMbpsLimit, flavor.FieldNetworkMbpsLimit,
		io(flavor.FieldDiskIopsLimit), io(flavor.FieldDiskMbpsLimit), io(flavor.FieldNetworkMbpsLimit))
	q := fmt.Sprintf(`INSERT INTO %s (tenant_id, kind, resource_id, resource_name, region, flavor, vcpus, memory_mb,
  cpu_policy, host_model, exclusive, io_class, quantity, started_at)
SELECT v.%s, '%s', v.id, v.%s, COALESCE(r.%s, ''), f.%s, v.%s, v.%s, f.%s, COALESCE(h.%s, ''), %s, %s, 1,
  COALESCE(%s, v.created_at)
FROM %s v JOIN %s f ON f.id = v.%s
JOIN %s n ON n.id = v.%s
LEFT JOIN %s h ON h.id = n.%s
LEFT JOIN %s r ON r.id = v.%s
WHERE v.id IN (%s)`,
		reservationinterval.Table,
		virtualmachine.TenantColumn, KindVM, virtualmachine.FieldName, region.FieldName, flavor.FieldName,
		virtualmachine.FieldAllocatedVcpus, virtualmachine.FieldAllocatedMemoryMB, flavor.FieldCPUPolicy, host.FieldModel,
		Exclusivity, ioClass, at,
		virtualmachine.Table, flavor.Table, virtualmachine.FlavorColumn,
		computenode.Table, virtualmachine.NodeColumn,
		host.Table, computenode.HostColumn,
		region.Table, virtualmachine.RegionColumn,
		a.ints(ids))
	if _, err := c.ExecContext(ctx, q, a...); err != nil {
		return fmt.Errorf("ledger: open intervals of VMs %v: %w", ids, err)
	}
	return nil
}

// ReopenVMs records that what VMs reserve changed at now (a resize, a move): their open
// intervals end and the next ones start at the same second.
func ReopenVMs(ctx context.Context, c *ent.Client, now time.Time, ids ...int) error {
	if err := Close(ctx, c, now, KindVM, ids...); err != nil {
		return err
	}
	return OpenVMs(ctx, c, now, ids...)
}

// Close ends the open intervals of the resources at now: they are deleted, or about to
// change. An interval never ends before it started: closing in the second it opened leaves
// an interval of zero seconds.
func Close(ctx context.Context, c *ent.Client, now time.Time, kind Kind, ids ...int) error {
	if len(ids) == 0 {
		return nil
	}
	var a args
	at := a.p(At(now))
	atAgain := a.p(At(now))
	q := fmt.Sprintf(`UPDATE %s SET ended_at = CASE WHEN started_at > %s THEN started_at ELSE %s END
WHERE kind = %s AND resource_id IN (%s) AND ended_at IS NULL`,
		reservationinterval.Table, at, atAgain, a.p(string(kind)), a.ints(ids))
	if _, err := c.ExecContext(ctx, q, a...); err != nil {
		return fmt.Errorf("ledger: close intervals of %s %v: %w", kind, ids, err)
	}
	return nil
}

// Interval is what Open records of a resource other than a VM.
type Interval struct {
	Kind       Kind
	ResourceID int
	Name       string
	TenantID   int
	// RegionID is the region the resource is in, 0 when unknown.
	RegionID int
	// IOClass is the limit class the resource is priced by: a volume's type.
	IOClass string
	// Quantity is the units reserved: GiB for a volume; 0 means 1.
	Quantity int64
}

// Open opens the intervals of resources (volumes, addresses, load balancers) at now, in one
// INSERT whatever their number.
func Open(ctx context.Context, c *ent.Client, now time.Time, ivs ...Interval) error {
	if len(ivs) == 0 {
		return nil
	}
	var a args
	rows := make([]string, len(ivs))
	for i, iv := range ivs {
		if iv.Quantity == 0 {
			iv.Quantity = 1
		}
		rows[i] = fmt.Sprintf("(%s, %s, %s, %s, COALESCE((SELECT %s FROM %s WHERE id = %s), ''), '', 0, 0, '', '', 'NONE', %s, %s, %s)",
			a.p(iv.TenantID), a.p(string(iv.Kind)), a.p(iv.ResourceID), a.p(iv.Name),
			region.FieldName, region.Table, a.p(iv.RegionID), a.p(iv.IOClass), a.p(iv.Quantity), a.p(At(now)))
	}
	q := fmt.Sprintf(`INSERT INTO %s (tenant_id, kind, resource_id, resource_name, region, flavor, vcpus, memory_mb,
  cpu_policy, host_model, exclusive, io_class, quantity, started_at)
VALUES %s`, reservationinterval.Table, strings.Join(rows, ",\n"))
	if _, err := c.ExecContext(ctx, q, a...); err != nil {
		return fmt.Errorf("ledger: open intervals of %d %s: %w", len(ivs), ivs[0].Kind, err)
	}
	return nil
}
