package graph

import (
	"context"
	"reflect"
	"strings"

	"entgo.io/ent/dialect/sql"
	"entgo.io/ent/entql"
	"github.com/99designs/gqlgen/graphql"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/ent"
)

// whereGuard makes `where` filters that follow an edge (hasXWith, hasX) look only at the
// rows of the edge's type the viewer may read. Row-level rules filter the rows a query
// returns, not the rows an edge predicate looks at, so without this a tenant could probe
// other tenants' records through a type it may read (users who also belong to tenant B,
// B's name spelled out with nameHasPrefix). An edge into a type the viewer may read in full
// is left alone; one into a type it reads in part gets that type's read scope
// (authz.ReadScope) inside its sub-query; one into a type it may not read at all is
// refused (FORBIDDEN).
func whereGuard(ctx context.Context, next graphql.Resolver) (any, error) {
	fc := graphql.GetFieldContext(ctx)
	v := authz.FromContext(ctx)
	if fc == nil || fc.Args["where"] == nil || v == nil { // no viewer: the query itself is refused
		return next(ctx)
	}
	if err := scopeWhere(v, reflect.ValueOf(fc.Args["where"])); err != nil {
		return nil, err
	}
	return next(ctx)
}

// scopeWhere applies whereGuard's rule to w, a *ent.XWhereInput, and every input nested in it.
func scopeWhere(v *authz.Viewer, w reflect.Value) error {
	if w.Kind() != reflect.Pointer || w.IsNil() || w.Elem().Kind() != reflect.Struct {
		return nil
	}
	typ := strings.TrimSuffix(w.Elem().Type().Name(), "WhereInput")
	s := w.Elem()
	t := s.Type()
	for i := range t.NumField() {
		name, f := t.Field(i).Name, s.Field(i)
		switch {
		case name == "Not":
			if err := scopeWhere(v, f); err != nil {
				return err
			}
		case name == "And" || name == "Or":
			for j := range f.Len() {
				if err := scopeWhere(v, f.Index(j)); err != nil {
					return err
				}
			}
		case strings.HasPrefix(name, "Has") && strings.HasSuffix(name, "With") && f.Len() > 0:
			target := strings.TrimSuffix(f.Type().Elem().Elem().Name(), "WhereInput")
			scope, all, err := authz.ReadScope(v, target)
			if err != nil {
				return apierr.Forbidden("you may not filter on %s", strings.TrimSuffix(lowerFirst(name[3:]), "With"))
			}
			for j := range f.Len() {
				if !all {
					addPredicate(f.Index(j), ent.EntQLPredicate(target, scope))
				}
				if err := scopeWhere(v, f.Index(j)); err != nil {
					return err
				}
			}
		case strings.HasPrefix(name, "Has") && f.Kind() == reflect.Pointer && !f.IsNil():
			with, ok := t.FieldByName(name + "With")
			if !ok {
				continue
			}
			target := strings.TrimSuffix(with.Type.Elem().Elem().Name(), "WhereInput")
			scope, all, err := authz.ReadScope(v, target)
			if err != nil {
				return apierr.Forbidden("you may not filter on %s", lowerFirst(name[3:]))
			}
			if all {
				continue
			}
			// hasX: true asks for a readable neighbour, hasX: false for none.
			edge := edgeNamed(typ, name[3:])
			if edge == "" {
				return apierr.Forbidden("you may not filter on %s", lowerFirst(name[3:]))
			}
			p := entql.HasEdgeWith(edge, scope)
			if !f.Elem().Bool() {
				p = entql.Not(p)
			}
			f.Set(reflect.Zero(f.Type()))
			addPredicate(w, ent.EntQLPredicate(typ, p))
		}
	}
	return nil
}

// edgeNamed returns the ent name of typ's edge whose Go name is field ("APITokens"), or "".
func edgeNamed(typ, field string) string {
	for name, e := range ent.Edges[typ] {
		if e.Field == field {
			return name
		}
	}
	return ""
}

// addPredicate adds p to w, a *ent.XWhereInput, through its AddPredicates method.
func addPredicate(w reflect.Value, p func(*sql.Selector)) {
	add := w.MethodByName("AddPredicates")
	add.Call([]reflect.Value{reflect.ValueOf(p).Convert(add.Type().In(0).Elem())})
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}
