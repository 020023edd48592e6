package console

import "testing"

// TestMetricsTarget: an agent's advertised metrics address keeps its host, and one without
// a host (or with an unspecified one) takes the host its control connection came from.
func TestMetricsTarget(t *testing.T) {
	for _, tc := range []struct{ advertised, remote, want string }{
		{"10.0.0.5:9101", "10.0.0.9:4000", "10.0.0.5:9101"},
		{":9101", "10.0.0.9:4000", "10.0.0.9:9101"},
		{"0.0.0.0:9101", "10.0.0.9:4000", "10.0.0.9:9101"},
		{"[::]:9101", "[2001:db8::7]:4000", "[2001:db8::7]:9101"},
		{"", "10.0.0.9:4000", ""},
		{"nonsense", "10.0.0.9:4000", ""},
	} {
		if got := metricsTarget(tc.advertised, tc.remote); got != tc.want {
			t.Errorf("metricsTarget(%q, %q) = %q, want %q", tc.advertised, tc.remote, got, tc.want)
		}
	}
}
