package nodeagent

import (
	"testing"
	"time"
)

// TestBackOffJitters: the waits grow to the cap and are spread, not the same for every agent.
func TestBackOffJitters(t *testing.T) {
	const agents = 50
	seen := map[time.Duration]bool{}
	for range agents {
		b := newBackOff(time.Second, 30*time.Second)
		want := time.Second
		for i := range 10 {
			d := b.NextBackOff()
			if d < want/2 || d > want*3/2 {
				t.Fatalf("wait %d = %s; want within ±50 %% of %s", i, d, want)
			}
			if i == 0 {
				seen[d] = true
			}
			want = min(2*want, 30*time.Second)
		}
	}
	if len(seen) < agents/2 {
		t.Fatalf("%d agents drew only %d distinct first waits: no jitter", agents, len(seen))
	}
}
