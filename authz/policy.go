package authz

import (
	"context"

	"entgo.io/ent"
)

type bootstrapPolicy struct{}

func (bootstrapPolicy) EvalQuery(context.Context, ent.Query) error       { return nil }
func (bootstrapPolicy) EvalMutation(context.Context, ent.Mutation) error { return nil }

// Policy is the authorization policy of every entity.
func Policy() ent.Policy { return bootstrapPolicy{} }
