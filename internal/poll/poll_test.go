package poll_test

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/virtflow/virtflow/internal/poll"
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
