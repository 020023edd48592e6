// Package poll is the one way tests wait for something that happens in another goroutine or
// process: Until polls a condition instead of sleeping for a guessed time.
package poll

import (
	"testing"
	"time"
)

// Interval is the wait between two checks of a condition.
const Interval = 20 * time.Millisecond

// Until calls cond every Interval until it returns nil. When timeout passes first it fails tb
// with the last error cond returned, which says what was awaited and what was last seen
// ("VM 7 is CREATING, want ACTIVE").
func Until(tb testing.TB, timeout time.Duration, cond func() error) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("timed out after %s: %v", timeout, err)
		}
		time.Sleep(Interval)
	}
}
