package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/mixin"

	"github.com/virtflow/virtflow/authz"
)

// AuthzMixin puts every entity under VirtFlow's authorization policy (package authz): each
// query is filtered to what the viewer in the context may read and each mutation checked
// against what it may write, whoever runs it — a resolver, a hook or a worker.
type AuthzMixin struct {
	mixin.Schema
}

// Policy of every entity.
func (AuthzMixin) Policy() ent.Policy { return authz.Policy() }
