package nodeagent

import (
	"context"
	"encoding/json"
	"time"
)

// watch subscribes to assignmentChanged for the node over graphql-transport-ws and kicks a
// resync on every change, until ctx ends. A dropped or refused subscription is retried with a
// growing, randomized wait (newBackOff, up to 30 s); each new subscription kicks a resync too, for the changes missed
// while it was down. The periodic resync goes on regardless.
func (ag *Agent) watch(ctx context.Context, kick func()) {
	b := newBackOff(time.Second, 30*time.Second)
	for ctx.Err() == nil {
		start := time.Now()
		err := ag.subscribe(ctx, kick)
		if ctx.Err() != nil {
			return
		}
		if time.Since(start) > time.Minute {
			b.Reset()
		}
		wait := b.NextBackOff()
		ag.log.Debug("assignment subscription ended; resync continues", "err", err, "retry_in", wait)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// subscribe runs one subscription of assignmentChanged (its document checked against the
// schema by genqlient, operations.graphql) through the agent's client until it fails or
// ctx ends. It kicks a resync once the server read the subscription, and on every event.
func (ag *Agent) subscribe(ctx context.Context, kick func()) error {
	return ag.api.Subscribe(ctx, assignmentChanged_Operation, map[string]any{"node": ag.NodeID()}, kick,
		func(json.RawMessage) error { kick(); return nil })
}
