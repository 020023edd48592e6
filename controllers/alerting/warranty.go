package alerting

import (
	"context"
	"fmt"
	"time"

	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/alert"
	"github.com/virtflow/virtflow/ent/host"
	"github.com/virtflow/virtflow/store/dbtx"
)

// WarrantyCheck is the check name of lifecycle alerts about hardware warranties.
const WarrantyCheck = "warranty"

// DefaultWarrantyWindow is how long before a host's warrantyEnd its lifecycle alert is
// raised (seed 001: hardware is renewed every five years; a quarter's notice).
const DefaultWarrantyWindow = 90 * 24 * time.Hour

// WarrantyAlerts raises one WARNING lifecycle alert per host (not RETIRED) whose
// warrantyEnd falls before now + window — "warranty ends 2027-01-31 on <host>", CRITICAL
// once it has passed — unless one was raised for that date already (open or closed by an
// operator: closing it is the acknowledgement). A renewed warranty (a later date) gets an
// alert of its own when its time comes. It returns how many it raised.
func WarrantyAlerts(ctx context.Context, client *ent.Client, now time.Time, window time.Duration) (int, error) {
	ctx = system(ctx)
	if window <= 0 {
		window = DefaultWarrantyWindow
	}
	hs, err := client.Host.Query().Where(host.WarrantyEndNotNil(), host.WarrantyEndLT(now.Add(window)),
		host.LifecycleNEQ(host.LifecycleRetired)).
		WithNode(func(q *ent.ComputeNodeQuery) { q.Select("id") }).
		WithAlerts(func(q *ent.AlertQuery) {
			q.Where(alert.FingerprintHasPrefix(WarrantyCheck + ":")).Select(alert.FieldFingerprint)
		}).All(ctx)
	if err != nil {
		return 0, fmt.Errorf("hosts near warranty end: %w", err)
	}
	n := 0
	for _, h := range hs {
		day := h.WarrantyEnd.UTC().Format(time.DateOnly)
		fp := fmt.Sprintf("%s:%s|host:%d", WarrantyCheck, day, h.ID)
		raised := false
		for _, a := range h.Edges.Alerts {
			raised = raised || a.Fingerprint == fp
		}
		if raised {
			continue
		}
		sev, msg := alert.SeverityWarning, fmt.Sprintf("the warranty of %s ends on %s: plan its renewal", h.Name, day)
		if !h.WarrantyEnd.After(now) {
			sev, msg = alert.SeverityCritical, fmt.Sprintf("the warranty of %s ended on %s", h.Name, day)
		}
		spec := AlertSpec{Name: fmt.Sprintf("warranty ends %s on %s", day, h.Name), Severity: sev, Message: msg,
			Fingerprint: fp, HostID: h.ID, Source: "lifecycle", At: now}
		if h.Edges.Node != nil {
			spec.NodeID = h.Edges.Node.ID
		}
		_, err := dbtx.Run(ctx, client, func(c *ent.Client) error {
			a, created, err := Raise(ctx, c, spec)
			if err != nil || !created {
				return err
			}
			_, err = Route(ctx, c, a.ID, false)
			return err
		})
		if err != nil {
			return n, fmt.Errorf("warranty alert of %s: %w", h.Name, err)
		}
		n++
	}
	return n, nil
}
