package poll_test

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/virtflow/virtflow/internal/testkit/poll"
)

func TestUntilWaitsForTheCondition(t *testing.T) {
	var n atomic.Int32
	go func() {
		for range 3 {
			time.Sleep(poll.Interval)
			n.Add(1)
		}
	}()
	poll.Until(t, 10*time.Second, func() error {
		if got := n.Load(); got != 3 {
			return fmt.Errorf("%d ticks, want 3", got)
		}
		return nil
	})
}

// failRecorder is a testing.TB that records a failure instead of ending the test.
type failRecorder struct {
	testing.TB
	failed string
}

func (f *failRecorder) Helper() {}
func (f *failRecorder) Fatalf(format string, args ...any) {
	f.failed = format
	panic(f)
}

func TestUntilFailsAtTheTimeout(t *testing.T) {
	rec := &failRecorder{TB: t}
	func() {
		defer func() {
			if r := recover(); r != nil && r != rec {
				panic(r)
			}
		}()
		poll.Until(rec, 3*poll.Interval, func() error { return errors.New("never") })
	}()
	if rec.failed == "" {
		t.Fatal("Until returned although the condition never held")
	}
}

func TestUntilStopsAtOnce(t *testing.T) {
	rec := &failRecorder{TB: t}
	calls := 0
	func() {
		defer func() {
			if r := recover(); r != nil && r != rec {
				panic(r)
			}
		}()
		poll.Until(rec, time.Minute, func() error {
			calls++
			if calls == 2 {
				return fmt.Errorf("VM 7: %w", poll.Stop(errors.New("ERROR, want ACTIVE")))
			}
			return errors.New("CREATING, want ACTIVE")
		})
	}()
	if rec.failed == "" || calls != 2 {
		t.Fatalf("Until after a Stop error: failed %q after %d calls; want a failure after the second call", rec.failed, calls)
	}
}
