package metrics

import (
	"context"
	"errors"
	"maps"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/virtflow/virtflow/domain/apierr"
)

// Placement counts the placements a process makes: how long each took (deciding and
// committing, retries included) and why those that failed did. It implements the observer
// placement.Config.Observe takes; register it with the process's registry.
type Placement struct {
	duration *prometheus.HistogramVec
	failures *prometheus.CounterVec
}

// NewPlacement returns the placement metrics, registered with reg.
func NewPlacement(reg prometheus.Registerer) *Placement {
	p := &Placement{
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "virtflow_placement_duration_seconds",
			Help:    "Time to decide and commit a placement, retries included, by result (placed, failed).",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}, []string{"result"}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "virtflow_placement_failures_total",
			Help: "Placements refused, by error code (NO_CAPACITY, QUOTA_EXCEEDED, VALIDATION, INTERNAL) and reason (the scheduler filter that rejected the most nodes, Conflict when concurrent placements took the last capacity).",
		}, []string{"code", "reason"}),
	}
	reg.MustRegister(p.duration, p.failures)
	return p
}

// Observe records one placement that took d and ended with err (nil: placed).
func (p *Placement) Observe(d time.Duration, err error) {
	if err == nil {
		p.duration.WithLabelValues("placed").Observe(d.Seconds())
		return
	}
	p.duration.WithLabelValues("failed").Observe(d.Seconds())
	code, reason := FailureReason(err)
	p.failures.WithLabelValues(code, reason).Inc()
}

// FailureReason is the code and reason a placement error is counted under: the API error's
// code, and the reason that counted most in its extensions.reasons (ties: the first by
// name), or "none".
func FailureReason(err error) (code, reason string) {
	e, ok := apierr.As(err)
	if !ok {
		if errors.Is(err, context.Canceled) {
			return "CANCELED", "none"
		}
		return string(apierr.CodeInternal), "none"
	}
	reason = "none"
	reasons, _ := e.Extra["reasons"].(map[string]any)
	best := -1
	for _, k := range slices.Sorted(maps.Keys(reasons)) {
		if n, ok := reasons[k].(int); ok && n > best {
			best, reason = n, k
		}
	}
	return string(e.Code), reason
}

// Subscriptions exports the number of GraphQL subscriptions a server holds open, read from
// open at each scrape (livestatus.Hub.Subscribers).
func Subscriptions(reg prometheus.Registerer, open func() int) {
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "virtflow_subscriptions_open",
		Help: "GraphQL subscriptions this server holds open.",
	}, func() float64 { return float64(open()) }))
}
