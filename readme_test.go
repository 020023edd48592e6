package virtflow_test

import (
	"io"
	"log/slog"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/virtflow/virtflow/demo"
	"github.com/virtflow/virtflow/internal/gqltest"
)

// runnableBlock matches a ```graphql block right after a line "<!-- runnable -->": the README's
// examples that must run as written against the demo datacenter.
var runnableBlock = regexp.MustCompile("(?s)<!-- runnable -->\\s*\n```graphql\n(.*?)\n```")

// TestREADMEExamplesRun runs, as the admin, every README example marked runnable on a
// server loaded with the demo datacenter (what `go run ./cmd/server --demo` serves), and fails
// on any error, such as COMPLEXITY_LIMIT_EXCEEDED.
func TestREADMEExamplesRun(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := runnableBlock.FindAllStringSubmatch(string(readme), -1)
	if len(blocks) < 2 {
		t.Fatalf("README.md marks %d examples runnable; the first example query (Using the API) must be among them", len(blocks))
	}
	env := gqltest.SQLite(t)
	if _, err := demo.Load(gqltest.System(), env.Client, slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
		t.Fatal(err)
	}
	for i, b := range blocks {
		for _, op := range strings.Split(b[1], "\n\n") { // a block may hold several operations
			res := env.Do(t, op, nil)
			if len(res.Errors) > 0 {
				t.Errorf("README runnable example %d fails: %s\n%s", i+1, res.ErrorsString(), op)
			}
		}
	}
}
