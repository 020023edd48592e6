package livestatus

import (
	"context"
	"fmt"
	"slices"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/apitoken"
	"github.com/virtflow/virtflow/ent/maintainer"
	"github.com/virtflow/virtflow/ent/maintainergroup"
	"github.com/virtflow/virtflow/ent/predicate"
	"github.com/virtflow/virtflow/ent/rolebinding"
	"github.com/virtflow/virtflow/ent/user"
)

// credentialWatch says which mutations of an entity may change what a user's tokens grant:
// every delete, creates when create is set, and updates of the fields or edges listed (all
// updates when any is set).
type credentialWatch struct {
	create, any   bool
	fields, edges []string
}

// credentialWatched are the entities a viewer is made of (identity.Authenticate reads them):
// a token revoked, expired or narrowed, a role binding granted, changed or removed, a user
// disabled or deleted, a maintainer or maintainer group deactivated or its membership
// changed. A token's last use (written once a minute) is not among them.
var credentialWatched = map[string]credentialWatch{
	"APIToken": {fields: []string{apitoken.FieldRevokedAt, apitoken.FieldExpiresAt, apitoken.FieldScope,
		apitoken.FieldAllowedCidrs}, edges: []string{apitoken.EdgeOwner, apitoken.EdgeTenant}},
	"RoleBinding": {create: true, any: true},
	"User": {fields: []string{user.FieldStatus},
		edges: []string{user.EdgeRoleBindings, user.EdgeAPITokens, user.EdgeMaintainer}},
	"Maintainer": {fields: []string{maintainer.FieldStatus},
		edges: []string{maintainer.EdgeUser, maintainer.EdgeGroups}},
	"MaintainerGroup": {fields: []string{maintainergroup.FieldStatus},
		edges: []string{maintainergroup.EdgeMembers}},
}

// relevant reports whether m may change what some user's credentials grant.
func (w credentialWatch) relevant(m ent.Mutation) bool {
	switch {
	case m.Op().Is(ent.OpDelete | ent.OpDeleteOne):
		return true
	case m.Op().Is(ent.OpCreate):
		return w.create
	case w.any:
		return true
	}
	for _, f := range append(m.Fields(), m.ClearedFields()...) {
		if slices.Contains(w.fields, f) {
			return true
		}
	}
	for _, e := range append(append(m.AddedEdges(), m.RemovedEdges()...), m.ClearedEdges()...) {
		if slices.Contains(w.edges, e) {
			return true
		}
	}
	return false
}

// credentialHook runs m and, when it may change what some users' credentials grant,
// publishes one Credentials event per user once committed. The users are read before m
// runs (a deleted binding's user cannot be read afterwards) and, for a create, after.
func (p *Publisher) credentialHook(ctx context.Context, next ent.Mutator, m mutation) (ent.Value, error) {
	if !credentialWatched[m.Type()].relevant(m) {
		return next.Mutate(ctx, m)
	}
	read := authz.Unrestricted(ctx)
	var users []int
	if !m.Op().Is(ent.OpCreate) {
		ids, err := m.IDs(ctx)
		if err != nil {
			return nil, fmt.Errorf("livestatus: rows of %s %s: %w", m.Type(), m.Op(), err)
		}
		if users, err = credentialUsers(read, m, ids); err != nil {
			return nil, err
		}
	}
	v, err := next.Mutate(ctx, m)
	if err != nil {
		return v, err
	}
	if id, ok := m.ID(); ok && m.Op().Is(ent.OpCreate) {
		if users, err = credentialUsers(read, m, []int{id}); err != nil {
			return nil, err
		}
	}
	events := make([]Event, 0, len(users))
	for _, u := range users {
		events = append(events, Event{Type: Credentials, ID: u})
	}
	if len(events) == 0 {
		return v, nil
	}
	if tx, err := m.Tx(); err == nil {
		p.pendingIn(tx).addEvents(events)
	} else {
		p.Publish(context.WithoutCancel(ctx), events...)
	}
	return v, nil
}

// credentialUsers returns the users whose credentials the rows ids of m's entity take part
// in, including those of the maintainers and users m links or unlinks.
func credentialUsers(ctx context.Context, m mutation, ids []int) ([]int, error) {
	var preds []predicate.User
	edgeIDs := func(edge string) []int {
		var out []int
		for _, v := range append(m.AddedIDs(edge), m.RemovedIDs(edge)...) {
			if id, ok := v.(int); ok {
				out = append(out, id)
			}
		}
		return out
	}
	switch m.Type() {
	case "APIToken":
		preds = append(preds, user.HasAPITokensWith(apitoken.IDIn(ids...)), user.IDIn(edgeIDs(apitoken.EdgeOwner)...))
	case "RoleBinding":
		preds = append(preds, user.HasRoleBindingsWith(rolebinding.IDIn(ids...)))
	case "User":
		return ids, nil
	case "Maintainer":
		preds = append(preds, user.HasMaintainerWith(maintainer.IDIn(ids...)), user.IDIn(edgeIDs(maintainer.EdgeUser)...))
	case "MaintainerGroup":
		preds = append(preds, user.HasMaintainerWith(maintainer.HasGroupsWith(maintainergroup.IDIn(ids...))),
			user.HasMaintainerWith(maintainer.IDIn(edgeIDs(maintainergroup.EdgeMembers)...)))
	}
	if len(ids) == 0 && len(m.AddedEdges())+len(m.RemovedEdges()) == 0 {
		return nil, nil
	}
	users, err := m.Client().User.Query().Where(user.Or(preds...)).IDs(ctx)
	if err != nil {
		return nil, fmt.Errorf("livestatus: users of changed %s: %w", m.Type(), err)
	}
	return users, nil
}
