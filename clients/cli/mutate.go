package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/virtflow/virtflow/clients/apiclient"
)

// sets is a repeated --set FIELD=VALUE flag.
type sets []string

func (s *sets) String() string     { return strings.Join(*s, " ") }
func (s *sets) Set(v string) error { *s = append(*s, v); return nil }

// inputField is an introspected input field.
type inputField struct {
	Name string  `json:"name"`
	Type typeRef `json:"type"`
}

const inputFieldsQuery = `query($name: String!) { __type(name: $name) { inputFields { name type { kind name ofType { kind name ofType { kind name ofType { kind name } } } } } } }`

// inputFields introspects an input type; nil when the schema has no such type.
func inputFields(ctx context.Context, c *apiclient.Client, name string) ([]inputField, error) {
	var r struct {
		Type *struct {
			InputFields []inputField `json:"inputFields"`
		} `json:"__type"`
	}
	if err := c.Do(ctx, inputFieldsQuery, map[string]any{"name": name}, &r); err != nil {
		return nil, fmt.Errorf("read the schema by introspection: %w", err)
	}
	if r.Type == nil {
		return nil, nil
	}
	return r.Type.InputFields, nil
}

// edgeType is the type an id field refers to, by its name: datacenterID → datacenter,
// addRackIDs → rack, networkIDs → network.
func edgeType(field string) string {
	s := strings.TrimSuffix(strings.TrimSuffix(field, "IDs"), "ID")
	for _, p := range []string{"add", "remove"} {
		if strings.HasPrefix(s, p) && len(s) > len(p) && s[len(p)] >= 'A' && s[len(p)] <= 'Z' {
			s = s[len(p):]
		}
	}
	return s
}

// buildInput turns FIELD=VALUE pairs into an input object of the introspected fields: a field
// is named as in the schema or in kebab/snake case (start-address); numbers, booleans and
// lists (comma-separated) are converted by the field's type; an id field takes a name as well
// (looked up as ref does); Labels and JSON take a JSON object or k=v,k=v.
func (a *app) buildInput(ctx context.Context, c *apiclient.Client, typ string, fields []inputField, pairs []string) (map[string]any, error) {
	byName := map[string]inputField{}
	for _, f := range fields {
		byName[normalize(f.Name)] = f
	}
	in := map[string]any{}
	for _, p := range pairs {
		k, v, ok := strings.Cut(p, "=")
		if !ok {
			return nil, usagef("--set %q: want FIELD=VALUE", p)
		}
		f, ok := byName[normalize(k)]
		if !ok {
			names := make([]string, 0, len(fields))
			for _, f := range fields {
				names = append(names, f.Name)
			}
			return nil, usagef("--set %s: %s has no field %q (fields: %s)", k, typ, k, strings.Join(names, ", "))
		}
		t, list := f.Type.named()
		conv := func(s string) (any, error) {
			switch t.Name {
			case "Int":
				n, err := strconv.ParseInt(s, 10, 64)
				if err != nil {
					return nil, usagef("--set %s=%s: %s is a whole number", k, s, f.Name)
				}
				return n, nil
			case "Float":
				x, err := strconv.ParseFloat(s, 64)
				if err != nil {
					return nil, usagef("--set %s=%s: %s is a number", k, s, f.Name)
				}
				return x, nil
			case "Boolean":
				b, err := strconv.ParseBool(s)
				if err != nil {
					return nil, usagef("--set %s=%s: %s is true or false", k, s, f.Name)
				}
				return b, nil
			case "ID":
				return a.ref(ctx, c, edgeType(f.Name), s)
			case "Labels", "JSON":
				var m map[string]any
				if strings.HasPrefix(strings.TrimSpace(s), "{") {
					if err := json.Unmarshal([]byte(s), &m); err != nil {
						return nil, usagef("--set %s: %v", k, err)
					}
					return m, nil
				}
				m = map[string]any{}
				for _, kv := range strings.Split(s, ",") {
					lk, lv, ok := strings.Cut(kv, "=")
					if !ok {
						return nil, usagef("--set %s=%s: want a JSON object or k=v,k=v", k, s)
					}
					m[lk] = lv
				}
				return m, nil
			}
			if t.Kind == "ENUM" {
				return strings.ToUpper(s), nil
			}
			return s, nil
		}
		if list && t.Name != "Labels" && t.Name != "JSON" {
			var vals []any
			for _, s := range strings.Split(v, ",") {
				if s = strings.TrimSpace(s); s == "" {
					continue
				}
				x, err := conv(s)
				if err != nil {
					return nil, err
				}
				vals = append(vals, x)
			}
			in[f.Name] = vals
			continue
		}
		x, err := conv(v)
		if err != nil {
			return nil, err
		}
		in[f.Name] = x
	}
	return in, nil
}

// runCreate creates an object of any type the API creates (createT(input: CreateTInput!)):
//
//	create TYPE --set FIELD=VALUE ...
func runCreate(ctx context.Context, a *app, args []string) error {
	return a.mutate(ctx, "create", args)
}

// runUpdate changes an object (updateT(id, input: UpdateTInput!)): clearX=true clears an
// optional field, addXIDs/removeXIDs change a many-edge.
//
//	update TYPE ID --set FIELD=VALUE ...
func runUpdate(ctx context.Context, a *app, args []string) error {
	return a.mutate(ctx, "update", args)
}

// runDelete deletes an object (deleteT(id)).
//
//	delete TYPE ID
func runDelete(ctx context.Context, a *app, args []string) error {
	return a.mutate(ctx, "delete", args)
}

func (a *app) mutate(ctx context.Context, verb string, args []string) error {
	fs := flag.NewFlagSet(verb, flag.ContinueOnError)
	var pairs sets
	if verb != "delete" {
		fs.Var(&pairs, "set", "FIELD=VALUE (repeatable)")
	}
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	want := 2
	if verb == "create" {
		want = 1
	}
	if len(pos) != want {
		return usagef("%s", commands()[verb].usage)
	}
	c, err := a.api()
	if err != nil {
		return err
	}
	l, err := resolveType(ctx, c, pos[0])
	if err != nil {
		return err
	}
	op := verb + l.Type
	muts, err := typeFields(ctx, c, "Mutation")
	if err != nil {
		return err
	}
	var mut *field
	for i := range muts {
		if muts[i].Name == op {
			mut = &muts[i]
		}
	}
	if mut == nil {
		return usagef("the API has no %s: %s objects are not %sd this way", op, l.Type, verb)
	}
	var id string
	if verb != "create" {
		if id, err = a.ref(ctx, c, pos[0], pos[1]); err != nil {
			return err
		}
	}
	if verb == "delete" {
		if err := c.Do(ctx, fmt.Sprintf("mutation($id: ID!) { %s(id: $id) }", op), map[string]any{"id": id}, nil); err != nil {
			return err
		}
		return a.show(map[string]any{"deleted": id}, []string{"deleted"})
	}
	inType := upperFirst(verb) + l.Type + "Input"
	fields, err := inputFields(ctx, c, inType)
	if err != nil {
		return err
	}
	if fields == nil {
		return usagef("the API has no %s", inType)
	}
	in, err := a.buildInput(ctx, c, l.Type, fields, pairs)
	if err != nil {
		return err
	}
	// The answer is the object, or a payload holding it (createAPIToken's TokenPayload:
	// the token secret, shown this once, and the object).
	ret, _ := mut.Type.named()
	objFields, err := typeFields(ctx, c, ret.Name)
	if err != nil {
		return err
	}
	edges := map[string]string{}
	if ret.Name != l.Type {
		for _, f := range objFields {
			if t, _ := f.Type.named(); t != nil && t.Kind == "OBJECT" && !f.requiredArgs() {
				edges[f.Name] = "id"
			}
		}
	}
	sel := selection(objFields, edges)
	var q string
	vars := map[string]any{"in": in}
	if verb == "create" {
		q = fmt.Sprintf("mutation($in: %s!) { o: %s(input: $in) { %s } }", inType, op, sel)
	} else {
		q = fmt.Sprintf("mutation($id: ID!, $in: %s!) { o: %s(id: $id, input: $in) { %s } }", inType, op, sel)
		vars["id"] = id
	}
	var r struct {
		O map[string]any `json:"o"`
	}
	if err := c.Do(ctx, q, vars, &r); err != nil {
		return err
	}
	return a.show(r.O, nil)
}

func upperFirst(s string) string { return strings.ToUpper(s[:1]) + s[1:] }
