package metrics_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/virtflow/virtflow/controllers/metrics"
	"github.com/virtflow/virtflow/domain/apierr"
)

// TestFailureReason: placement failures are counted under their API code and the rejection
// that counted most.
func TestFailureReason(t *testing.T) {
	for _, tt := range []struct {
		name         string
		err          error
		code, reason string
	}{
		{"no capacity", &apierr.Error{Code: apierr.CodeNoCapacity, Extra: map[string]any{"reasons": map[string]any{"CPUFit": 2, "Ready": 5, "MemoryFit": 5}}}, "NO_CAPACITY", "MemoryFit"},
		{"quota", &apierr.Error{Code: apierr.CodeQuotaExceeded, Extra: map[string]any{"reasons": map[string]any{"Quota": 8}}}, "QUOTA_EXCEEDED", "Quota"},
		{"validation", apierr.Validation("flavorID", "no"), "VALIDATION", "none"},
		{"wrapped", errors.Join(errors.New("ctx"), &apierr.Error{Code: apierr.CodeNoCapacity}), "NO_CAPACITY", "none"},
		{"canceled", context.Canceled, "CANCELED", "none"},
		{"other", errors.New("db down"), "INTERNAL", "none"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, reason := metrics.FailureReason(tt.err)
			if code != tt.code || reason != tt.reason {
				t.Errorf("FailureReason = %s, %s; want %s, %s", code, reason, tt.code, tt.reason)
			}
		})
	}
}

// TestPlacementAndSubscriptionMetrics: observations land in the histogram by result and in
// the failure counter by code and reason; the subscriptions gauge reads its function.
func TestPlacementAndSubscriptionMetrics(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	p := metrics.NewPlacement(reg)
	p.Observe(20*time.Millisecond, nil)
	p.Observe(30*time.Millisecond, nil)
	p.Observe(time.Millisecond, &apierr.Error{Code: apierr.CodeNoCapacity, Extra: map[string]any{"reasons": map[string]any{"CPUFit": 1}}})
	open := 3
	metrics.Subscriptions(reg, func() int { return open })
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		switch mf.GetName() {
		case "virtflow_placement_failures_total":
			m := mf.GetMetric()
			if len(m) != 1 || m[0].GetCounter().GetValue() != 1 || !hasLabel(m[0], "code", "NO_CAPACITY") || !hasLabel(m[0], "reason", "CPUFit") {
				t.Errorf("failures: %v", m)
			}
		case "virtflow_placement_duration_seconds":
			if len(mf.GetMetric()) != 2 {
				t.Errorf("%d placement histograms, want placed and failed", len(mf.GetMetric()))
			}
			for _, m := range mf.GetMetric() {
				if hasLabel(m, "result", "placed") && m.GetHistogram().GetSampleCount() != 2 {
					t.Errorf("placed: %d samples, want 2", m.GetHistogram().GetSampleCount())
				}
			}
		case "virtflow_subscriptions_open":
			if v := mf.GetMetric()[0].GetGauge().GetValue(); v != 3 {
				t.Errorf("subscriptions %v, want 3", v)
			}
		}
	}
}
