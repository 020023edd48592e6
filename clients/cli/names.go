package cli

import (
	"context"
	"fmt"
	"strconv"

	"github.com/virtflow/virtflow/clients/apiclient"
)

// ref resolves what a user typed where an object is expected: an id (digits) as it is, or
// the name of an object of type typ (any name get/list know: "tenant", "vm", "region"...),
// looked up through the type's list query with where: {name: …}. A name matching no object
// or more than one is an error that says so.
func (a *app) ref(ctx context.Context, c *apiclient.Client, typ, s string) (string, error) {
	if s == "" || isID(s) {
		return s, nil
	}
	l, err := resolveType(ctx, c, typ)
	if err != nil {
		return "", err
	}
	if !l.Field.hasArg("where") {
		return "", usagef("%s %q: give its id (%s cannot be looked up by name)", typ, s, l.Field.Name)
	}
	q := fmt.Sprintf("query($where: %sWhereInput) { list: %s(first: 2, where: $where) { edges { node { ... on %s { id } } } } }",
		l.Type, l.Field.Name, l.Type)
	var r struct {
		List struct {
			Edges []struct {
				Node struct{ ID string }
			}
		}
	}
	if err := c.Do(ctx, q, map[string]any{"where": map[string]any{"name": s}}, &r); err != nil {
		return "", fmt.Errorf("look up %s %q by name: %w", typ, s, err)
	}
	switch len(r.List.Edges) {
	case 0:
		return "", fmt.Errorf("no %s is named %q (or the token may not read it)", typ, s)
	case 1:
		return r.List.Edges[0].Node.ID, nil
	}
	return "", fmt.Errorf("more than one %s is named %q: give its id", typ, s)
}

// refs resolves each of ss as ref does.
func (a *app) refs(ctx context.Context, c *apiclient.Client, typ string, ss []string) ([]string, error) {
	out := make([]string, 0, len(ss))
	for _, s := range ss {
		id, err := a.ref(ctx, c, typ, s)
		if err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, nil
}

// optRef is ref for an optional value: nil stays nil.
func (a *app) optRef(ctx context.Context, c *apiclient.Client, typ string, s *string) (*string, error) {
	if s == nil {
		return nil, nil
	}
	id, err := a.ref(ctx, c, typ, *s)
	if err != nil {
		return nil, err
	}
	return &id, nil
}

// isID reports whether s is a GraphQL id of this API (a decimal number).
func isID(s string) bool {
	_, err := strconv.ParseUint(s, 10, 64)
	return err == nil
}
