package app

import (
	"log/slog"
	"runtime/debug"
)

// demoMemoryLimit is the soft memory limit of `server --demo` (GOMEMLIMIT) when the
// environment does not set one.
//
// The demo runs its whole installation in one process: SQLite, an in-process Redis, the
// worker and a simulated agent per demo compute node (336), each agent with its two
// websockets through the real API. Idle, it allocates about 10 MB/s (mostly the in-process
// Redis running the worker's Lua scripts) over a live heap of about 55 MB, and Go's
// default GOGC=100 lets the heap reach twice the live data before each collection: the
// idle process held about 330 MB. Measured on 2 cores: a 160 MiB limit holds it near
// 260 MB for about 6 % more of one core (collections every second instead of every four);
// 128 MiB made the collector run twice a second at half a core. GOGC is left alone.
//
// The limit is soft: a demo holding more live data (thousands of VMs) goes past it rather
// than stall, the runtime capping the collector at about half the CPU. GOMEMLIMIT in the
// environment wins (GOMEMLIMIT=off gives Go's default back); a server without --demo
// keeps Go's defaults.
const demoMemoryLimit = 160 << 20

// demoRuntimeMemory sets demoMemoryLimit unless getenv sets GOMEMLIMIT, and logs the
// limit the runtime uses.
func demoRuntimeMemory(getenv func(string) string, log *slog.Logger) {
	if getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(demoMemoryLimit)
	}
	log.Info("demo: Go runtime soft memory limit (GOMEMLIMIT in the environment overrides it)",
		"memory_limit_mib", debug.SetMemoryLimit(-1)>>20)
}
