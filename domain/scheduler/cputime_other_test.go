//go:build !linux

package scheduler

import "time"

// cpuTime and threadCPUTime are not measured here: the CPU figures are left out.
func cpuTime() time.Duration { return 0 }

func threadCPUTime() time.Duration { return 0 }
