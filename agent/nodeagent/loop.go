package nodeagent

import (
	"context"
	"sync"
	"time"
)

// periodic runs fn at once, then on every tick of a d ticker and whenever kicked, until
// ctx ends: never two runs at once, and ticks and kicks that come while fn runs make one
// more run after it (as a time.Ticker keeps one tick and a kick channel of one slot keeps
// one kick). Unlike a goroutine looping on a ticker, it holds no goroutine between runs: a
// timer's callback starts one for the run. A server with --demo runs hundreds of agents in
// its own process, each with a heartbeat, a resync and a checks loop that sit idle almost
// all the time, and a parked goroutine each is a stack each.
type periodic struct {
	ctx context.Context
	d   time.Duration
	fn  func(context.Context)

	mu      sync.Mutex
	tick    *time.Timer
	running bool // a run's goroutine is on
	pending bool // a tick or kick came during the run: run again
	stopped bool // ctx ended: no new run
	wg      sync.WaitGroup
}

// startPeriodic starts p's first run and its ticker; wait returns once ctx ended and the
// last run returned.
func startPeriodic(ctx context.Context, d time.Duration, fn func(context.Context)) *periodic {
	p := &periodic{ctx: ctx, d: d, fn: fn}
	p.mu.Lock()
	p.tick = time.AfterFunc(d, p.ticked)
	p.mu.Unlock()
	context.AfterFunc(ctx, p.stop)
	p.kick()
	return p
}

// ticked is the ticker: it kicks and re-arms for the next period, keeping a fixed rate
// whatever the runs take.
func (p *periodic) ticked() {
	p.mu.Lock()
	if !p.stopped {
		p.tick.Reset(p.d)
	}
	p.mu.Unlock()
	p.kick()
}

// kick asks for a run: now when none is on, else right after the current one.
func (p *periodic) kick() {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.stopped:
	case p.running:
		p.pending = true
	default:
		p.running = true
		p.wg.Add(1) // under mu and before stopped: never concurrent with stop's Wait
		go p.run()
	}
}

// run calls fn until no tick or kick is pending.
func (p *periodic) run() {
	defer p.wg.Done()
	for {
		p.fn(p.ctx)
		p.mu.Lock()
		if !p.pending || p.stopped {
			p.running, p.pending = false, false
			p.mu.Unlock()
			return
		}
		p.pending = false
		p.mu.Unlock()
	}
}

// stop ends the ticker and refuses new runs; it is called once ctx ends.
func (p *periodic) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopped = true
	p.tick.Stop()
}

// wait blocks until ctx ended and no run is on any more.
func (p *periodic) wait() {
	<-p.ctx.Done()
	p.mu.Lock()
	p.stopped = true // stop may not have run yet; after this no run starts
	p.mu.Unlock()
	p.wg.Wait()
}
