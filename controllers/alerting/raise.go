package alerting

import (
	"context"
	"fmt"
	"time"

	"entgo.io/ent/dialect/sql"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/domain/audit"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/alert"
	"github.com/virtflow/virtflow/store/truncate"
)

// openFingerprint is the predicate of the unique partial index alert_open_fingerprint (ent
// schema Alert): at most one OPEN alert per non-empty fingerprint.
const openFingerprint = "status = 'OPEN' AND fingerprint IS NOT NULL AND fingerprint <> ''"

// AlertSpec is an alert to raise.
type AlertSpec struct {
	Name, Message, Fingerprint string
	Severity                   alert.Severity
	NodeID, HostID             int
	// RackID and PowerZoneID place an alert on a whole rack or power zone.
	RackID, PowerZoneID int
	// Labels are kept on the alert (Alertmanager's).
	Labels map[string]string
	// Source names who raised it (rule:<name>, alertmanager).
	Source string
	// SuppressedBy, when not 0, is the open cause alert a new alert starts suppressed by.
	SuppressedBy int
	At           time.Time
}

// Raise opens an alert, or — when an open alert has the same fingerprint — counts a repeat
// on it: occurrences + 1, lastSeenAt, the latest message and severity. The database decides
// (INSERT … ON CONFLICT on the unique partial index), so two raises racing on two workers
// give one alert with occurrences 2, never two alerts. created reports whether the alert is
// new; a new alert is audited (raiseAlert, system:worker) in c's transaction.
func Raise(ctx context.Context, c *ent.Client, s AlertSpec) (a *ent.Alert, created bool, err error) {
	actx, by := auditActor(ctx)
	ctx = system(ctx)
	if s.Fingerprint == "" {
		return nil, false, fmt.Errorf("raise alert %q: no fingerprint", s.Name)
	}
	if s.At.IsZero() {
		s.At = time.Now()
	}
	cr := c.Alert.Create().SetName(truncate.String(s.Name, 128)).SetSeverity(s.Severity).SetMessage(s.Message).
		SetFingerprint(s.Fingerprint).SetFirstSeenAt(s.At).SetLastSeenAt(s.At)
	if s.NodeID != 0 {
		cr.SetNodeID(s.NodeID)
	}
	if s.HostID != 0 {
		cr.SetHostID(s.HostID)
	}
	if s.RackID != 0 {
		cr.SetRackID(s.RackID)
	}
	if s.PowerZoneID != 0 {
		cr.SetPowerZoneID(s.PowerZoneID)
	}
	if s.SuppressedBy != 0 {
		cr.SetSuppressedByID(s.SuppressedBy)
	}
	if len(s.Labels) > 0 {
		cr.SetLabels(s.Labels)
	}
	if s.Source != "" {
		cr.SetSource(s.Source)
	}
	id, err := cr.OnConflict(sql.ConflictColumns(alert.FieldFingerprint), sql.ConflictWhere(sql.ExprP(openFingerprint))).
		Update(func(u *ent.AlertUpsert) {
			u.AddOccurrences(1).SetLastSeenAt(s.At).SetMessage(s.Message).SetSeverity(s.Severity).UpdateUpdatedAt()
		}).ID(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("raise alert %q: %w", s.Name, err)
	}
	if a, err = c.Alert.Get(ctx, id); err != nil {
		return nil, false, err
	}
	if a.Occurrences > 1 {
		return a, false, nil
	}
	return a, true, audit.Write(actx, c, audit.Entry{System: by, Action: "raiseAlert", Subject: a, After: a})
}

// auditActor is who the audit rows of a raise or resolve name: the signed-in viewer of ctx
// (a token posting Alertmanager's webhook), else the worker.
func auditActor(ctx context.Context) (context.Context, audit.SystemActor) {
	if v := authz.FromContext(ctx); v != nil && !v.IsSystem() {
		return ctx, ""
	}
	return ctx, audit.Worker
}

// Resolve closes the open alert with fingerprint fp (closedBy by, closedAt at), audited
// (resolveAlert, system:worker) in c's transaction. It returns how many it closed (0 or 1)
// and the alert's id.
func Resolve(ctx context.Context, c *ent.Client, fp, by string, at time.Time) (int, int, error) {
	actx, sys := auditActor(ctx)
	ctx = system(ctx)
	open, err := c.Alert.Query().Where(alert.Fingerprint(fp), alert.StatusEQ(alert.StatusOpen)).All(ctx)
	if err != nil || len(open) == 0 {
		return 0, 0, err
	}
	return closeOpen(actx, sys, c, open, by, at)
}

// closeOpen closes the open alerts read by Resolve (their edges, if loaded, are not
// audited), audited as sys in actx.
func closeOpen(actx context.Context, sys audit.SystemActor, c *ent.Client, open []*ent.Alert, by string, at time.Time) (int, int, error) {
	ctx := system(actx)
	for _, before := range open {
		b := *before
		b.Edges = ent.AlertEdges{}
		before = &b
		after, err := c.Alert.UpdateOne(before).SetStatus(alert.StatusClosed).SetClosedAt(at).SetClosedBy(by).Save(ctx)
		if err != nil {
			return 0, 0, fmt.Errorf("resolve alert %d: %w", before.ID, err)
		}
		if err := audit.Write(actx, c, audit.Entry{System: sys, Action: "resolveAlert", Subject: after,
			Before: before, After: after}); err != nil {
			return 0, 0, err
		}
	}
	return len(open), open[0].ID, nil
}

// Acknowledge acknowledges the open alert id as the viewer of ctx: acknowledgedAt now and
// acknowledgedBy the viewer's name, set here. Acknowledging again (or a closed alert)
// changes nothing. Permissions are those of Close.
func Acknowledge(ctx context.Context, c *ent.Client, id int) (*ent.Alert, error) {
	a, err := c.Alert.Get(ctx, id)
	if ent.IsNotFound(err) {
		return nil, apierr.NotFound("alert %d not found", id)
	}
	if err != nil || a.Status == alert.StatusClosed || a.AcknowledgedAt != nil {
		return a, err
	}
	acked, err := c.Alert.UpdateOneID(id).Where(alert.StatusEQ(alert.StatusOpen), alert.AcknowledgedAtIsNil()).
		SetAcknowledgedAt(time.Now()).SetAcknowledgedBy(authz.Actor(ctx)).Save(ctx)
	if !ent.IsNotFound(err) {
		return acked, err
	}
	if a, err = c.Alert.Get(ctx, id); err == nil && a.Status == alert.StatusOpen && a.AcknowledgedAt == nil {
		return nil, apierr.Forbidden("only operators and the maintainers of its host or node may acknowledge alert %d", id)
	}
	return a, err
}

// Create is createAlert: it records the alert as the viewer of ctx, or — when an open
// alert has the same fingerprint — counts a repeat on that one (occurrences + 1, lastSeenAt
// now, the new message and severity) and returns it, so two calls with one fingerprint
// leave one open alert. Unique by the same index as Raise, so races agree too.
func Create(ctx context.Context, c *ent.Client, in ent.CreateAlertInput) (*ent.Alert, error) {
	if in.Fingerprint == nil || *in.Fingerprint == "" {
		return c.Alert.Create().SetInput(in).Save(ctx)
	}
	now := time.Now()
	msg := ""
	if in.Message != nil {
		msg = *in.Message
	}
	id, err := c.Alert.Create().SetInput(in).SetFirstSeenAt(now).SetLastSeenAt(now).
		OnConflict(sql.ConflictColumns(alert.FieldFingerprint), sql.ConflictWhere(sql.ExprP(openFingerprint))).
		Update(func(u *ent.AlertUpsert) {
			u.AddOccurrences(1).SetLastSeenAt(now).SetMessage(msg).SetSeverity(in.Severity).UpdateUpdatedAt()
		}).ID(ctx)
	if err != nil {
		return nil, err
	}
	return c.Alert.Get(ctx, id)
}
