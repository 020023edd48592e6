package nodeagent

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"
)

// Defaults of the flap guard (see flapGuard).
const (
	// DefaultFlapLimit is how many power changes of one domain within DefaultFlapWindow make
	// it flapping.
	DefaultFlapLimit = 4
	// DefaultFlapWindow is the window the power changes are counted in, and the first
	// back-off; each further flap doubles the back-off, up to 8 windows.
	DefaultFlapWindow = 10 * time.Minute
	// flapCheck is the checkName of the WARNING event a flapping domain raises.
	flapCheck = "domain-flapping"
)

// flapGuard notices a domain the agent keeps starting and stopping (issue 24: two
// assignments of one VM on one node made the agent stop and start it every 30 s while the
// API read ACTIVE). Every power change the agent makes to correct drift (a domain that
// existed goes from running to stopped or back for an assignment already applied: not a
// new start or stop request, which comes PENDING) is counted per VM; limit changes within window make the
// domain flapping: the agent then leaves it alone for a back-off (window, doubling with
// every further flap, at most 8 windows), reports its assignment FAILED with the reason, and
// raises a WARNING event (checkName domain-flapping, labels vm and domain), so that the VM
// reads ERROR saying why instead of flapping silently.
type flapGuard struct {
	limit  int
	window time.Duration
	now    func() time.Time

	mu    sync.Mutex
	state map[int64]*flapState
}

type flapState struct {
	changes []time.Time // power changes within the window, oldest first
	until   time.Time   // no action before this time (zero: none)
	backoff time.Duration
}

func newFlapGuard(limit int, window time.Duration, now func() time.Time) *flapGuard {
	if limit <= 0 {
		limit = DefaultFlapLimit
	}
	if window <= 0 {
		window = DefaultFlapWindow
	}
	if now == nil {
		now = time.Now
	}
	return &flapGuard{limit: limit, window: window, now: now, state: map[int64]*flapState{}}
}

// holding reports whether VM vm's domain is backed off, and until when.
func (g *flapGuard) holding(vm int64) (time.Time, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	st := g.state[vm]
	if st == nil || st.until.IsZero() || !g.now().Before(st.until) {
		return time.Time{}, false
	}
	return st.until, true
}

// changed records a power change of VM vm's domain; it returns the back-off's end and the
// number of changes in the window when this change makes the domain flapping.
func (g *flapGuard) changed(vm int64) (until time.Time, n int, flapping bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now()
	st := g.state[vm]
	if st == nil {
		st = &flapState{}
		g.state[vm] = st
	}
	keep := st.changes[:0]
	for _, t := range st.changes {
		if now.Sub(t) < g.window {
			keep = append(keep, t)
		}
	}
	st.changes = append(keep, now)
	if len(st.changes) < g.limit {
		return time.Time{}, len(st.changes), false
	}
	switch {
	case st.backoff == 0:
		st.backoff = g.window
	case st.backoff < 8*g.window:
		st.backoff *= 2
	}
	n = len(st.changes)
	st.changes = st.changes[:0]
	st.until = now.Add(st.backoff)
	return st.until, n, true
}

// flapReason is the reason a flapping domain's assignment is reported FAILED with.
func (g *flapGuard) flapReason(name string, n int, until time.Time) string {
	return fmt.Sprintf("domain %s flapping: its power state changed %d times within %s; the agent leaves it alone until %s "+
		"(look for conflicting assignments of the VM or something else starting and stopping it)",
		name, n, g.window, until.UTC().Format(time.RFC3339))
}

// flapEvent sends the WARNING event of a flapping domain (best effort: the assignment's
// FAILED report says it too).
func (ag *Agent) flapEvent(ctx context.Context, vm int64, name, reason string) {
	labels := map[string]string{"vm": strconv.FormatInt(vm, 10), "domain": name}
	in := []ReportEventInput{{NodeID: ag.NodeID(), CheckName: flapCheck, Status: EventStatusWarning, Output: &reason, Labels: &labels}}
	if _, err := reportEvents(ctx, ag.api, in); err != nil && ctx.Err() == nil {
		ag.log.Warn("report flapping domain failed", "domain", name, "err", err)
	}
}
