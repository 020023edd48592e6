package nodeagent

import (
	"time"

	"github.com/cenkalti/backoff/v5"
)

// newBackOff is the agent's one retry schedule: waits that start at first, double with every
// failure up to max, and are randomized by ±50 % (cenkalti/backoff), so that thousands of
// agents that lost the API together do not come back to it in lockstep.
func newBackOff(first, max time.Duration) *backoff.ExponentialBackOff {
	b := &backoff.ExponentialBackOff{InitialInterval: first, RandomizationFactor: 0.5, Multiplier: 2, MaxInterval: max}
	b.Reset()
	return b
}
