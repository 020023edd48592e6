package ipam

import (
	"context"
	"fmt"
	"net/netip"

	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/sql"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/network"
)

// DefaultVRF is the routing scope of a network that names none. Every network belongs to
// exactly one scope (Network.vrf); prefixes of one scope never overlap, while two scopes may
// hold the same prefix — two tenants' private 10.0.0.0/24, routed apart.
const DefaultVRF = "global"

// scopeLockClass is the first key of the PostgreSQL advisory locks that stand for routing
// scopes (pg_advisory_xact_lock(class, hashtext(vrf))); its bytes spell "ipvr". The
// two-key form lives in a key space of its own, apart from the one-key lock of migrations.
const scopeLockClass int32 = 0x69707672

// checkScope refuses prefix in routing scope vrf when it overlaps the prefix of another network
// of that scope (self is the network being updated, 0 on create): CONFLICT on cidr. The other
// network is named only when the viewer may read it, so a tenant learns nothing of another
// tenant's networks but that the space is taken.
//
// Why a lock and how: two transactions that each create 10.0.0.0/24 in one scope would both
// read "no overlap" and both insert, and no unique index can say "overlaps". So checkScope first
// locks the scope for the rest of the transaction, and every create or prefix change in that
// scope takes its turn between reading the scope's prefixes and writing its own:
//
//   - PostgreSQL: a transaction-level advisory lock keyed by the scope's name
//     (pg_advisory_xact_lock), i.e. a lock on the scope as if it were a row. It needs no scope
//     table and no extension; an exclusion constraint (EXCLUDE USING gist (vrf WITH =,
//     (cidr::cidr) inet_ops WITH &&)) would say the same but needs btree_gist, a hand-written
//     migration outside ent's schema, and would stay unknown to the embedded SQLite mode.
//     The lock waits; it does not fail, so the second writer sees the first one's prefix
//     once that commits and gets CONFLICT (or succeeds, if the first rolled back).
//   - SQLite (the embedded mode): VirtFlow opens its transactions with BEGIN IMMEDIATE, so
//     writers run one at a time and the read-check-write cannot interleave.
//
// Every writer of networks in VirtFlow runs in a transaction (each GraphQL mutation, the demo
// loader, the importer). A write outside any transaction is still checked, but the lock ends
// with its statement, so two such writers racing are not serialized.
func checkScope(ctx context.Context, c *ent.Client, self int, vrf string, prefix netip.Prefix) error {
	sys := authz.Unrestricted(ctx)
	if err := lockScope(sys, c, vrf); err != nil {
		return err
	}
	q := c.Network.Query().Where(network.Vrf(vrf))
	if self != 0 {
		q.Where(network.IDNEQ(self))
	}
	others, err := q.Select(network.FieldID, network.FieldCidr).All(sys)
	if err != nil {
		return fmt.Errorf("list the prefixes of routing scope %q: %w", vrf, err)
	}
	for _, o := range others {
		p, err := netip.ParsePrefix(o.Cidr)
		if err != nil || !p.Overlaps(prefix) {
			continue
		}
		msg := fmt.Sprintf("%s overlaps a prefix already used in routing scope (vrf) %q; choose another prefix or another vrf", prefix, vrf)
		if visible, _ := c.Network.Query().Where(network.ID(o.ID)).Select(network.FieldName).Only(ctx); visible != nil {
			msg = fmt.Sprintf("%s overlaps %s of network %s in routing scope (vrf) %q; choose another prefix or another vrf", prefix, o.Cidr, visible.Name, vrf)
		}
		return &apierr.Error{Code: apierr.CodeConflict, Field: "cidr", Message: msg}
	}
	return nil
}

// lockScope locks routing scope vrf for the rest of the transaction (see checkScope).
func lockScope(ctx context.Context, c *ent.Client, vrf string) error {
	var d string
	// The dialect is the query builder's to know: a probe that reads nothing asks it.
	if _, err := c.Network.Query().Where(network.ID(0)).Modify(func(s *sql.Selector) { d = s.Dialect() }).IDs(ctx); err != nil {
		return fmt.Errorf("lock routing scope %q: %w", vrf, err)
	}
	if d != dialect.Postgres {
		return nil // SQLite: BEGIN IMMEDIATE already made this the only writer
	}
	if _, err := c.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1, hashtext($2))", scopeLockClass, vrf); err != nil {
		return fmt.Errorf("lock routing scope %q: %w", vrf, err)
	}
	return nil
}
