package authz

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"entgo.io/ent"
	"entgo.io/ent/entql"

	"github.com/virtflow/virtflow/apierr"
	entgen "github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/privacy"
)

// Policy is the privacy policy every entity shares (ent/schema/authz.go).
func Policy() ent.Policy {
	return privacy.Policy{
		Query:    privacy.QueryPolicy{privacy.FilterFunc(filterQuery)},
		Mutation: privacy.MutationPolicy{privacy.MutationRuleFunc(checkMutation)},
	}
}

// filterQuery allows a read of typ and narrows it to the rows the viewer may see: all rows
// with a platform role that reads typ; the rows of the viewer's tenants, or of its node for
// an agent, otherwise. Anything else is FORBIDDEN, and no viewer at all UNAUTHENTICATED.
func filterQuery(ctx context.Context, f privacy.Filter) error {
	v := FromContext(ctx)
	typ := typeName(f, "Filter")
	switch {
	case v == nil:
		return apierr.Unauthenticated("sign in: send Authorization: Bearer <token>")
	case v.Can(typ, ActRead):
		return privacy.Allow
	}
	var scopes []entql.P
	if p := selfScope(typ, v); p != nil {
		scopes = append(scopes, p)
	}
	if ids := v.Domains("tenant", typ, ActRead); len(ids) > 0 {
		if slices.Contains(Catalog, typ) {
			return privacy.Allow
		}
		if p := tenantScope(typ, ids); p != nil {
			scopes = append(scopes, p)
		}
	}
	if ids := v.Domains("node", typ, ActRead); len(ids) > 0 {
		if slices.Contains(Catalog, typ) {
			return privacy.Allow
		}
		if p := nodeScope(typ, ids); p != nil {
			scopes = append(scopes, p)
		}
	}
	if len(scopes) == 0 {
		return apierr.Forbidden("you may not read %s", typ)
	}
	f.Where(anyOf(scopes))
	return privacy.Allow
}

// checkMutation allows a write of m's type when a platform role of the viewer writes it;
// limits it to the viewer's own resources for maintainers (write-own), to the viewer's
// tenants for tenant roles and to its node for agents; and denies it otherwise.
func checkMutation(ctx context.Context, m ent.Mutation) error {
	v := FromContext(ctx)
	typ := m.Type()
	switch {
	case v == nil:
		return apierr.Unauthenticated("sign in: send Authorization: Bearer <token>")
	case v.IsSystem():
		return privacy.Allow
	case v.ReadOnly:
		return apierr.Forbidden("this token is read-only")
	case v.Can(typ, ActWrite):
		return privacy.Allow
	}
	create := m.Op().Is(ent.OpCreate)
	if err := edgesReadable(ctx, m); err != nil {
		return err
	}
	if v.Can(typ, ActWriteOwn) && v.MaintainerID != 0 && !create {
		return restrict(ctx, m, maintainedScope(typ, v))
	}
	if ids := v.Domains("tenant", typ, ActWrite); len(ids) > 0 {
		if err := edgesWithin(m, "tenant", ids); err != nil {
			return err
		}
		if create {
			if len(m.AddedIDs("tenant")) == 0 {
				return apierr.Forbidden("a new %s must name one of your tenants", typ)
			}
			return privacy.Allow
		}
		return restrict(ctx, m, tenantScope(typ, ids))
	}
	if ids := v.Domains("node", typ, ActWrite); len(ids) > 0 {
		if err := edgesWithin(m, "node", ids); err != nil {
			return err
		}
		if create {
			if len(m.AddedIDs("node")) == 0 {
				return apierr.Forbidden("an agent may only write %s of its own node", typ)
			}
			return privacy.Allow
		}
		return restrict(ctx, m, nodeScope(typ, ids))
	}
	return apierr.Forbidden("you may not change %s", typ)
}

// edgesReadable refuses a mutation by a scoped viewer (maintainer, tenant, agent) that links
// the record to one the viewer cannot read — another tenant's volume, a host's physical port,
// a node — so nothing can be pulled into a viewer's scope through an edge. Global ids make
// one lookup per id enough, whatever its type.
func edgesReadable(ctx context.Context, m ent.Mutation) error {
	c, ok := m.(interface{ Client() *entgen.Client })
	if !ok {
		return apierr.Forbidden("you may not change %s", m.Type())
	}
	for _, edge := range m.AddedEdges() {
		for _, raw := range m.AddedIDs(edge) {
			id, ok := raw.(int)
			if !ok {
				return apierr.Forbidden("you may not set %s %v", edge, raw)
			}
			if _, err := c.Client().Noder(ctx, id); err != nil {
				if entgen.IsNotFound(err) {
					return apierr.Forbidden("you may not link %s %d", edge, id)
				}
				return err
			}
		}
	}
	return nil
}

// restrict narrows an update or delete to the rows p matches; rows outside it are not found.
func restrict(ctx context.Context, m ent.Mutation, p entql.P) error {
	if p == nil {
		return apierr.Forbidden("you may not change %s", m.Type())
	}
	return privacy.FilterFunc(func(_ context.Context, f privacy.Filter) error {
		f.Where(p)
		return privacy.Allow
	}).EvalMutation(ctx, m)
}

// edgesWithin refuses a mutation that points edge at a record outside ids (a VM moved to
// another tenant, an event filed against another node).
func edgesWithin(m ent.Mutation, edge string, ids []int) error {
	for _, id := range m.AddedIDs(edge) {
		n, ok := id.(int)
		if !ok || !slices.Contains(ids, n) {
			return apierr.Forbidden("you may not set %s %v", edge, id)
		}
	}
	return nil
}

func in(ids []int) []any {
	out := make([]any, len(ids))
	for i, id := range ids {
		out[i] = id
	}
	return out
}

func anyOf(ps []entql.P) entql.P {
	if len(ps) == 1 {
		return ps[0]
	}
	return entql.Or(ps[0], ps[1], ps[2:]...)
}

// tenantScope is the predicate selecting the rows of typ that belong to the tenants ids, or
// nil when typ has no tenant.
func tenantScope(typ string, ids []int) entql.P {
	own := entql.FieldIn("id", in(ids)...)
	switch typ {
	case "Tenant":
		return own
	case "User":
		return entql.HasEdgeWith("tenants", own)
	case "AuditLog":
		return entql.FieldIn("tenant_id", in(ids)...)
	case "Notice":
		return entql.Or(entql.FieldEQ("audience", "ALL"), entql.HasEdgeWith("tenant", own))
	case "Alert":
		// Fatal alerts are visible to the tenants they affect (SPEC.md §2): those with a live VM
		// on the alert's node, or on the node of the alert's host.
		affected := entql.HasEdgeWith("virtual_machines",
			entql.And(entql.FieldNEQ("status", "DELETED"), entql.HasEdgeWith("tenant", own)))
		return entql.And(entql.FieldEQ("severity", "FATAL"),
			entql.Or(entql.HasEdgeWith("node", affected), entql.HasEdgeWith("host", entql.HasEdgeWith("node", affected))))
	case "Port":
		return entql.HasEdgeWith("virtual_machine", entql.HasEdgeWith("tenant", own))
	case "IPAddress":
		return entql.HasEdgeWith("port", entql.HasEdgeWith("virtual_machine", entql.HasEdgeWith("tenant", own)))
	case "VirtualMachine", "Volume", "LoadBalancer", "RegionService", "GlobalService", "KubernetesCluster",
		"Quota", "UsageRecord", "Network", "APIToken", "RoleBinding":
		return entql.HasEdgeWith("tenant", own)
	}
	return nil
}

// selfScope is what every signed-in user may read of their own: their user, their tokens and
// role bindings, and notices addressed to them.
func selfScope(typ string, v *Viewer) entql.P {
	if v.UserID == 0 {
		return nil
	}
	me := entql.FieldEQ("id", v.UserID)
	switch typ {
	case "User":
		return me
	case "APIToken":
		return entql.HasEdgeWith("owner", me)
	case "RoleBinding", "Notice":
		return entql.HasEdgeWith("user", me)
	}
	return nil
}

// nodeScope is the predicate selecting the rows of typ that belong to the nodes ids.
func nodeScope(typ string, ids []int) entql.P {
	own := entql.FieldIn("id", in(ids)...)
	switch typ {
	case "ComputeNode":
		return own
	case "Assignment", "VirtualMachine", "Volume", "Event":
		return entql.HasEdgeWith("node", own)
	case "Port":
		return entql.HasEdgeWith("virtual_machine", entql.HasEdgeWith("node", own))
	case "IPAddress":
		return entql.HasEdgeWith("port", entql.HasEdgeWith("virtual_machine", entql.HasEdgeWith("node", own)))
	}
	return nil
}

// maintainedScope selects the resources of typ that name the viewer or one of its groups as
// maintainer; an alert is the maintainer's when its host or node is.
func maintainedScope(typ string, v *Viewer) entql.P {
	mine := entql.HasEdgeWith("maintainers", entql.FieldEQ("id", v.MaintainerID))
	if len(v.MaintainerGroupIDs) > 0 {
		mine = entql.Or(mine, entql.HasEdgeWith("maintainer_groups", entql.FieldIn("id", in(v.MaintainerGroupIDs)...)))
	}
	if typ == "Alert" {
		return entql.Or(entql.HasEdgeWith("host", mine), entql.HasEdgeWith("node", mine))
	}
	if !slices.Contains(Maintained, typ) {
		return nil
	}
	return mine
}

// typeName turns *ent.HostFilter into Host.
func typeName(v any, suffix string) string {
	s := fmt.Sprintf("%T", v)
	s = s[strings.LastIndexByte(s, '.')+1:]
	return strings.TrimSuffix(s, suffix)
}
