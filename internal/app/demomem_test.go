package app

import (
	"log/slog"
	"math"
	"runtime/debug"
	"testing"
)

// TestDemoRuntimeMemory checks that --demo sets its soft memory limit only when the
// environment does not set GOMEMLIMIT.
func TestDemoRuntimeMemory(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	log := slog.New(slog.DiscardHandler)

	debug.SetMemoryLimit(math.MaxInt64)
	demoRuntimeMemory(func(string) string { return "" }, log)
	if got := debug.SetMemoryLimit(-1); got != demoMemoryLimit {
		t.Fatalf("no GOMEMLIMIT: limit %d, want %d", got, demoMemoryLimit)
	}

	debug.SetMemoryLimit(math.MaxInt64) // what GOMEMLIMIT=off gives
	demoRuntimeMemory(func(k string) string {
		if k == "GOMEMLIMIT" {
			return "off"
		}
		return ""
	}, log)
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Fatalf("GOMEMLIMIT=off: limit %d, want it left alone", got)
	}
}
