package alerting

import (
	"testing"
	"time"
)

// TestDecide walks the rule semantics of one fingerprint: occurrences, reissue windows,
// recoveries, and ResolveAlert rules acting on any success.
func TestDecide(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	type step struct {
		status string
		after  time.Duration
		act    bool
		rec    bool
	}
	tests := []struct {
		name        string
		occurrences int
		reissue     time.Duration
		always      bool
		steps       []step
	}{
		{"acts at once", 1, 0, false, []step{{"CRITICAL", 0, true, false}, {"CRITICAL", time.Second, true, false}}},
		{"success alone is no news", 1, 0, false, []step{{"SUCCESS", 0, false, false}, {"SUCCESS", time.Second, false, false}}},
		{"recovery after a failure", 1, time.Hour, false, []step{{"WARNING", 0, true, false}, {"SUCCESS", time.Second, true, true},
			{"SUCCESS", 2 * time.Second, false, false}}},
		{"reissue window", 1, time.Minute, false, []step{{"CRITICAL", 0, true, false}, {"CRITICAL", 30 * time.Second, false, false},
			{"CRITICAL", 61 * time.Second, true, false}}},
		{"a new status acts inside the window", 1, time.Hour, false, []step{{"WARNING", 0, true, false}, {"CRITICAL", time.Second, true, false}}},
		{"occurrences suppress flapping", 3, 0, false, []step{{"CRITICAL", 0, false, false}, {"CRITICAL", 1, false, false},
			{"SUCCESS", 2, false, false}, {"CRITICAL", 3, false, false}, {"CRITICAL", 4, false, false}, {"CRITICAL", 5, true, false}}},
		{"recovery needs its occurrences too", 2, 0, false, []step{{"CRITICAL", 0, false, false}, {"CRITICAL", 1, true, false},
			{"SUCCESS", 2, false, false}, {"SUCCESS", 3, true, true}}},
		{"resolve rules act on any success", 1, 0, true, []step{{"SUCCESS", 0, true, false}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var st State
			for i, s := range tt.steps {
				var d Decision
				d, st = Decide(st, s.status, t0.Add(s.after), tt.occurrences, tt.reissue, tt.always)
				if d.Act != s.act || d.Recovery != s.rec {
					t.Fatalf("step %d (%s at +%s): act %v recovery %v (%s), want act %v recovery %v",
						i, s.status, s.after, d.Act, d.Recovery, d.Why, s.act, s.rec)
				}
			}
		})
	}
}

// TestGroupKey: group-by attributes in any order give one key; no group-by is one group.
func TestGroupKey(t *testing.T) {
	s := Subject{Check: "disk", Status: "CRITICAL", Node: "n1", Rack: "r1", Labels: map[string]string{"env": "prod"}}
	if a, b := s.GroupKey([]string{"rack", "label:env"}), s.GroupKey([]string{"label:env", "rack"}); a != b || a != "label:env=prod,rack=r1" {
		t.Errorf("keys %q %q", a, b)
	}
	if k := s.GroupKey(nil); k != "all" {
		t.Errorf("no group-by: %q", k)
	}
}
