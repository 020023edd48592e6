package alerting_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/virtflow/virtflow/controllers/alerting"
	"github.com/virtflow/virtflow/ent/event"
	"github.com/virtflow/virtflow/ent/eventrule"
)

// BenchmarkRuleEngine measures the rule engine on PostgreSQL: per iteration, 1,000 events
// from agent batches (10 nodes × 20 checks, batches of 100, through Report as reportEvents
// stores them) then processed by 4 concurrent workers (ProcessEvents, a transaction per
// chunk of events) against a Filter, a Silence, an Aggregate (group-by node) and two Action rules
// (CreateAlert with a 60 s reissue window; every event also repeats an open alert). It
// reports events/s processed (rules only) and events/s end to end (stored + processed).
func BenchmarkRuleEngine(b *testing.B) {
	db, s := site(b, 10)
	c := db.Client
	ctx := sys()
	rule(c, "drop-debug", eventrule.KindFilter).SetCheckNamePattern("debug-*").SaveX(ctx)
	rule(c, "mute-lab", eventrule.KindSilence).SetLabelMatchers(map[string]string{"env": "lab"}).SaveX(ctx)
	rule(c, "by-node", eventrule.KindAggregate).SetAction(eventrule.ActionCreateAlert).SetGroupBy([]string{"node"}).
		SetAggregateWindowSeconds(30).SaveX(ctx)
	rule(c, "alert", eventrule.KindAction).SetAction(eventrule.ActionCreateAlert).SetReissueSeconds(60).SaveX(ctx)
	rule(c, "count", eventrule.KindAction).SetAction(eventrule.ActionCreateAlert).SetCheckNamePattern("check-1*").
		SetAlertSeverity(eventrule.AlertSeverityWarning).SaveX(ctx)
	e := &alerting.Engine{Client: c}
	const events, batch, workers = 1000, 100, 4
	var processing, total time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		var ids []int
		for k := 0; k < events/batch; k++ {
			in := make([]alerting.EventInput, batch)
			for j := range in {
				n := (k*batch + j) % len(s.Nodes)
				in[j] = alerting.EventInput{NodeID: s.Nodes[n].ID, CheckName: fmt.Sprintf("check-%d", j%20),
					Status: event.StatusCritical, Output: "value over threshold"}
			}
			ids = append(ids, report(b, c, ctx, in...)...)
		}
		mid := time.Now()
		var wg sync.WaitGroup
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				part := ids[w*len(ids)/workers : (w+1)*len(ids)/workers]
				if err := e.ProcessEvents(ctx, part); err != nil {
					b.Error(err)
				}
			}()
		}
		wg.Wait()
		processing += time.Since(mid)
		total += time.Since(start)
	}
	b.ReportMetric(float64(events*b.N)/processing.Seconds(), "events/s-rules")
	b.ReportMetric(float64(events*b.N)/total.Seconds(), "events/s-end-to-end")
}

// BenchmarkEventToHook measures one event's way through everything production runs — the
// outbox relay, Redis, an Asynq worker, the rules (CREATE_ALERT and CALL_HOOK, no group
// wait) and the hook's HTTP POST — one event at a time, and reports the median and p99
// latency from reportEvents' commit to the hook's arrival.
func BenchmarkEventToHook(b *testing.B) {
	db, s := site(b, 1)
	c := db.Client
	ctx := sys()
	arrived := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case arrived <- struct{}{}:
		default:
		}
	}))
	defer srv.Close()
	rule(c, "alert", eventrule.KindAction).SetAction(eventrule.ActionCreateAlert).SaveX(ctx)
	rule(c, "hook", eventrule.KindAction).SetAction(eventrule.ActionCallHook).SetHookURL(srv.URL).SaveX(ctx)
	stop := pipeline(b, c, db.Dialect, privateRedis(b))
	defer stop()
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		report(b, c, ctx, alerting.EventInput{NodeID: s.Nodes[0].ID, CheckName: fmt.Sprintf("check-%d", i), Status: event.StatusCritical})
		select {
		case <-arrived:
		case <-time.After(30 * time.Second):
			b.Fatal("no hook within 30 s")
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "ms-p50")
	b.ReportMetric(float64(lat[(len(lat)*99)/100].Microseconds())/1000, "ms-p99")
}
