package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"sort"
	"strings"

	"github.com/virtflow/virtflow/clients/apiclient"
)

// typeRef is an introspected field type.
type typeRef struct {
	Kind   string   `json:"kind"`
	Name   string   `json:"name"`
	OfType *typeRef `json:"ofType"`
}

// named unwraps NON_NULL and LIST wrappers; list says whether a LIST was among them.
func (t *typeRef) named() (n *typeRef, list bool) {
	for t != nil && (t.Kind == "NON_NULL" || t.Kind == "LIST") {
		if t.Kind == "LIST" {
			list = true
		}
		t = t.OfType
	}
	return t, list
}

type field struct {
	Name string `json:"name"`
	Args []struct {
		Name string  `json:"name"`
		Type typeRef `json:"type"`
	} `json:"args"`
	Type typeRef `json:"type"`
}

// requiredArgs reports whether the field cannot be selected without arguments.
func (f field) requiredArgs() bool {
	for _, a := range f.Args {
		if a.Type.Kind == "NON_NULL" {
			return true
		}
	}
	return false
}

func (f field) hasArg(name string) bool {
	for _, a := range f.Args {
		if a.Name == name {
			return true
		}
	}
	return false
}

const typeFieldsQuery = `query($name: String!) { __type(name: $name) { name kind fields { name args { name type { kind name ofType { kind name } } } type { kind name ofType { kind name ofType { kind name ofType { kind name } } } } } } }`

// typeFields introspects one type's fields.
func typeFields(ctx context.Context, c *apiclient.Client, name string) ([]field, error) {
	var r struct {
		Type *struct {
			Fields []field `json:"fields"`
		} `json:"__type"`
	}
	if err := c.Do(ctx, typeFieldsQuery, map[string]any{"name": name}, &r); err != nil {
		return nil, fmt.Errorf("read the schema by introspection (get, list, describe and types need it; is the server's --introspection off?): %w", err)
	}
	if r.Type == nil {
		return nil, fmt.Errorf("the schema has no type %s (is introspection enabled on the server?)", name)
	}
	return r.Type.Fields, nil
}

// listable is a type with a list query: the Query field (e.g. virtualMachines) returning its
// connection.
type listable struct {
	Type  string // VirtualMachine
	Field field  // virtualMachines(...)
}

// aliases are short names people type, beyond the type's own and its list query's.
var aliases = map[string]string{
	"vm": "VirtualMachine", "vms": "VirtualMachine", "node": "ComputeNode", "nodes": "ComputeNode",
	"cable": "Link", "cables": "Link", "ip": "IPAddress", "ips": "IPAddress", "address": "IPAddress", "addresses": "IPAddress",
	"service": "RegionService", "services": "RegionService", "sshkey": "SSHKey", "key": "SSHKey", "keys": "SSHKey",
}

// listables introspects the Query type for every list query of a connection.
func listables(ctx context.Context, c *apiclient.Client) (map[string]listable, error) {
	fields, err := typeFields(ctx, c, "Query")
	if err != nil {
		return nil, err
	}
	out := map[string]listable{}
	for _, f := range fields {
		t, _ := f.Type.named()
		if t == nil || !strings.HasSuffix(t.Name, "Connection") || f.requiredArgs() {
			continue
		}
		out[strings.TrimSuffix(t.Name, "Connection")] = listable{Type: strings.TrimSuffix(t.Name, "Connection"), Field: f}
	}
	return out, nil
}

// normalize makes "virtual-machines", "virtual_machines" and "VirtualMachines" alike.
func normalize(s string) string {
	return strings.ToLower(strings.NewReplacer("-", "", "_", "", " ", "").Replace(s))
}

// resolveType finds the listable type a user named.
func resolveType(ctx context.Context, c *apiclient.Client, name string) (listable, error) {
	ls, err := listables(ctx, c)
	if err != nil {
		return listable{}, err
	}
	want := normalize(name)
	if t, ok := aliases[want]; ok {
		want = normalize(t)
	}
	for _, l := range ls {
		if normalize(l.Type) == want || normalize(l.Field.Name) == want || normalize(l.Type)+"s" == want {
			return l, nil
		}
	}
	return listable{}, usagef("unknown type %q (virtflow types lists them)", name)
}

// selection is the scalar and enum fields of a type; with edges (a map from an edge's
// field name to what to select of it), also those edges.
func selection(fields []field, edges map[string]string) string {
	var parts []string
	for _, f := range fields {
		if f.requiredArgs() || strings.HasPrefix(f.Name, "__") {
			continue
		}
		t, _ := f.Type.named()
		if t == nil {
			continue
		}
		switch t.Kind {
		case "SCALAR", "ENUM":
			parts = append(parts, f.Name)
		case "OBJECT", "INTERFACE":
			if sel, ok := edges[f.Name]; ok {
				parts = append(parts, f.Name+" { "+sel+" }")
			}
		}
	}
	return strings.Join(parts, " ")
}

// edgeSelections decides, for describe, what to select of each edge of a type: the edges
// are its object fields that need no argument and are not connections, selected as
// { id name } (or what of the two the target has); an object without an id (a structured
// value such as SchedulePolicy) is selected with its scalar fields.
func edgeSelections(ctx context.Context, c *apiclient.Client, fields []field) (map[string]string, error) {
	targets := map[string]string{} // field → type
	for _, f := range fields {
		t, _ := f.Type.named()
		if t == nil || (t.Kind != "OBJECT" && t.Kind != "INTERFACE") || f.requiredArgs() || f.hasArg("first") || strings.HasSuffix(t.Name, "Connection") {
			continue
		}
		targets[f.Name] = t.Name
	}
	if len(targets) == 0 {
		return nil, nil
	}
	var q strings.Builder
	q.WriteString("{")
	names := map[string]string{}
	for _, typ := range targets {
		if _, ok := names[typ]; ok {
			continue
		}
		alias := fmt.Sprintf("t%d", len(names))
		names[typ] = alias
		fmt.Fprintf(&q, " %s: __type(name: %q) { fields { name args { name type { kind } } type { kind name ofType { kind name ofType { kind name } } } } }", alias, typ)
	}
	q.WriteString(" }")
	var r map[string]*struct {
		Fields []field `json:"fields"`
	}
	if err := c.Do(ctx, q.String(), nil, &r); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for fname, typ := range targets {
		t := r[names[typ]]
		if t == nil {
			continue
		}
		has := map[string]bool{}
		for _, f := range t.Fields {
			has[f.Name] = true
		}
		switch {
		case has["id"] && has["name"]:
			out[fname] = "id name"
		case has["id"]:
			out[fname] = "id"
		default:
			if sel := selection(t.Fields, nil); sel != "" {
				out[fname] = sel
			}
		}
	}
	return out, nil
}

func runTypes(ctx context.Context, a *app, args []string) error {
	c, err := a.api()
	if err != nil {
		return err
	}
	ls, err := listables(ctx, c)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(ls))
	for n := range ls {
		names = append(names, n)
	}
	sort.Strings(names)
	rows := make([]map[string]any, 0, len(names))
	for _, n := range names {
		rows = append(rows, map[string]any{"type": n, "list": ls[n].Field.Name})
	}
	return a.show(rows, []string{"type", "list"})
}

func runGet(ctx context.Context, a *app, args []string) error {
	fs := flag.NewFlagSet("get", flag.ContinueOnError)
	first := fs.Int("first", 50, "how many to list")
	where := fs.String("where", "", `filter as the type's where input in JSON, e.g. {"status":"ACTIVE"}`)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	switch len(pos) {
	case 1:
		return a.list(ctx, pos[0], *first, *where)
	case 2:
		return a.get(ctx, pos[0], pos[1], false)
	}
	return usagef("get TYPE [ID]")
}

func runList(ctx context.Context, a *app, args []string) error {
	fs := flag.NewFlagSet("list", flag.ContinueOnError)
	first := fs.Int("first", 50, "how many to list")
	where := fs.String("where", "", `filter as the type's where input in JSON, e.g. {"status":"ACTIVE"}`)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("list TYPE")
	}
	return a.list(ctx, pos[0], *first, *where)
}

func runDescribe(ctx context.Context, a *app, args []string) error {
	pos, err := parse(flag.NewFlagSet("describe", flag.ContinueOnError), args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usagef("describe TYPE ID")
	}
	if a.output == "table" {
		a.output = "yaml" // an object's fields and edges read better as YAML
	}
	return a.get(ctx, pos[0], pos[1], true)
}

func (a *app) list(ctx context.Context, typ string, first int, where string) error {
	c, err := a.api()
	if err != nil {
		return err
	}
	l, err := resolveType(ctx, c, typ)
	if err != nil {
		return err
	}
	fields, err := typeFields(ctx, c, l.Type)
	if err != nil {
		return err
	}
	vars := map[string]any{"first": first}
	params, argList := "$first: Int", "first: $first"
	if where != "" {
		if !l.Field.hasArg("where") {
			return usagef("%s cannot be filtered", l.Field.Name)
		}
		var w map[string]any
		if err := json.Unmarshal([]byte(where), &w); err != nil {
			return usagef("--where: %v", err)
		}
		vars["where"] = w
		params += ", $where: " + l.Type + "WhereInput"
		argList += ", where: $where"
	}
	q := fmt.Sprintf("query(%s) { list: %s(%s) { totalCount edges { node { %s } } } }", params, l.Field.Name, argList, selection(fields, nil))
	var r struct {
		List struct {
			TotalCount int
			Edges      []struct {
				Node map[string]any `json:"node"`
			}
		}
	}
	if err := c.Do(ctx, q, vars, &r); err != nil {
		return err
	}
	rows := make([]map[string]any, 0, len(r.List.Edges))
	for _, e := range r.List.Edges {
		rows = append(rows, e.Node)
	}
	if err := a.show(rows, nil); err != nil {
		return err
	}
	if a.output == "table" && r.List.TotalCount > len(rows) {
		fmt.Fprintf(a.io.Stderr, "(%d of %d shown; --first N for more)\n", len(rows), r.List.TotalCount)
	}
	return nil
}

func (a *app) get(ctx context.Context, typ, id string, edges bool) error {
	c, err := a.api()
	if err != nil {
		return err
	}
	l, err := resolveType(ctx, c, typ)
	if err != nil {
		return err
	}
	fields, err := typeFields(ctx, c, l.Type)
	if err != nil {
		return err
	}
	var sel map[string]string
	if edges {
		if sel, err = edgeSelections(ctx, c, fields); err != nil {
			return err
		}
	}
	if id, err = a.ref(ctx, c, typ, id); err != nil {
		return err
	}
	q := fmt.Sprintf("query($id: ID!) { node(id: $id) { __typename ... on %s { %s } } }", l.Type, selection(fields, sel))
	var r struct {
		Node map[string]any `json:"node"`
	}
	if err := c.Do(ctx, q, map[string]any{"id": id}, &r); err != nil {
		return err
	}
	if r.Node == nil {
		return fmt.Errorf("%s %s not found", l.Type, id)
	}
	if got, _ := r.Node["__typename"].(string); got != l.Type {
		return fmt.Errorf("%s is a %s, not a %s", id, got, l.Type)
	}
	delete(r.Node, "__typename")
	return a.show(r.Node, nil)
}
