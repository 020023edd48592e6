package difftest

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"

	"github.com/vektah/gqlparser/v2/ast"
)

// fixture holds the ids of the demo dataset (package demo) the cases name, and derives the
// variables of an operation from the schema: every variable an operation requires, and the
// page sizes it may take, get a value; other nullable variables stay null.
type fixture struct {
	schema *ast.Schema
	// ids is the id of the first row (by id) of every type with a connection on Query.
	ids map[string]string
	n   int // the counter making derived names unique
}

// idVariables name the type of ID variables whose name says it.
var idVariables = map[string]string{
	"tenant": "Tenant", "tenantID": "Tenant", "node": "ComputeNode", "vm": "VirtualMachine",
	"portID": "Port", "clusterID": "Cluster", "flavorID": "Flavor", "hostID": "Host",
	"rackID": "Rack", "regionID": "Region", "networkID": "Network", "imageID": "Image",
}

// variables derives the variables of op and applies over (which may name variables the
// derivation would leave null, or set one to nil).
func (f *fixture) variables(op operation, over map[string]any) (map[string]any, error) {
	vars := map[string]any{}
	for _, v := range op.Def.VariableDefinitions {
		if val, ok := over[v.Variable]; ok {
			if val != nil {
				vars[v.Variable] = val
			}
			continue
		}
		if !v.Type.NonNull && v.Variable != "first" {
			continue
		}
		if v.Type.Name() == "ID" && v.Type.Elem == nil {
			typ := idVariables[v.Variable]
			if typ == "" {
				typ = f.rootType(op.Def, v.Variable)
			}
			vars[v.Variable] = f.id(typ, v.Variable, op.Def.Name)
			continue
		}
		val, err := f.value(v.Variable, v.Type)
		if err != nil {
			return nil, fmt.Errorf("variable $%s: %w", v.Variable, err)
		}
		vars[v.Variable] = val
	}
	return vars, nil
}

// rootType is the type of the object a root field of def reads or changes by the variable
// name: its result type when that has fixtures, else the type an inline fragment of its
// selection names (node(id:) { ... on Host }), else its name less a leading verb
// (deleteHost: Host).
func (f *fixture) rootType(def *ast.OperationDefinition, name string) string {
	for _, s := range def.SelectionSet {
		field, ok := s.(*ast.Field)
		if !ok {
			continue
		}
		uses := false
		for _, a := range field.Arguments {
			uses = uses || (a.Value.Kind == ast.Variable && a.Value.Raw == name)
		}
		if !uses {
			continue
		}
		var root *ast.Definition
		switch def.Operation {
		case ast.Mutation:
			root = f.schema.Mutation
		case ast.Subscription:
			root = f.schema.Subscription
		default:
			root = f.schema.Query
		}
		if fd := root.Fields.ForName(field.Name); fd != nil {
			if _, ok := f.ids[fd.Type.Name()]; ok {
				return fd.Type.Name()
			}
		}
		for _, s := range field.SelectionSet {
			if in, ok := s.(*ast.InlineFragment); ok {
				if _, ok := f.ids[in.TypeCondition]; ok {
					return in.TypeCondition
				}
			}
		}
		rest := strings.TrimLeftFunc(field.Name, unicode.IsLower)
		for typ := range f.ids {
			if strings.EqualFold(typ, rest) {
				return typ
			}
		}
		return rest
	}
	return ""
}

// formats are the string fields whose values have a format, by name.
var formats = []struct {
	name   *regexp.Regexp
	format func(n int) any
}{
	{regexp.MustCompile(`(?i)cidr|prefix|subnet`), func(n int) any { return fmt.Sprintf("10.%d.%d.0/24", 200+n/256, n%256) }},
	{regexp.MustCompile(`(?i)mac`), func(n int) any { return fmt.Sprintf("02:00:00:00:%02x:%02x", n/256, n%256) }},
	{regexp.MustCompile(`(?i)^(ip|address|gateway|startAddress|endAddress|start|end)$`), func(n int) any { return fmt.Sprintf("10.250.%d.%d", n/250, 1+n%250) }},
	{regexp.MustCompile(`(?i)email`), func(n int) any { return fmt.Sprintf("difftest-%d@example.com", n) }},
	{regexp.MustCompile(`(?i)url|endpoint`), func(n int) any { return fmt.Sprintf("https://example.com/difftest-%d", n) }},
	{regexp.MustCompile(`(?i)publicKey`), func(int) any {
		return "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl difftest"
	}},
}

// value derives a value of type typ for a variable or input field called name.
func (f *fixture) value(name string, typ *ast.Type) (any, error) {
	if typ.Elem != nil {
		v, err := f.value(name, typ.Elem)
		if err != nil {
			return nil, err
		}
		return []any{v}, nil
	}
	def := f.schema.Types[typ.Name()]
	if def == nil {
		return nil, fmt.Errorf("unknown type %s", typ.Name())
	}
	switch def.Kind {
	case ast.Enum:
		return def.EnumValues[0].Name, nil
	case ast.InputObject:
		obj := map[string]any{}
		for _, fd := range def.Fields {
			if !fd.Type.NonNull || fd.DefaultValue != nil {
				continue
			}
			if fd.Type.Name() == "ID" {
				typ := idVariables[fd.Name]
				if fd.Name == "id" || fd.Name == "ids" {
					typ = f.containedType(def.Name)
				}
				if typ == "" {
					typ = strings.TrimSuffix(strings.TrimSuffix(fd.Name, "IDs"), "ID")
					typ = strings.ToUpper(typ[:1]) + typ[1:]
				}
				id := f.id(typ, fd.Name, def.Name)
				if fd.Type.Elem != nil {
					obj[fd.Name] = []any{id}
				} else {
					obj[fd.Name] = id
				}
				continue
			}
			v, err := f.value(fd.Name, fd.Type)
			if err != nil {
				return nil, err
			}
			obj[fd.Name] = v
		}
		return obj, nil
	}
	f.n++
	switch typ.Name() {
	case "Int":
		switch name {
		case "first", "last":
			return 5, nil
		}
		return 1, nil
	case "Float":
		return 1.0, nil
	case "Boolean":
		return false, nil
	case "Time":
		return "2026-01-01T00:00:00Z", nil
	case "Labels", "JSON":
		return map[string]any{}, nil
	case "String":
		for _, ft := range formats {
			if ft.name.MatchString(name) {
				return ft.format(f.n), nil
			}
		}
		return fmt.Sprintf("difftest-%d", f.n), nil
	}
	return nil, fmt.Errorf("no value for the %s %s", def.Kind, typ.Name())
}

// containedType is the longest type with fixtures whose name is part of name
// (AssignmentStatusInput: Assignment).
func (f *fixture) containedType(name string) string {
	best := ""
	for typ := range f.ids {
		if strings.Contains(name, typ) && len(typ) > len(best) {
			best = typ
		}
	}
	return best
}

// missing is the id of no row: a variable naming a type the demo has no row of (a volume, a
// load balancer) gets it, and the operation answers NOT_FOUND on both executors.
const missing = "999999999"

// id is the fixture id of typ, else of the longest type with fixtures named in one of hints
// (the variable's name, the operation's name: GetHost, ClusterView), else missing.
func (f *fixture) id(typ string, hints ...string) string {
	if id, ok := f.ids[typ]; ok {
		return id
	}
	for _, h := range hints {
		if t := f.containedType(h); t != "" {
			return f.ids[t]
		}
	}
	return missing
}
