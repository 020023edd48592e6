package authz

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"entgo.io/ent"
	"entgo.io/ent/entql"

	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/ent/privacy"
)

// Policy is the privacy policy every entity shares (ent/schema/authz.go).
func Policy() ent.Policy {
	return privacy.Policy{
		Query:    privacy.QueryPolicy{privacy.FilterFunc(filterQuery)},
		Mutation: privacy.MutationPolicy{privacy.MutationRuleFunc(checkMutation)},
	}
}

// filterQuery allows a read of typ and narrows it to the rows the viewer may see (ReadScope).
func filterQuery(ctx context.Context, f privacy.Filter) error {
	p, all, err := ReadScope(FromContext(ctx), typeName(f, "Filter"))
	switch {
	case err != nil:
		return err
	case !all:
		f.Where(p)
	}
	return privacy.Allow
}

// ReadScope says which records of typ v may read: all of them (all) with a platform role that
// reads typ; otherwise the rows p selects — the rows of the viewer's tenants, or of its node
// for an agent, and its own user, tokens and role bindings. A type v may not read at all is
// FORBIDDEN, and no viewer at all UNAUTHENTICATED.
func ReadScope(v *Viewer, typ string) (p entql.P, all bool, err error) {
	switch {
	case v == nil:
		return nil, false, apierr.Unauthenticated("sign in: send Authorization: Bearer <token>")
	case v.Can(typ, ActRead):
		return nil, true, nil
	}
	var scopes []entql.P
	if p := selfScope(typ, v); p != nil {
		scopes = append(scopes, p)
	}
	for _, kind := range []string{"tenant", "node"} {
		ids := v.Domains(kind, typ, ActRead)
		if len(ids) == 0 {
			continue
		}
		if slices.Contains(Catalog, typ) {
			return nil, true, nil
		}
		scope := tenantScope
		if kind == "node" {
			scope = nodeScope
		}
		if p := scope(typ, ids); p != nil {
			scopes = append(scopes, p)
		}
	}
	if len(scopes) == 0 {
		return nil, false, apierr.Forbidden("you may not read %s", typ)
	}
	return anyOf(scopes), false, nil
}

// WriteScope says which existing records of typ v may update or delete: all of them (all)
// for the system and platform roles that write typ; otherwise the rows p selects — those
// naming the viewer as maintainer (write-own), those of its tenants, or those of its node
// for an agent. Anything else is FORBIDDEN. It is the decision checkMutation applies to the
// record being changed and to the records an edge of a mutation links or unlinks.
func WriteScope(v *Viewer, typ string) (p entql.P, all bool, err error) {
	switch {
	case v == nil:
		return nil, false, apierr.Unauthenticated("sign in: send Authorization: Bearer <token>")
	case v.IsSystem():
		return nil, true, nil
	case v.ReadOnly:
		return nil, false, apierr.Forbidden("this token is read-only")
	case v.Can(typ, ActWrite):
		return nil, true, nil
	}
	if v.Can(typ, ActWriteOwn) && v.MaintainerID != 0 {
		p = maintainedScope(typ, v)
	} else if ids := v.Domains("tenant", typ, ActWrite); len(ids) > 0 {
		p = tenantScope(typ, ids)
	} else if ids := v.Domains("node", typ, ActWrite); len(ids) > 0 {
		p = nodeScope(typ, ids)
	}
	if p == nil {
		return nil, false, apierr.Forbidden("you may not change %s", typ)
	}
	return p, false, nil
}

// checkMutation checks the record a mutation changes — a create must name one of the
// viewer's tenants (tenant roles) or its node (agents); an update or delete is narrowed to
// WriteScope, so rows outside it are not found — and, before that, both ends of every edge
// the mutation touches (checkEdges).
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
	}
	if err := checkEdges(ctx, m, v); err != nil {
		return err
	}
	if v.Can(typ, ActWrite) {
		return privacy.Allow
	}
	create := m.Op().Is(ent.OpCreate)
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
	case "AuditLog", "ReservationInterval", "Invoice":
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
	case "VirtualMachine", "Volume", "Snapshot", "Backup", "LoadBalancer", "RegionService", "GlobalService", "KubernetesCluster", "SSHKey", "SecurityRule",
		"Quota", "UsageRecord", "Network", "APIToken", "RoleBinding":
		return entql.HasEdgeWith("tenant", own)
	}
	return nil
}

// SelfScoped reports whether what a viewer may read of typ depends on who the viewer is (its
// user), not only on its roles, maintainer and groups: the types selfScope opens to their
// owner. Readers that share one read among viewers with the same permissions
// (livestatus) must keep the user apart for these.
func SelfScoped(typ string) bool {
	return selfScope(typ, &Viewer{UserID: 1}) != nil
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
	case "RoleBinding", "Notice", "SSHKey":
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
	case "Assignment", "VirtualMachine", "Volume", "Snapshot", "Event":
		return entql.HasEdgeWith("node", own)
	case "Backup":
		// The node that copies it, and the nodes of the VMs restored from it.
		return entql.Or(entql.HasEdgeWith("node", own),
			entql.HasEdgeWith("restored_virtual_machines", entql.HasEdgeWith("node", own)))
	case "Port", "SecurityRule":
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
