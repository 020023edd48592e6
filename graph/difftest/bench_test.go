package difftest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/virtflow/virtflow/demo"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

// benchQueries are the reads the rewrites were measured on (diagram's BenchmarkRacksList and
// BenchmarkHostsListing, over the demo here): a page of 100 racks, and every host with its
// eight relations (rack, floor, datacenter, compute node, cluster, zones, groups,
// maintainers), and the dashboard's VM list.
var benchQueries = []struct{ name, query string }{
	{"racks100", `{ racks(first: 100) { edges { node { id name row position height status } } } }`},
	{"hosts1000", `{ hosts(first: 1000) { edges { node { id name rack { name floor { datacenter { name } } }
		node { name cluster { name } } powerZone { name } networkZone { name }
		hostGroups(first: 10) { edges { node { name } } } maintainers(first: 10) { edges { node { name } } } } } } }`},
	{"vms100", `{ virtualMachines(first: 100) { totalCount edges { cursor node { id name status
		tenant { id name } flavor { id name } image { id name } node { id name } } } } }`},
}

// BenchmarkExecutors runs each of benchQueries through the rewritten and the stock executor,
// one database (the demo) and the same handler otherwise, in one run:
//
//	go test ./graph/difftest/ -run '^$' -bench Executors -benchtime 200x
func BenchmarkExecutors(b *testing.B) {
	env := gqltest.Postgres(b, testdb.New(b))
	if _, err := demo.Load(gqltest.System(), env.Client, nil); err != nil {
		b.Fatal(err)
	}
	handlers := []struct {
		name string
		h    http.Handler
	}{
		{"rewritten", env.Handler},
		{"stock", gqltest.NewHandler(env.DB, env.Identity, stockOptions())},
	}
	for _, q := range benchQueries {
		body, _ := json.Marshal(map[string]any{"query": q.query})
		var first []byte
		for _, h := range handlers {
			out := post(b, h.h, body)
			if first == nil {
				first = out
			} else if !bytes.Equal(first, out) {
				b.Fatalf("%s: the executors disagree:\n%s\n%s", q.name, first, out)
			}
		}
		if bytes.Contains(first, []byte(`"errors"`)) {
			b.Fatalf("%s: %s", q.name, first)
		}
		for _, h := range handlers {
			b.Run(q.name+"/"+h.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					post(b, h.h, body)
				}
			})
		}
	}
}

func post(b *testing.B, h http.Handler, body []byte) []byte {
	req := httptest.NewRequest(http.MethodPost, "/query", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+gqltest.AdminToken)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		b.Fatalf("HTTP %d: %s", rec.Code, rec.Body.String())
	}
	return rec.Body.Bytes()
}
