package fleet_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/internal/app"
	"github.com/virtflow/virtflow/internal/platform/config"
)

// BenchmarkDemoCreateToActive measures the whole path on one process, as `server --demo`
// runs it: embedded SQLite, in-process Redis and worker, and the simulated fleet (one agent
// per demo node, 336 of them). b.N VMs are created through GraphQL (8 at a time) and the
// clock stops when all are ACTIVE. It reports VMs/s and the seconds 1,000 VMs take.
func BenchmarkDemoCreateToActive(b *testing.B) {
	const token = "vf_fleet-bench-admin-token-0123456789"
	cfg, err := config.Load("server", []string{"--addr", "127.0.0.1:0", "--data-dir", b.TempDir(), "--demo"},
		func(string) string { return "" }, io.Discard)
	if err != nil {
		b.Fatal(err)
	}
	cfg.AdminToken, cfg.ShutdownGrace = token, 5*time.Second
	ctx, cancel := context.WithCancel(authz.SystemContext(context.Background(), "bench"))
	ready, done := make(chan string, 1), make(chan error, 1)
	go func() {
		done <- app.RunServer(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), func(a string) { ready <- a })
	}()
	defer func() { cancel(); <-done }()
	var url string
	select {
	case a := <-ready:
		url = "http://" + a + "/query"
	case err := <-done:
		b.Fatal(err)
	}
	// q runs one request; it only returns the error, so that the creating goroutines can
	// call it (b.Fatal belongs to the benchmark's own goroutine).
	q := func(query string, vars map[string]any, out any) error {
		body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		var r struct {
			Data   json.RawMessage
			Errors []any
		}
		if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
			return err
		}
		if len(r.Errors) > 0 {
			return fmt.Errorf("%v", r.Errors)
		}
		if out != nil {
			return json.Unmarshal(r.Data, out)
		}
		return nil
	}
	must := func(err error) {
		if err != nil {
			b.Fatal(err)
		}
	}
	var ref struct {
		VirtualMachines struct {
			Edges []struct {
				Node struct {
					Tenant, Region, Flavor struct{ ID string }
				}
			}
		}
	}
	must(q(`{ virtualMachines(first: 1) { edges { node { tenant { id } region { id } flavor { id } } } } }`, nil, &ref))
	if len(ref.VirtualMachines.Edges) == 0 {
		b.Fatal("the demo has no VM to copy tenant, region and flavor from")
	}
	vm := ref.VirtualMachines.Edges[0].Node
	var small struct {
		Flavors struct {
			Edges []struct{ Node struct{ ID string } }
		}
	}
	must(q(`{ flavors(first: 1, orderBy: {field: VCPUS}) { edges { node { id } } } }`, nil, &small))
	prefix := fmt.Sprintf("bench-%d-", time.Now().UnixNano())

	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	next := make(chan int)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := q(`mutation($in: CreateVirtualMachineInput!) { createVirtualMachine(input: $in) { id } }`, map[string]any{"in": map[string]any{
					"name": fmt.Sprintf("%s%05d", prefix, i), "tenantID": vm.Tenant.ID, "regionID": vm.Region.ID, "flavorID": small.Flavors.Edges[0].Node.ID,
				}}, nil); err != nil {
					b.Error(err)
				}
			}
		}()
	}
	for i := range b.N {
		next <- i
	}
	close(next)
	wg.Wait()
	if b.Failed() {
		return
	}
	for {
		var c struct{ A, E struct{ TotalCount int } }
		must(q(`query($p: String!) { a: virtualMachines(where: {nameHasPrefix: $p, status: ACTIVE}) { totalCount }
			e: virtualMachines(where: {nameHasPrefix: $p, status: ERROR}) { totalCount } }`, map[string]any{"p": prefix}, &c))
		if c.E.TotalCount > 0 {
			b.Fatalf("%d VMs in ERROR", c.E.TotalCount)
		}
		if c.A.TotalCount == b.N {
			break
		}
		if time.Since(start) > 10*time.Minute {
			b.Fatalf("after 10 minutes %d of %d VMs are ACTIVE", c.A.TotalCount, b.N)
		}
		time.Sleep(100 * time.Millisecond)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "VMs/s")
	b.ReportMetric(elapsed.Seconds()*1000/float64(b.N), "s/1000VMs")
}
