package graph

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/apierr"
)

// Limits bound what an operation's text may ask for. They are checked on the raw request,
// before gqlgen validates the document and before any resolver runs, so a refusal costs one
// linear pass over the text: validation itself is quadratic in places (the overlap rule
// compares every pair of fields sharing a response name) and the complexity estimate expands
// every fragment spread, which is exponential in a "fragment bomb".
type Limits struct {
	// MaxQueryBytes bounds the length of the query text.
	MaxQueryBytes int
	// MaxTokens bounds the lexical tokens of the query text (names, punctuation, values).
	MaxTokens int
	// MaxFragmentSpreads bounds the fragment spreads of the document, counted after
	// expansion: a fragment spread twice inside a fragment spread twice counts four times.
	MaxFragmentSpreads int
	// MaxFields bounds the selected fields of the document, counted after expansion.
	MaxFields int
	// MaxAliases bounds the aliased fields of the document, counted after expansion.
	MaxAliases int
	// MaxRepeatedField bounds how often one response name is selected within one selection
	// set (fragments included); validation compares every such pair with each other.
	MaxRepeatedField int
	// MaxInputDepth bounds the nesting of argument values and variables (each object and
	// list is a level): `where: {and: [{name: "x"}]}` is three levels deep.
	MaxInputDepth int
}

// DefaultLimits are the limits for requests with a token: well above what the dashboard
// and the introspection query need.
func DefaultLimits() Limits {
	return Limits{
		MaxQueryBytes:      64 << 10,
		MaxTokens:          10_000,
		MaxFragmentSpreads: 500,
		MaxFields:          5_000,
		MaxAliases:         200,
		MaxRepeatedField:   30,
		MaxInputDepth:      24,
	}
}

// DefaultAnonymousLimits are the limits for requests without a token, which may only log in
// or read the schema (GraphiQL's introspection query fits).
func DefaultAnonymousLimits() Limits {
	return Limits{
		MaxQueryBytes:      8 << 10,
		MaxTokens:          1_500,
		MaxFragmentSpreads: 100,
		MaxFields:          500,
		MaxAliases:         20,
		MaxRepeatedField:   10,
		MaxInputDepth:      8,
	}
}

func (l Limits) validate(who string) error {
	for name, v := range map[string]int{"MaxQueryBytes": l.MaxQueryBytes, "MaxTokens": l.MaxTokens,
		"MaxFragmentSpreads": l.MaxFragmentSpreads, "MaxFields": l.MaxFields, "MaxAliases": l.MaxAliases,
		"MaxRepeatedField": l.MaxRepeatedField, "MaxInputDepth": l.MaxInputDepth} {
		if v < 1 {
			return fmt.Errorf("%s limits: %s must be at least 1, got %d", who, name, v)
		}
	}
	return nil
}

// costGuard applies Limits (the tighter anonymous ones when the request carries no viewer)
// and refuses text PostgreSQL cannot store (NUL bytes, invalid UTF-8) in any string argument
// or variable, naming the argument. It runs as an OperationParameterMutator: after the
// transport decoded the request, before gqlgen parses and validates it.
//
// What a query's text costs does not change between requests, so the parsed document and
// its counts are kept by query text (and by limit set: the token limit differs without a
// token): dashboards repeat the same few queries, and only the variables are checked again.
type costGuard struct {
	schema          *ast.Schema
	limits          Limits
	anonymousLimits Limits
	parsed          *lru.LRU[*parsedQuery]
}

// parsedQuery is a query text that passed the text limits: its document and its counts.
type parsedQuery struct {
	doc           *ast.QueryDocument
	total         cost
	repeated      string
	repeatedTimes int
}

// newCostGuard returns the guard of schema's operations, remembering the last 1,000 query
// texts it parsed.
func newCostGuard(schema *ast.Schema, limits, anonymous Limits) costGuard {
	return costGuard{schema: schema, limits: limits, anonymousLimits: anonymous, parsed: lru.New[*parsedQuery](1000)}
}

var (
	_ graphql.HandlerExtension          = costGuard{}
	_ graphql.OperationParameterMutator = costGuard{}
)

// ExtensionName implements graphql.HandlerExtension.
func (costGuard) ExtensionName() string { return "CostGuard" }

// Validate implements graphql.HandlerExtension.
func (g costGuard) Validate(graphql.ExecutableSchema) error {
	if err := g.limits.validate("request"); err != nil {
		return err
	}
	return g.anonymousLimits.validate("anonymous request")
}

// MutateOperationParameters implements graphql.OperationParameterMutator.
func (g costGuard) MutateOperationParameters(ctx context.Context, p *graphql.RawParams) *gqlerror.Error {
	lim, who := g.limits, ""
	if authz.FromContext(ctx) == nil {
		lim, who = g.anonymousLimits, " without a token"
	}
	tooLarge := func(limit string, max int, format string, args ...any) *gqlerror.Error {
		e := gqlerror.Errorf("%s; the limit%s is %d", fmt.Sprintf(format, args...), who, max)
		e.Extensions = map[string]any{"code": string(apierr.CodeQueryTooLarge), "limit": limit, "max": max}
		return e
	}
	if len(p.Query) > lim.MaxQueryBytes {
		return tooLarge("queryBytes", lim.MaxQueryBytes, "the query is %d bytes long", len(p.Query))
	}
	key := who + "\x00" + p.Query
	q, ok := g.parsed.Get(ctx, key)
	if !ok {
		doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: p.Query}, lim.MaxTokens)
		if err != nil {
			ge, ok := err.(*gqlerror.Error)
			if !ok {
				return nil // gqlgen parses again and reports it
			}
			if strings.HasPrefix(ge.Message, "exceeded token limit") {
				return tooLarge("tokens", lim.MaxTokens, "the query has more than %d tokens", lim.MaxTokens)
			}
			errcode.Set(ge, errcode.ParseFailed)
			return ge
		}
		c := newDocCounter(doc)
		q = &parsedQuery{doc: doc, total: c.document()}
		q.repeated, q.repeatedTimes = c.mostRepeated()
		g.parsed.Add(ctx, key, q)
	}
	doc, total := q.doc, q.total
	switch {
	case total.spreads > lim.MaxFragmentSpreads:
		return tooLarge("fragmentSpreads", lim.MaxFragmentSpreads, "the query spreads fragments %s times (counted after expansion)", count(total.spreads))
	case total.fields > lim.MaxFields:
		return tooLarge("fields", lim.MaxFields, "the query selects %s fields (counted after expansion)", count(total.fields))
	case total.aliases > lim.MaxAliases:
		return tooLarge("aliases", lim.MaxAliases, "the query has %s aliases (counted after expansion)", count(total.aliases))
	}
	if q.repeatedTimes > lim.MaxRepeatedField {
		return tooLarge("repeatedField", lim.MaxRepeatedField, "%q is selected %s times in one selection set", q.repeated, count(q.repeatedTimes))
	}
	in := inputCheck{schema: g.schema, vars: p.Variables, maxDepth: lim.MaxInputDepth, checked: map[string]bool{}}
	if e := in.document(doc); e != nil {
		return e
	}
	if !utf8.ValidString(p.Query) {
		return validation("query", "the query is not valid UTF-8")
	}
	return nil
}

// count prints a saturated count as "more than …".
func count(n int) string {
	if n >= saturated {
		return fmt.Sprintf("more than %d", saturated)
	}
	return fmt.Sprint(n)
}

func validation(field, format string, args ...any) *gqlerror.Error {
	e := gqlerror.Errorf("%s: %s", field, fmt.Sprintf(format, args...))
	e.Extensions = map[string]any{"code": string(apierr.CodeValidation), "field": field}
	return e
}

// saturated caps every count so that a fragment bomb cannot overflow it.
const saturated = 1 << 40

func add(a, b int) int { return min(a+b, saturated) }

// cost is what a selection set expands to.
type cost struct{ fields, aliases, spreads int }

func (c cost) plus(o cost) cost {
	return cost{add(c.fields, o.fields), add(c.aliases, o.aliases), add(c.spreads, o.spreads)}
}

// docCounter counts a document's selections after fragment expansion in time linear in its
// text: each fragment is counted once and its count reused wherever it is spread. A cyclic
// spread counts nothing (validation refuses the cycle).
type docCounter struct {
	doc      *ast.QueryDocument
	costs    map[string]cost
	names    map[string]map[string]int
	visiting map[string]bool
	worst    string
	worstN   int
}

func newDocCounter(doc *ast.QueryDocument) *docCounter {
	return &docCounter{doc: doc, costs: map[string]cost{}, names: map[string]map[string]int{}, visiting: map[string]bool{}}
}

// document is the cost of every operation in the document, each expanded.
func (c *docCounter) document() cost {
	var total cost
	for _, op := range c.doc.Operations {
		total = total.plus(c.set(op.SelectionSet))
	}
	return total
}

func (c *docCounter) set(set ast.SelectionSet) cost {
	var out cost
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			out.fields = add(out.fields, 1)
			if s.Alias != "" && s.Alias != s.Name {
				out.aliases = add(out.aliases, 1)
			}
			out = out.plus(c.set(s.SelectionSet))
		case *ast.InlineFragment:
			out = out.plus(c.set(s.SelectionSet))
		case *ast.FragmentSpread:
			out.spreads = add(out.spreads, 1)
			out = out.plus(c.fragment(s.Name))
		}
	}
	return out
}

func (c *docCounter) fragment(name string) cost {
	if got, ok := c.costs[name]; ok {
		return got
	}
	def := c.doc.Fragments.ForName(name)
	if def == nil || c.visiting[name] {
		return cost{}
	}
	c.visiting[name] = true
	got := c.set(def.SelectionSet)
	delete(c.visiting, name)
	c.costs[name] = got
	return got
}

// mostRepeated returns the response name selected most often within one selection set of the
// document (operations and fragments, fragments merged into where they are spread).
func (c *docCounter) mostRepeated() (string, int) {
	for _, op := range c.doc.Operations {
		c.repeats(op.SelectionSet)
	}
	for _, f := range c.doc.Fragments {
		c.fragmentNames(f.Name)
	}
	return c.worst, c.worstN
}

// repeats visits every selection set below set and returns the response names of set itself.
func (c *docCounter) repeats(set ast.SelectionSet) map[string]int {
	out := map[string]int{}
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			name := s.Alias
			if name == "" {
				name = s.Name
			}
			out[name] = add(out[name], 1)
			c.repeats(s.SelectionSet)
		case *ast.InlineFragment:
			for k, n := range c.repeats(s.SelectionSet) {
				out[k] = add(out[k], n)
			}
		case *ast.FragmentSpread:
			for k, n := range c.fragmentNames(s.Name) {
				out[k] = add(out[k], n)
			}
		}
	}
	for k, n := range out {
		if n > c.worstN {
			c.worst, c.worstN = k, n
		}
	}
	return out
}

func (c *docCounter) fragmentNames(name string) map[string]int {
	if got, ok := c.names[name]; ok {
		return got
	}
	def := c.doc.Fragments.ForName(name)
	if def == nil || c.visiting[name] {
		return nil
	}
	c.visiting[name] = true
	got := c.repeats(def.SelectionSet)
	delete(c.visiting, name)
	c.names[name] = got
	return got
}

// inputCheck walks every argument value of a document (and the variables they use) and
// refuses values nested deeper than maxDepth and strings with NUL bytes or invalid UTF-8,
// naming the argument or input field (the one holding a JSON scalar, for values inside one).
type inputCheck struct {
	schema   *ast.Schema
	vars     map[string]any
	maxDepth int
	checked  map[string]bool
	varDefs  ast.VariableDefinitionList
}

func (in *inputCheck) document(doc *ast.QueryDocument) *gqlerror.Error {
	for _, op := range doc.Operations {
		in.varDefs = op.VariableDefinitions
		var root *ast.Definition
		if in.schema != nil {
			switch op.Operation {
			case ast.Mutation:
				root = in.schema.Mutation
			case ast.Subscription:
				root = in.schema.Subscription
			default:
				root = in.schema.Query
			}
		}
		if e := in.set(root, op.SelectionSet); e != nil {
			return e
		}
		for _, d := range op.VariableDefinitions {
			if d.DefaultValue != nil {
				if e := in.literal(d.Variable, d.Type, d.DefaultValue, 1); e != nil {
					return e
				}
			}
		}
	}
	in.varDefs = nil
	for _, f := range doc.Fragments {
		if e := in.set(in.typ(f.TypeCondition), f.SelectionSet); e != nil {
			return e
		}
	}
	// Variables no argument uses (or used only in directives) are checked under their own name.
	for name, v := range in.vars {
		if !in.checked[name] {
			in.checked[name] = true
			if e := in.value(name, nil, v, 1); e != nil {
				return e
			}
		}
	}
	return nil
}

func (in *inputCheck) typ(name string) *ast.Definition {
	if in.schema == nil || name == "" {
		return nil
	}
	return in.schema.Types[name]
}

func (in *inputCheck) set(parent *ast.Definition, set ast.SelectionSet) *gqlerror.Error {
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			var def *ast.FieldDefinition
			if parent != nil {
				def = parent.Fields.ForName(s.Name)
			}
			for _, a := range s.Arguments {
				var t *ast.Type
				if def != nil {
					if ad := def.Arguments.ForName(a.Name); ad != nil {
						t = ad.Type
					}
				}
				if e := in.literal(a.Name, t, a.Value, 1); e != nil {
					return e
				}
			}
			var child *ast.Definition
			if def != nil {
				child = in.typ(def.Type.Name())
			}
			if e := in.set(child, s.SelectionSet); e != nil {
				return e
			}
		case *ast.InlineFragment:
			next := parent
			if s.TypeCondition != "" {
				next = in.typ(s.TypeCondition)
			}
			if e := in.set(next, s.SelectionSet); e != nil {
				return e
			}
		}
	}
	return nil
}

// inputField returns the type of field name of input type t, or nil when t is not an input
// object (a JSON scalar, or unknown).
func (in *inputCheck) inputField(t *ast.Type, name string) (*ast.Type, bool) {
	if t == nil {
		return nil, false
	}
	def := in.typ(t.Name())
	if def == nil || def.Kind != ast.InputObject {
		return nil, false
	}
	if f := def.Fields.ForName(name); f != nil {
		return f.Type, true
	}
	return nil, false
}

func elem(t *ast.Type) *ast.Type {
	if t == nil || t.Elem == nil {
		return t // a single value given for a list is coerced into one
	}
	return t.Elem
}

func (in *inputCheck) tooDeep(field string) *gqlerror.Error {
	e := gqlerror.Errorf("%s: the value is nested more than %d levels deep", field, in.maxDepth)
	e.Extensions = map[string]any{"code": string(apierr.CodeQueryTooLarge), "limit": "inputDepth", "max": in.maxDepth, "field": field}
	return e
}

// literal checks a value written in the query text.
func (in *inputCheck) literal(field string, t *ast.Type, v *ast.Value, depth int) *gqlerror.Error {
	if v == nil {
		return nil
	}
	switch v.Kind {
	case ast.Variable:
		if in.checked[v.Raw] {
			return nil
		}
		in.checked[v.Raw] = true
		if val, ok := in.vars[v.Raw]; ok {
			return in.value(field, t, val, depth)
		}
	case ast.StringValue, ast.BlockValue:
		return checkText(field, v.Raw)
	case ast.ListValue, ast.ObjectValue:
		if depth > in.maxDepth {
			return in.tooDeep(field)
		}
		for _, c := range v.Children {
			f, ft := field, elem(t)
			if v.Kind == ast.ObjectValue {
				if typ, ok := in.inputField(t, c.Name); ok {
					f, ft = c.Name, typ
				} else if t == nil || in.typ(t.Name()) == nil || in.typ(t.Name()).Kind == ast.InputObject {
					f, ft = c.Name, nil // unknown field: validation names it
				} else {
					ft = t // inside a JSON scalar: keep naming the argument
				}
				if err := checkText(f, c.Name); err != nil {
					return err
				}
			}
			if e := in.literal(f, ft, c.Value, depth+1); e != nil {
				return e
			}
		}
	}
	return nil
}

// value checks a value decoded from the request's variables.
func (in *inputCheck) value(field string, t *ast.Type, v any, depth int) *gqlerror.Error {
	switch x := v.(type) {
	case string:
		return checkText(field, x)
	case []any:
		if depth > in.maxDepth {
			return in.tooDeep(field)
		}
		for _, c := range x {
			if e := in.value(field, elem(t), c, depth+1); e != nil {
				return e
			}
		}
	case map[string]any:
		if depth > in.maxDepth {
			return in.tooDeep(field)
		}
		for k, c := range x {
			f, ft := field, t
			if typ, ok := in.inputField(t, k); ok {
				f, ft = k, typ
			} else if t == nil || in.typ(t.Name()) == nil || in.typ(t.Name()).Kind == ast.InputObject {
				f, ft = k, nil
			}
			if e := checkText(f, k); e != nil {
				return e
			}
			if e := in.value(f, ft, c, depth+1); e != nil {
				return e
			}
		}
	}
	return nil
}

// checkText refuses text PostgreSQL cannot store.
func checkText(field, s string) *gqlerror.Error {
	if strings.IndexByte(s, 0) >= 0 {
		return validation(field, "must not contain NUL characters (\\u0000)")
	}
	if !utf8.ValidString(s) {
		return validation(field, "must be valid UTF-8")
	}
	return nil
}
