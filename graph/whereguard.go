package graph

import (
	"context"
	"reflect"
	"slices"
	"strings"

	"github.com/99designs/gqlgen/graphql"

	"github.com/virtflow/virtflow/apierr"
	"github.com/virtflow/virtflow/authz"
)

// whereGuard refuses `where` filters that follow an edge (hasXWith, hasX) into a type the
// viewer cannot read in full. Row-level rules filter the rows a query returns, not the rows
// an edge predicate looks at, so without this a tenant could probe another tenant's records
// through a type it may read (regions whose VMs are named "x"). Edges into the catalog and
// into tenants (which only ever lead back to the viewer's own) stay allowed.
func whereGuard(ctx context.Context, next graphql.Resolver) (any, error) {
	fc := graphql.GetFieldContext(ctx)
	v := authz.FromContext(ctx)
	if fc == nil || fc.Args["where"] == nil || v == nil { // no viewer: the query itself is refused
		return next(ctx)
	}
	if err := checkWhere(v, reflect.ValueOf(fc.Args["where"])); err != nil {
		return nil, err
	}
	return next(ctx)
}

func checkWhere(v *authz.Viewer, w reflect.Value) error {
	for w.Kind() == reflect.Pointer || w.Kind() == reflect.Interface {
		if w.IsNil() {
			return nil
		}
		w = w.Elem()
	}
	if w.Kind() != reflect.Struct {
		return nil
	}
	t := w.Type()
	for i := range t.NumField() {
		name, f := t.Field(i).Name, w.Field(i)
		switch {
		case name == "Not":
			if err := checkWhere(v, f); err != nil {
				return err
			}
		case name == "And" || name == "Or":
			for j := range f.Len() {
				if err := checkWhere(v, f.Index(j)); err != nil {
					return err
				}
			}
		case strings.HasPrefix(name, "Has") && strings.HasSuffix(name, "With") && f.Len() > 0:
			target := strings.TrimSuffix(f.Type().Elem().Elem().Name(), "WhereInput")
			if !mayFilterOn(v, target) {
				return apierr.Forbidden("you may not filter on %s", strings.TrimSuffix(lowerFirst(name[3:]), "With"))
			}
			for j := range f.Len() {
				if err := checkWhere(v, f.Index(j)); err != nil {
					return err
				}
			}
		case strings.HasPrefix(name, "Has") && f.Kind() == reflect.Pointer && !f.IsNil():
			if with, ok := t.FieldByName(name + "With"); ok {
				target := strings.TrimSuffix(with.Type.Elem().Elem().Name(), "WhereInput")
				if !mayFilterOn(v, target) {
					return apierr.Forbidden("you may not filter on %s", lowerFirst(name[3:]))
				}
			}
		}
	}
	return nil
}

func mayFilterOn(v *authz.Viewer, typ string) bool {
	return v.Can(typ, authz.ActRead) || slices.Contains(authz.Catalog, typ) || typ == "Tenant"
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}
