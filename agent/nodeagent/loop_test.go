package nodeagent

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// TestPeriodic checks the agent's loops (heartbeat, resync, checks): a first run at once,
// runs on the ticker, a kick during a run makes exactly one more run after it (several
// kicks coalesce), runs never overlap, no run starts after ctx ended, and wait returns only once
// the run on when ctx ended returned.
func TestPeriodic(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var (
		runs, on, overlaps atomic.Int32
		release            = make(chan struct{})
		started            = make(chan int32, 16)
	)
	p := startPeriodic(ctx, time.Hour, func(context.Context) {
		if on.Add(1) > 1 {
			overlaps.Add(1)
		}
		n := runs.Add(1)
		started <- n
		if n <= 2 {
			<-release // runs 1 and 2 block until released
		}
		on.Add(-1)
	})
	if n := <-started; n != 1 {
		t.Fatalf("first run: got run %d", n)
	}
	// Three kicks during run 1: one more run after it, not three.
	p.kick()
	p.kick()
	p.kick()
	release <- struct{}{}
	if n := <-started; n != 2 {
		t.Fatalf("after kicks: got run %d", n)
	}
	release <- struct{}{}
	select {
	case n := <-started:
		t.Fatalf("kicks during run 1 coalesce into one run; got run %d", n)
	case <-time.After(200 * time.Millisecond):
	}
	// A kick while idle runs at once.
	p.kick()
	if n := <-started; n != 3 {
		t.Fatalf("kick while idle: got run %d", n)
	}

	// The ticker: a short period runs again and again.
	tctx, tcancel := context.WithCancel(context.Background())
	var ticks atomic.Int32
	tp := startPeriodic(tctx, 10*time.Millisecond, func(context.Context) { ticks.Add(1) })
	deadline := time.Now().Add(5 * time.Second)
	for ticks.Load() < 5 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if got := ticks.Load(); got < 5 {
		t.Fatalf("ticker: %d runs in 5 s at 10 ms", got)
	}
	tcancel()
	tp.wait()
	after := ticks.Load()
	time.Sleep(50 * time.Millisecond)
	if got := ticks.Load(); got != after {
		t.Fatalf("ran after wait returned: %d then %d", after, got)
	}

	// wait blocks while a run is on after ctx ended.
	bctx, bcancel := context.WithCancel(context.Background())
	hold := make(chan struct{})
	inRun := make(chan struct{})
	bp := startPeriodic(bctx, time.Hour, func(context.Context) { close(inRun); <-hold })
	<-inRun
	bcancel()
	done := make(chan struct{})
	go func() { bp.wait(); close(done) }()
	select {
	case <-done:
		t.Fatal("wait returned while a run was on")
	case <-time.After(100 * time.Millisecond):
	}
	close(hold)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("wait did not return after the run ended")
	}
	if overlaps.Load() != 0 {
		t.Fatalf("%d runs overlapped", overlaps.Load())
	}
}
