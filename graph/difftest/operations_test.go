package difftest

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/formatter"
	"github.com/vektah/gqlparser/v2/parser"
)

// operation is one named operation of a client of the API, with the fragments it uses.
type operation struct {
	// Key is the client and the operation's name: "dashboard/Hosts", "agent/discoverNode",
	// "clients/cli/GetHost" (cli is apiclient, the client of the CLI and the Terraform provider).
	Key  string
	Kind ast.Operation
	// Text is the operation and its fragments, formatted as one document.
	Text string
	Def  *ast.OperationDefinition
}

// repoRoot is the repository's root, two levels above this package.
const repoRoot = "../.."

// dashboardDocument matches a graphql(`…`) call of the dashboard: GraphQL Code Generator's
// client preset (frontend/codegen.ts) reads the same calls, without interpolation.
var dashboardDocument = regexp.MustCompile("graphql\\(`([^`]*)`")

// operations reads every operation of the dashboard (the graphql(`…`) documents of
// frontend/src), of the node agent (agent/nodeagent/operations.graphql) and of apiclient, the client
// of the CLI and the Terraform provider (clients/apiclient/operations.graphql), sorted by key.
func operations(t testing.TB) []operation {
	t.Helper()
	var dashboard []string
	err := filepath.WalkDir(filepath.Join(repoRoot, "frontend", "src"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "gql" { // GraphQL Code Generator's output
			return filepath.SkipDir
		}
		if d.IsDir() || !(strings.HasSuffix(path, ".ts") || strings.HasSuffix(path, ".tsx")) {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range dashboardDocument.FindAllStringSubmatch(string(src), -1) {
			dashboard = append(dashboard, m[1])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(dashboard) == 0 {
		t.Fatal("no graphql(`…`) document found under frontend/src")
	}
	var ops []operation
	ops = append(ops, documentOperations(t, "dashboard", "frontend/src", strings.Join(dashboard, "\n"))...)
	for client, file := range map[string]string{"agent": "agent/nodeagent/operations.graphql", "cli": "clients/apiclient/operations.graphql"} {
		src, err := os.ReadFile(filepath.Join(repoRoot, file))
		if err != nil {
			t.Fatal(err)
		}
		ops = append(ops, documentOperations(t, client, file, string(src))...)
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i].Key < ops[j].Key })
	return ops
}

// documentOperations splits the document src of one client into its operations, each with
// the fragments it reaches.
func documentOperations(t testing.TB, client, name, src string) []operation {
	t.Helper()
	doc, err := parser.ParseQuery(&ast.Source{Name: name, Input: src})
	if err != nil {
		t.Fatalf("parse the operations of %s: %v", name, err)
	}
	var ops []operation
	seen := map[string]bool{}
	for _, def := range doc.Operations {
		if def.Name == "" {
			t.Fatalf("%s: an operation without a name", name)
		}
		key := client + "/" + def.Name
		if seen[key] {
			t.Fatalf("%s: two operations named %s", name, def.Name)
		}
		seen[key] = true
		one := &ast.QueryDocument{Operations: ast.OperationList{def}}
		used := map[string]bool{}
		var visit func(ast.SelectionSet)
		visit = func(set ast.SelectionSet) {
			for _, s := range set {
				switch s := s.(type) {
				case *ast.Field:
					visit(s.SelectionSet)
				case *ast.InlineFragment:
					visit(s.SelectionSet)
				case *ast.FragmentSpread:
					if used[s.Name] {
						continue
					}
					used[s.Name] = true
					f := doc.Fragments.ForName(s.Name)
					if f == nil {
						t.Fatalf("%s: operation %s uses the unknown fragment %s", name, def.Name, s.Name)
					}
					one.Fragments = append(one.Fragments, f)
					visit(f.SelectionSet)
				}
			}
		}
		visit(def.SelectionSet)
		var b strings.Builder
		formatter.NewFormatter(&b).FormatQueryDocument(one)
		ops = append(ops, operation{Key: key, Kind: def.Operation, Text: b.String(), Def: def})
	}
	return ops
}
