package fieldtype

import (
	"bytes"
	"testing"
)

func TestLabelsValidate(t *testing.T) {
	good := Labels{"rack": "r1", "virtflow.io/gpu": "a100", "tier": ""}
	if err := good.Validate(); err != nil {
		t.Fatalf("valid labels rejected: %v", err)
	}
	for _, bad := range []Labels{{"": "x"}, {"bad key": "x"}, {"-lead": "x"}, {"k": string(make([]byte, 300))}} {
		if err := bad.Validate(); err == nil {
			t.Errorf("labels %v accepted", bad)
		}
	}
}

func TestLabelsGQL(t *testing.T) {
	var l Labels
	if err := l.UnmarshalGQL(map[string]any{"a": "1"}); err != nil || l["a"] != "1" {
		t.Fatalf("unmarshal: %v %v", l, err)
	}
	if err := l.UnmarshalGQL(map[string]any{"a": 1}); err == nil {
		t.Error("a non-string value was accepted")
	}
	if err := l.UnmarshalGQL("x"); err == nil {
		t.Error("a non-object was accepted")
	}
	var buf bytes.Buffer
	Labels(nil).MarshalGQL(&buf)
	if got := buf.String(); got != "{}\n" {
		t.Errorf("nil labels marshal to %q", got)
	}
}

func TestSchedulePolicyValidate(t *testing.T) {
	tests := []struct {
		name string
		p    SchedulePolicy
		ok   bool
	}{
		{"empty", SchedulePolicy{}, true},
		{"anti power", SchedulePolicy{Zones: []ZoneRule{{Kind: ZonePower, Mode: ZoneAntiAffinity}}}, true},
		{"affinity to a named rack zone", SchedulePolicy{Zones: []ZoneRule{{Kind: ZoneRack, Mode: ZoneAffinity, Zone: "rz-1"}}}, true},
		{"anti-affinity naming a zone", SchedulePolicy{Zones: []ZoneRule{{Kind: ZoneRack, Mode: ZoneAntiAffinity, Zone: "rz-1"}}}, false},
		{"unknown kind", SchedulePolicy{Zones: []ZoneRule{{Kind: "ROW", Mode: ZoneAffinity}}}, false},
		{"unknown mode", SchedulePolicy{Zones: []ZoneRule{{Kind: ZonePower, Mode: "SPREAD"}}}, false},
		{"two rules for one kind", SchedulePolicy{Zones: []ZoneRule{{Kind: ZonePower, Mode: ZoneAffinity}, {Kind: ZonePower, Mode: ZoneAntiAffinity}}}, false},
		{"bad label key", SchedulePolicy{NodeLabelHardAffinities: Labels{"bad key": "x"}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.p.Validate(); (err == nil) != tt.ok {
				t.Errorf("Validate() = %v, want ok=%v", err, tt.ok)
			}
		})
	}
}

func TestHardwareValidation(t *testing.T) {
	if err := ValidateDisks([]Disk{{Type: DiskNVMe, CapacityGB: 1920, Count: 2}}); err != nil {
		t.Errorf("valid disks rejected: %v", err)
	}
	if err := ValidateDisks([]Disk{{Type: "TAPE", CapacityGB: 1, Count: 1}}); err == nil {
		t.Error("unknown disk type accepted")
	}
	if err := ValidateDisks([]Disk{{Type: DiskSSD, CapacityGB: 0, Count: 1}}); err == nil {
		t.Error("zero capacity accepted")
	}
	if err := ValidateGPUs([]GPU{{Model: "", Count: 1}}); err == nil {
		t.Error("GPU without model accepted")
	}
	if err := ValidateNICs([]NIC{{Ports: 0, SpeedMbps: 25000}}); err == nil {
		t.Error("NIC without ports accepted")
	}
	if err := ValidatePrices([]ModelPrice{{HostModel: "r650", PricePerHour: 1}, {HostModel: "r650", PricePerHour: 2}}); err == nil {
		t.Error("duplicate host model accepted")
	}
}
