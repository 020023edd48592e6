package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"

	"github.com/virtflow/virtflow/ent/schema/fieldtype"
)

// ReservationInterval is one row of the reservation ledger (package metering): a resource
// reserved from started_at to ended_at (NULL while it still is) in one state — the size, host
// model and classes that decide its price. Every change of a reservation (create, resize,
// move, delete) closes the open interval and opens the next one at the same second, in the
// transaction of the change, so a resource's intervals tile its lifetime with no gap and no
// overlap. Rows are written by the system only and never edited but to close them.
type ReservationInterval struct {
	ent.Schema
}

// Mixin of the ReservationInterval.
func (ReservationInterval) Mixin() []ent.Mixin { return []ent.Mixin{AuthzMixin{}} }

// Fields of the ReservationInterval.
func (ReservationInterval) Fields() []ent.Field {
	return []ent.Field{
		field.Int("tenant_id").Immutable(),
		field.Enum("kind").Values("VIRTUAL_MACHINE", "VOLUME", "IP_ADDRESS", "LOAD_BALANCER", "SNAPSHOT", "BACKUP").Immutable(),
		field.Int("resource_id").Immutable(),
		field.String("resource_name").Default("").Immutable(),
		field.String("region").Default("").Immutable().Comment("the region's name"),
		field.String("flavor").Default("").Immutable().Comment("the flavor's name (VMs)"),
		field.Int("vcpus").Default(0).Immutable(),
		field.Int64("memory_mb").Default(0).Immutable(),
		field.String("cpu_policy").Default("").Immutable().Comment("SHARED or DEDICATED (VMs)"),
		field.String("host_model").Default("").Immutable().Comment("the model of the host the VM is placed on"),
		field.String("exclusive").Default("NONE").Immutable().Comment("NONE, HOST or NUMA_NODE: a whole-machine flavor"),
		field.String("io_class").Default("").Immutable().Comment("the IO limit class: a volume's type, a flavor's limits"),
		field.Int64("quantity").Default(1).Immutable().Comment("units reserved: GiB for a volume, a snapshot or a backup, 1 otherwise"),
		field.Time("started_at").Immutable(),
		field.Time("ended_at").Optional().Nillable().Comment("NULL while the resource is still reserved"),
	}
}

// Indexes of the ReservationInterval: at most one open interval per resource (the database
// refuses a second), and the report's range scans.
func (ReservationInterval) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("kind", "resource_id").Unique().Annotations(entsql.IndexWhere("ended_at IS NULL")),
		index.Fields("kind", "resource_id", "started_at"),
		index.Fields("tenant_id", "started_at"),
		index.Fields("started_at"),
	}
}

// Annotations of the ReservationInterval: not in the generic graph (package metering reads
// it); ended_at never precedes started_at.
func (ReservationInterval) Annotations() []schema.Annotation {
	return []schema.Annotation{
		entgql.Skip(entgql.SkipAll),
		&entsql.Annotation{Checks: map[string]string{"reservation_interval_order": "ended_at IS NULL OR ended_at >= started_at"}},
	}
}

// Price is one effective-dated entry of the price list: from effective_from on (until the
// next entry of the same kind and key) one unit-hour of kind/key costs amount_micro
// millionths of the currency, or, for a HOST_MODEL entry, the VM prices on that model are
// multiplied by multiplier_ppm millionths. Entries are added, never edited: a price change
// is a new entry, and one in the middle of a month splits the intervals it crosses.
type Price struct {
	ent.Schema
}

// Mixin of the Price.
func (Price) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}, AuthzMixin{}} }

// Fields of the Price.
func (Price) Fields() []ent.Field {
	return []ent.Field{
		field.Enum("kind").Values("FLAVOR", "VCPU", "MEMORY_GB", "HOST_MODEL", "IO_CLASS", "VOLUME_GB",
			"IP_ADDRESS", "SNAPSHOT_GB", "BACKUP_GB", "LOAD_BALANCER", "MACHINE", "MACHINE_NUMA_NODE").Immutable(),
		field.String("key").Default("").MaxLen(128).Immutable().
			Comment("flavor name, SHARED/DEDICATED, host model, IO class or volume type; empty for IP_ADDRESS, LOAD_BALANCER and MEMORY_GB"),
		field.Time("effective_from").Immutable(),
		field.Int64("amount_micro").Default(0).NonNegative().Immutable().Comment("per unit-hour, in millionths of the currency"),
		field.Int64("multiplier_ppm").Default(1_000_000).NonNegative().Immutable().Comment("HOST_MODEL only: 1,000,000 is ×1"),
		field.String("currency").Default("EUR").MaxLen(3).Immutable(),
	}
}

// Indexes of the Price: one entry per kind, key and instant.
func (Price) Indexes() []ent.Index {
	return []ent.Index{index.Fields("kind", "key", "effective_from").Unique()}
}

// Annotations of the Price: read and written through package metering.
func (Price) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.Skip(entgql.SkipAll)}
}

// Invoice is a tenant's FINAL bill for one calendar month (UTC), written once after the
// month closed and its grace period passed, never changed afterwards (a hook refuses every
// update and delete): what rating the ledger later says differently is an adjustment on a
// later invoice. The month still running is a DRAFT computed when read, not stored.
type Invoice struct {
	ent.Schema
}

// Mixin of the Invoice.
func (Invoice) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}, AuthzMixin{}} }

// Fields of the Invoice.
func (Invoice) Fields() []ent.Field {
	return []ent.Field{
		field.Int("tenant_id").Immutable(),
		field.Time("period_start").Immutable(),
		field.String("currency").Default("EUR").Immutable(),
		field.JSON("lines", []fieldtype.InvoiceLine{}).Immutable(),
		field.JSON("adjustments", []fieldtype.InvoiceAdjustment{}).Optional().Immutable(),
		field.Int64("total_micro").Immutable().Comment("lines plus adjustments, in millionths of the currency"),
	}
}

// Indexes of the Invoice: one per tenant and month.
func (Invoice) Indexes() []ent.Index {
	return []ent.Index{index.Fields("tenant_id", "period_start").Unique()}
}

// Annotations of the Invoice: read through package metering.
func (Invoice) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.Skip(entgql.SkipAll)}
}

// Hooks of the Invoice: a final invoice is immutable.
func (Invoice) Hooks() []ent.Hook {
	return []ent.Hook{immutableInvoice()}
}
