// Package poll is the one way tests wait for something that happens in another goroutine or
// process: Until polls a condition instead of sleeping for a guessed time.
package poll

import (
	"errors"
	"testing"
	"time"
)

// Interval is the wait between two checks of a condition.
const Interval = 20 * time.Millisecond

// stopped marks an error after which waiting longer is pointless.
type stopped struct{ err error }

func (s stopped) Error() string { return s.err.Error() }
func (s stopped) Unwrap() error { return s.err }

// Stop wraps err so that Until fails at once with it instead of polling on: a condition
// returns it when what it sees can no longer become what it awaits (a VM in ERROR while it
// waits for ACTIVE).
func Stop(err error) error { return stopped{err} }

// Until calls cond every Interval until it returns nil. When timeout passes first it fails tb
// with the last error cond returned, which says what was awaited and what was last seen
// ("VM 7 is CREATING, want ACTIVE"); when cond returns an error wrapped by Stop it fails tb
// at once with it.
func Until(tb testing.TB, timeout time.Duration, cond func() error) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := cond()
		if err == nil {
			return
		}
		var s stopped
		if errors.As(err, &s) {
			tb.Fatalf("gave up waiting: %v", err)
		}
		if time.Now().After(deadline) {
			tb.Fatalf("timed out after %s: %v", timeout, err)
		}
		time.Sleep(Interval)
	}
}
