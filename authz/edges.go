package authz

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"entgo.io/ent"
	"entgo.io/ent/entql"

	"github.com/virtflow/virtflow/domain/apierr"
	entgen "github.com/virtflow/virtflow/ent"
)

// checkEdges authorizes the other end of every edge mutation m touches. An edge joins two
// records, so a mutation that adds, removes or clears one changes both:
// "B's volume now belongs to A's VM" is as much a write of the volume as of the VM. The rule
// checkMutation applies to the record being changed is therefore applied to the other end
// of every edge the mutation touches too:
//
//   - Linking or unlinking a record — create inputs' xxxIDs and O2M/M2M xxxID, update inputs'
//     addXxxIDs/removeXxxIDs — needs the viewer to be allowed to write that record: the same
//     WriteScope an update of the record itself gets.
//   - Clearing an edge (clearXxx), or pointing a unique edge elsewhere, unlinks the records it
//     led to: each of them must be writable too.
//   - References need only be readable: a unique edge stored in the changed record's own row
//     (its foreign key, so the target's row does not change) into the catalog (a VM's region,
//     flavor, image), a user (a role binding's or token's user) or the scope the viewer writes
//     in (its own tenant for tenant roles, its own node for an agent; edgesWithin pins those);
//     and a tenant, named by a record the viewer writes in full (an operator's notice to a
//     tenant). A maintainer, who writes only its own records, cannot hand one to a tenant.
//
// A refusal is FORBIDDEN and names the edge; nothing is written. The checks cost one query
// per target type and kind of check (and one per cleared edge), whatever the number of ids.
// The system viewer and privacy.DecisionContext(ctx, privacy.Allow) skip them, as they skip
// every rule; for the admin every scope is "all", so no query runs.
func checkEdges(ctx context.Context, m ent.Mutation, v *Viewer) error {
	typ := m.Type()
	touched := slices.Concat(m.AddedEdges(), m.RemovedEdges(), m.ClearedEdges())
	if len(touched) == 0 || m.Op().Is(ent.OpDelete|ent.OpDeleteOne) {
		return nil
	}
	cm, ok := m.(interface{ Client() *entgen.Client })
	if !ok {
		return apierr.Forbidden("you may not change %s", typ)
	}
	c := cm.Client()
	create := m.Op().Is(ent.OpCreate)

	// targets gathers the ids each check needs, per target type: one query each.
	type check struct {
		typ   string
		write bool
	}
	targets := map[check][]int{}
	edgeOf := map[check]string{} // an edge that needs the check, for the message
	var unlinked []string        // edges whose current targets must be writable
	add := func(name string, e entgen.EdgeInfo, ids []ent.Value) error {
		k := check{typ: e.Target, write: !isReference(v, typ, e)}
		for _, raw := range ids {
			id, ok := raw.(int)
			if !ok {
				return apierr.Forbidden("you may not set %s %v", name, raw)
			}
			if !slices.Contains(targets[k], id) {
				targets[k] = append(targets[k], id)
			}
		}
		edgeOf[k] = name
		return nil
	}
	for _, name := range slices.Compact(slices.Sorted(slices.Values(touched))) {
		e, ok := entgen.Edges[typ][name]
		if !ok {
			return apierr.Forbidden("you may not change the %s of %s", name, typ)
		}
		if err := add(name, e, m.AddedIDs(name)); err != nil {
			return err
		}
		if err := add(name, e, m.RemovedIDs(name)); err != nil {
			return err
		}
		replaced := e.Unique && len(m.AddedIDs(name)) > 0
		if !create && (m.EdgeCleared(name) || replaced) && !isReference(v, typ, e) {
			unlinked = append(unlinked, name)
		}
	}

	keys := make([]check, 0, len(targets))
	for k := range targets {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].typ < keys[j].typ || keys[i].typ == keys[j].typ && keys[i].write })
	for _, k := range keys {
		ok, err := mayLink(ctx, c, v, k.typ, k.write, targets[k])
		if err != nil {
			return err
		}
		if !ok {
			what := "change"
			if !k.write {
				what = "read"
			}
			return apierr.Forbidden("you may not link or unlink %s %v through the %s of %s: you may not %s them all",
				k.typ, targets[k], edgeOf[k], typ, what)
		}
	}
	for _, name := range unlinked {
		if err := mayUnlinkAll(ctx, m, c, v, name); err != nil {
			return err
		}
	}
	return nil
}

// isReference reports whether linking typ to e's target needs only read access to the target
// (see checkEdges).
func isReference(v *Viewer, typ string, e entgen.EdgeInfo) bool {
	if !e.Unique || !e.OwnFK {
		return false
	}
	switch {
	case slices.Contains(Catalog, e.Target), e.Target == "User":
		return true
	case e.Target == "Tenant":
		// An operator addresses a notice, or assigns a network, to any tenant; a tenant role
		// names its own (edgesWithin); a maintainer cannot hand a record to a tenant.
		return v.Can(typ, ActWrite) || len(v.Domains("tenant", typ, ActWrite)) > 0
	case e.Target == "ComputeNode":
		return len(v.Domains("node", typ, ActWrite)) > 0
	}
	return false
}

// mayLink reports whether v may write (or, for a reference, read) every record of typ in
// ids, in one query.
func mayLink(ctx context.Context, c *entgen.Client, v *Viewer, typ string, write bool, ids []int) (bool, error) {
	scope := ReadScope
	if write {
		scope = WriteScope
	}
	p, all, err := scope(v, typ)
	if err != nil {
		return false, nil
	}
	return allInScope(ctx, c, typ, ids, p, all)
}

// allInScope reports whether every record of typ in ids matches the scope p (every record
// does when all), in one query.
func allInScope(ctx context.Context, c *entgen.Client, typ string, ids []int, p entql.P, all bool) (bool, error) {
	if all {
		return true, nil
	}
	n, err := c.CountWhere(ctx, typ, ids, p)
	if err != nil {
		return false, fmt.Errorf("check %s %v: %w", typ, ids, err)
	}
	return n == len(ids), nil
}

// mayUnlinkAll checks that every record edge name of the records m changes leads to today is
// one v may write, as clearing the edge (or pointing a unique edge elsewhere) unlinks it. The
// changed records outside the viewer's own write scope are left to checkMutation, which does
// not find them.
func mayUnlinkAll(ctx context.Context, m ent.Mutation, c *entgen.Client, v *Viewer, name string) error {
	typ := m.Type()
	e := entgen.Edges[typ][name]
	ider, ok := m.(interface {
		IDs(context.Context) ([]int, error)
	})
	if !ok {
		return apierr.Forbidden("you may not clear the %s of %s", name, typ)
	}
	ids, err := ider.IDs(ctx)
	if err != nil || len(ids) == 0 {
		return err
	}
	target, all, err := WriteScope(v, e.Target)
	if all {
		return nil
	}
	linked := entql.HasEdge(name)
	if err == nil {
		linked = entql.HasEdgeWith(name, entql.Not(target))
	}
	if own, all, err := WriteScope(v, typ); err != nil {
		return err
	} else if !all {
		linked = entql.And(own, linked)
	}
	n, err := c.CountWhere(ctx, typ, ids, linked)
	if err != nil {
		return fmt.Errorf("check the %s of %s %v: %w", name, typ, ids, err)
	}
	if n > 0 {
		return apierr.Forbidden("you may not unlink the %s of %s: one of them is not yours to change", name, typ)
	}
	return nil
}

// MayWrite reports whether the viewer of ctx may update or delete every record of typ
// (an ent type name: "Volume") in ids, by the WriteScope its own update would get, in one
// query. A viewer who may change no record of typ at all gets WriteScope's error
// (FORBIDDEN, UNAUTHENTICATED) as the error; one whose scope leaves some of ids out gets
// false, which callers answer with NOT_FOUND, as an update outside the scope is. A domain
// check uses it before it says anything about records it read as the system: an error
// names only what the viewer may change (issue 23).
func MayWrite(ctx context.Context, c *entgen.Client, typ string, ids ...int) (bool, error) {
	p, all, err := WriteScope(FromContext(ctx), typ)
	if err != nil {
		return false, err
	}
	return allInScope(ctx, c, typ, ids, p, all)
}
