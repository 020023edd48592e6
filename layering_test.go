package virtflow_test

import (
	"bufio"
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// module is the project's module path; packages under it are "the project".
const module = "github.com/virtflow/virtflow"

// serverOnly are the server's ORM, SQL driver and GraphQL executor: the node agent, the CLI and
// the Terraform provider talk to the server over GraphQL and must not link them.
var serverOnly = []string{"entgo.io/ent", "github.com/lib/pq", "github.com/99designs/gqlgen"}

// pkgInfo is what `go list -deps` says about one package.
type pkgInfo struct {
	standard bool
	imports  []string // direct imports
	deps     []string // all transitive dependencies
}

// listDeps runs `go list -deps` on roots and returns every package reached, by import path.
func listDeps(t *testing.T, roots ...string) map[string]pkgInfo {
	t.Helper()
	args := append([]string{"list", "-deps", "-f", "{{.ImportPath}}\t{{.Standard}}\t{{join .Imports \" \"}}\t{{join .Deps \" \"}}"}, roots...)
	cmd := exec.Command("go", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	pkgs := map[string]pkgInfo{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) != 4 {
			t.Fatalf("unexpected go list line %q", sc.Text())
		}
		pkgs[f[0]] = pkgInfo{standard: f[1] == "true", imports: strings.Fields(f[2]), deps: strings.Fields(f[3])}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return pkgs
}

// under reports whether path is prefix or a package below it.
func under(path, prefix string) bool {
	return path == prefix || strings.HasPrefix(path, prefix+"/")
}

// chain returns the shortest import chain from root to target ("a -> b -> c"), so that a
// failure says which import brought the forbidden package in.
func chain(pkgs map[string]pkgInfo, root, target string) string {
	prev := map[string]string{root: ""}
	queue := []string{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if p == target {
			var path []string
			for q := target; q != ""; q = prev[q] {
				path = append(path, q)
			}
			slices.Reverse(path)
			return strings.Join(path, " -> ")
		}
		for _, imp := range pkgs[p].imports {
			if _, seen := prev[imp]; !seen {
				prev[imp] = p
				queue = append(queue, imp)
			}
		}
	}
	return root + " -> ... -> " + target
}

// TestImportRules holds the layering rules of README.md's Architecture section with
// `go list -deps`. The top folders name the roles: gateway/ (with graph/) is the API's edge,
// controllers/ the asynchronous loops and tasks, domain/ the rules, store/ persistence, agent/
// what runs on a hypervisor host, clients/ what talks to the API from outside, internal/app the
// composition root, internal/platform process helpers, internal/testkit test harnesses.
//
//   - the domain imports neither the gateway, graph, the controllers' loops that need it, the
//     clients, nor the composition root;
//   - the controllers import neither the gateway nor graph;
//   - the store imports nothing of the project but ent and the error vocabulary;
//   - the node agent, the CLI and the Terraform provider link neither ent, lib/pq nor gqlgen,
//     and the clients import no server role;
//   - the scheduler and the hypervisor interface import nothing of the project but their own
//     subpackages;
//   - apierr (the error vocabulary) and domain/guest/credential (what the agent needs of guest)
//     import only the standard library.
func TestImportRules(t *testing.T) {
	const (
		agent     = module + "/cmd/nodeagent"
		cli       = module + "/cmd/virtflow"
		provider  = module + "/cmd/terraform-provider-virtflow"
		scheduler = module + "/domain/scheduler"
		hyper     = module + "/agent/hypervisor"
		apierr    = module + "/domain/apierr"
		cred      = module + "/domain/guest/credential"
	)
	pkgs := listDeps(t, agent, cli, provider, module+"/domain/...", module+"/controllers/...", module+"/store/...",
		module+"/clients/...", hyper+"/...")

	for _, root := range []string{agent, cli, provider} {
		for _, banned := range serverOnly {
			var hits []string
			for _, dep := range pkgs[root].deps {
				if under(dep, banned) {
					hits = append(hits, dep)
				}
			}
			if len(hits) > 0 {
				t.Errorf("%s links %d packages of %s (server only), e.g. %s", root, len(hits), banned, chain(pkgs, root, hits[0]))
			}
		}
	}

	// Role rules: no package under a role imports (directly) a package of a role it must not.
	gateway := []string{module + "/gateway", module + "/graph"}
	server := append([]string{module + "/controllers", module + "/domain", module + "/store", module + "/internal/app",
		module + "/ent"}, gateway...)
	roles := []struct {
		role      string
		forbidden []string
		allowed   []string // exceptions under a forbidden prefix
	}{
		{module + "/domain", append([]string{module + "/clients", module + "/internal/app", module + "/cmd"}, gateway...), nil},
		{module + "/controllers", gateway, nil},
		{module + "/store", []string{module + "/gateway", module + "/graph", module + "/controllers", module + "/domain",
			module + "/clients", module + "/agent", module + "/internal/app"}, []string{apierr}},
		{module + "/clients", server, []string{apierr}},
	}
	for _, r := range roles {
		for path, p := range pkgs {
			if !under(path, r.role) {
				continue
			}
			for _, imp := range p.imports {
				for _, bad := range r.forbidden {
					if under(imp, bad) && !slices.Contains(r.allowed, imp) {
						t.Errorf("%s imports %s: %s may not import %s", path, imp, r.role, bad)
					}
				}
			}
		}
	}

	for _, own := range []string{scheduler, hyper} {
		for path, p := range pkgs {
			if !under(path, own) {
				continue
			}
			for _, dep := range p.deps {
				if under(dep, module) && !under(dep, own) {
					t.Errorf("%s imports %s; %s may import nothing of the project but its own subpackages: %s", path, dep, own, chain(pkgs, path, dep))
				}
			}
		}
	}

	for _, root := range []string{apierr, cred} {
		for _, dep := range pkgs[root].deps {
			if !pkgs[dep].standard {
				t.Errorf("%s imports %s; it may import only the standard library: %s", root, dep, chain(pkgs, root, dep))
			}
		}
	}

	// The rules above must have looked at something: a renamed package would pass them vacuously.
	for _, root := range []string{agent, cli, provider, scheduler, hyper, apierr, cred} {
		if _, ok := pkgs[root]; !ok {
			t.Errorf("go list did not report %s; update TestImportRules after moving it", root)
		}
	}
}
