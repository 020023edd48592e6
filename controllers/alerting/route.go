package alerting

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/virtflow/virtflow/controllers/outbox"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/alert"
	"github.com/virtflow/virtflow/ent/cluster"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/hookdelivery"
	"github.com/virtflow/virtflow/ent/host"
	"github.com/virtflow/virtflow/ent/maintainergroup"
	"github.com/virtflow/virtflow/ent/predicate"
	"github.com/virtflow/virtflow/ent/rack"
)

// Route notifies the maintainer groups responsible for what alert id is about — its host
// or the host's rack, its node or the node's cluster, its rack — that have a webhookUrl:
// one HookDelivery per group (keyed alert:<id>:group:<group>:raised or :resolved, so a
// task run again schedules nothing twice), recorded with its delivery task in c's
// transaction, signed with the group's webhookSecret. A raised alert that is suppressed
// by a cause is not routed: the cause's own alert is. It returns how many it scheduled.
func Route(ctx context.Context, c *ent.Client, id int, recovery bool) (int, error) {
	ctx = system(ctx)
	a, err := c.Alert.Query().Where(alert.ID(id)).WithHost(func(q *ent.HostQuery) { q.WithRack() }).
		WithNode(func(q *ent.ComputeNodeQuery) { q.WithCluster().WithHost(func(q *ent.HostQuery) { q.WithRack() }) }).WithRack().WithSuppressedBy().Only(ctx)
	if err != nil {
		return 0, fmt.Errorf("route alert %d: %w", id, err)
	}
	if !recovery && a.Edges.SuppressedBy != nil {
		return 0, nil
	}
	var or []predicate.MaintainerGroup
	if h := alertHostOf(a); h != nil {
		or = append(or, maintainergroup.HasHostsWith(host.ID(h.ID)))
		if h.Edges.Rack != nil {
			or = append(or, maintainergroup.HasRacksWith(rack.ID(h.Edges.Rack.ID)))
		}
	}
	if n := a.Edges.Node; n != nil {
		or = append(or, maintainergroup.HasNodesWith(computenode.ID(n.ID)))
		if n.Edges.Cluster != nil {
			or = append(or, maintainergroup.HasClustersWith(cluster.ID(n.Edges.Cluster.ID)))
		}
	}
	if r := a.Edges.Rack; r != nil {
		or = append(or, maintainergroup.HasRacksWith(rack.ID(r.ID)))
	}
	if len(or) == 0 {
		return 0, nil
	}
	groups, err := c.MaintainerGroup.Query().Where(maintainergroup.Or(or...), maintainergroup.StatusEQ(maintainergroup.StatusActive),
		maintainergroup.WebhookURLNEQ("")).All(ctx)
	if err != nil {
		return 0, fmt.Errorf("route alert %d: groups: %w", id, err)
	}
	what := "raised"
	if recovery {
		what = "resolved"
	}
	n := 0
	for _, g := range groups {
		key := fmt.Sprintf("alert:%d:group:%d:%s", a.ID, g.ID, what)
		if recovery {
			// Only a group told of the alert hears of its end.
			told, err := c.HookDelivery.Query().Where(hookdelivery.IdempotencyKey(fmt.Sprintf("alert:%d:group:%d:raised", a.ID, g.ID))).Exist(ctx)
			if err != nil {
				return n, err
			}
			if !told {
				continue
			}
		}
		if ok, err := c.HookDelivery.Query().Where(hookdelivery.IdempotencyKey(key)).Exist(ctx); err != nil || ok {
			if err != nil {
				return n, err
			}
			continue
		}
		body := HookBody{IdempotencyKey: key, MaintainerGroup: g.Name, Fingerprint: a.Fingerprint, Recovery: recovery, Count: 1,
			Alert: &AlertBody{ID: a.ID, Name: a.Name, Severity: string(a.Severity), Status: string(a.Status), Occurrences: a.Occurrences}}
		b, err := json.Marshal(body)
		if err != nil {
			return n, err
		}
		d, err := c.HookDelivery.Create().SetURL(g.WebhookURL).SetIdempotencyKey(key).SetPayload(string(b)).
			SetAlertID(a.ID).SetMaintainerGroupID(g.ID).Save(ctx)
		if err != nil {
			return n, fmt.Errorf("record hook delivery: %w", err)
		}
		p, _ := json.Marshal(hookPayload{Delivery: d.ID})
		if err := outbox.Enqueue(ctx, c, outbox.Task{Kind: TypeHook, Queue: Queue, Payload: p, DedupKey: "alerting:hook:" + key}); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// alertHostOf is the host an alert (loaded with host and node.host) is about.
func alertHostOf(a *ent.Alert) *ent.Host {
	if a.Edges.Host != nil {
		return a.Edges.Host
	}
	if n := a.Edges.Node; n != nil {
		return n.Edges.Host
	}
	return nil
}
