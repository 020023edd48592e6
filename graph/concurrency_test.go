package graph_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/virtflow/virtflow/internal/testkit/gqltest"
)

// TestConcurrentRackPlacement: many requests mounting hosts on the same units of one rack at
// the same time — as from several server replicas — leave exactly one device there. The
// placement hook locks the rack row (PostgreSQL FOR UPDATE) inside each mutation's
// transaction, so the check and the insert cannot interleave.
func TestConcurrentRackPlacement(t *testing.T) {
	env, f := newEnv(t)
	for round := range 5 {
		t.Run(fmt.Sprintf("round %d", round), func(t *testing.T) { racePlacement(t, env, f.Rack()) })
	}
}

func racePlacement(t *testing.T, env *gqltest.Env, rack string) {
	const writers = 24
	start := make(chan struct{})
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		ok   int
		errs = map[string]int{}
	)
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			r := env.Do(t, `mutation($input: CreateHostInput!) { createHost(input: $input) { id } }`, map[string]any{
				"input": map[string]any{"name": fmt.Sprintf("%s-racer-%d", uniq("h"), i), "rackID": rack, "position": 20, "height": 2},
			})
			mu.Lock()
			defer mu.Unlock()
			if len(r.Errors) == 0 {
				ok++
				return
			}
			errs[r.Errors[0].Code()+" "+r.Errors[0].Field()]++
		}()
	}
	close(start)
	wg.Wait()
	if ok != 1 {
		t.Fatalf("%d of %d concurrent placements at U20-U21 succeeded, want exactly 1 (errors: %v)", ok, writers, errs)
	}
	if errs["VALIDATION position"] != writers-1 {
		t.Errorf("the refused placements should all be VALIDATION on position, got %v", errs)
	}
	n := list(t, env, "Host", map[string]any{"where": map[string]any{"hasRackWith": []any{map[string]any{"id": rack}}}}, "").TotalCount
	if n != 1 {
		t.Errorf("rack holds %d hosts, want 1", n)
	}
}
