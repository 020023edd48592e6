package schema

import (
	"context"
	"fmt"
	"time"

	"entgo.io/ent"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/ent/schema/fieldtype"
)

// validateField checks the value a mutation sets for an ent field (JSON fields have no
// built-in validators) and reports a failure as VALIDATION naming the GraphQL field.
func validateField[T any](name, gqlField string, check func(T) error) ent.Hook {
	return func(next ent.Mutator) ent.Mutator {
		return ent.MutateFunc(func(ctx context.Context, m ent.Mutation) (ent.Value, error) {
			if v, ok := m.Field(name); ok {
				if t, ok := v.(T); ok {
					if err := check(t); err != nil {
						return nil, apierr.Validation(gqlField, "%v", err)
					}
				}
			}
			return next.Mutate(ctx, m)
		})
	}
}

func validateLabels() ent.Hook {
	return validateField("labels", "labels", fieldtype.Labels.Validate)
}

func validatePolicy() ent.Hook {
	return validateField("schedule_policy", "schedulePolicy", fieldtype.SchedulePolicy.Validate)
}

// timeOrder rejects a mutation that leaves the end time before the start time.
func timeOrder(startField, endField, gqlEnd string) ent.Hook {
	return func(next ent.Mutator) ent.Mutator {
		return ent.MutateFunc(func(ctx context.Context, m ent.Mutation) (ent.Value, error) {
			start, okS := m.Field(startField)
			end, okE := m.Field(endField)
			if !okS && !okE {
				return next.Mutate(ctx, m)
			}
			if m.Op().Is(ent.OpUpdateOne) {
				var err error
				if !okS {
					start, err = m.OldField(ctx, startField)
				}
				if err == nil && !okE {
					end, err = m.OldField(ctx, endField)
				}
				if err != nil {
					return nil, fmt.Errorf("read %s/%s: %w", startField, endField, err)
				}
			}
			s, sOK := asTime(start)
			e, eOK := asTime(end)
			if sOK && eOK && e.Before(s) {
				return nil, apierr.Validation(gqlEnd, "must not be before %s", s.Format(time.RFC3339))
			}
			return next.Mutate(ctx, m)
		})
	}
}

func asTime(v ent.Value) (time.Time, bool) {
	switch t := v.(type) {
	case time.Time:
		return t, !t.IsZero()
	case *time.Time:
		if t != nil {
			return *t, !t.IsZero()
		}
	}
	return time.Time{}, false
}

// audienceMatches checks on create that a notice names the tenant or user its audience says.
func audienceMatches() ent.Hook {
	return func(next ent.Mutator) ent.Mutator {
		return ent.MutateFunc(func(ctx context.Context, m ent.Mutation) (ent.Value, error) {
			if !m.Op().Is(ent.OpCreate) {
				return next.Mutate(ctx, m)
			}
			audience := "ALL"
			if v, ok := m.Field("audience"); ok {
				audience = fmt.Sprint(v)
			}
			tenant, user := len(m.AddedIDs("tenant")) > 0, len(m.AddedIDs("user")) > 0
			switch {
			case audience == "TENANT" && !tenant:
				return nil, apierr.Validation("tenantID", "a notice to a tenant must name the tenant")
			case audience == "USER" && !user:
				return nil, apierr.Validation("userID", "a notice to a user must name the user")
			case audience == "ALL" && (tenant || user):
				return nil, apierr.Validation("audience", "a notice to all users cannot name a tenant or user")
			}
			return next.Mutate(ctx, m)
		})
	}
}

// byViewer sets the string field name, on create, to the acting viewer's name (authz.Actor)
// when the mutation leaves it unset (e.g. Maintenance.opened_by): who did something is
// recorded by the server, not left to the client to remember.
func byViewer(name string) ent.Hook {
	return func(next ent.Mutator) ent.Mutator {
		return ent.MutateFunc(func(ctx context.Context, m ent.Mutation) (ent.Value, error) {
			if _, set := m.Field(name); !set && m.Op().Is(ent.OpCreate) {
				if err := m.SetField(name, authz.Actor(ctx)); err != nil {
					return nil, fmt.Errorf("set %s: %w", name, err)
				}
			}
			return next.Mutate(ctx, m)
		})
	}
}

// copyVMID records on a new assignment the id of its VM (field vm_id), so that the agent of
// the assignment's node can name the domain to remove even when the VM is no longer its own.
func copyVMID() ent.Hook {
	return func(next ent.Mutator) ent.Mutator {
		return ent.MutateFunc(func(ctx context.Context, m ent.Mutation) (ent.Value, error) {
			if m.Op().Is(ent.OpCreate) {
				if _, set := m.Field("vm_id"); !set {
					if ids := m.AddedIDs("virtual_machine"); len(ids) == 1 {
						if err := m.SetField("vm_id", ids[0]); err != nil {
							return nil, fmt.Errorf("assignment vm_id: %w", err)
						}
					}
				}
			}
			return next.Mutate(ctx, m)
		})
	}
}

// immutableInvoice refuses every change of an invoice but its creation: a final invoice is
// never edited or deleted; corrections go on a later invoice as adjustments.
func immutableInvoice() ent.Hook {
	return func(next ent.Mutator) ent.Mutator {
		return ent.MutateFunc(func(ctx context.Context, m ent.Mutation) (ent.Value, error) {
			if !m.Op().Is(ent.OpCreate) {
				return nil, apierr.Conflict("a final invoice cannot change: corrections are adjustments on the next invoice")
			}
			return next.Mutate(ctx, m)
		})
	}
}
