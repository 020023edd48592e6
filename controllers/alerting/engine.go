package alerting

import (
	"context"
	stdsql "database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"entgo.io/ent/dialect/sql"
	"github.com/hibiken/asynq"

	"github.com/virtflow/virtflow/controllers/outbox"
	"github.com/virtflow/virtflow/domain/audit"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/alert"
	"github.com/virtflow/virtflow/ent/event"
	"github.com/virtflow/virtflow/ent/eventrule"
	"github.com/virtflow/virtflow/ent/maintenance"
	"github.com/virtflow/virtflow/ent/rulestate"
	"github.com/virtflow/virtflow/ent/silence"
	"github.com/virtflow/virtflow/internal/platform/secrets"
	"github.com/virtflow/virtflow/store/dbtx"
	"github.com/virtflow/virtflow/store/rowlock"
	"github.com/virtflow/virtflow/store/truncate"
)

// Engine evaluates the event rules in the workers: it serves TypeEvents, TypeGroup and
// TypeHook (Register). Every step runs in a transaction of its own with the outbox rows of
// the next step, so a worker dying anywhere loses nothing: an unfinished task runs again and
// finds what it already did (events are marked processed, deliveries are keyed).
type Engine struct {
	// Client is the database (not a transaction).
	Client *ent.Client
	// HTTP delivers hooks (default: HookClient of the default egress policy). A client given
	// here should be HookClient of the process's policy.
	HTTP *http.Client
	// Secrets opens the sealed hook secrets (Install seals them); without it only secrets
	// stored in clear (before sealing) can sign.
	Secrets *secrets.Keyring
	// Clock dates what the engine writes (default time.Now).
	Clock func() time.Time
	// Log receives what the engine does; nil discards it.
	Log *slog.Logger
}

// Register adds the engine's task types to mux.
func (e *Engine) Register(mux *asynq.ServeMux) {
	for _, k := range Kinds {
		mux.Handle(k, e)
	}
}

func (e *Engine) now() time.Time {
	if e.Clock == nil {
		return time.Now()
	}
	return e.Clock()
}

func (e *Engine) log() *slog.Logger {
	if e.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return e.Log
}

// system is ctx acting as the worker, the audit actor of the engine's changes.
func system(ctx context.Context) context.Context { return audit.Worker.Context(ctx) }

// ProcessTask serves one of the engine's tasks.
func (e *Engine) ProcessTask(ctx context.Context, t *asynq.Task) error {
	ctx = system(ctx)
	switch t.Type() {
	case TypeEvents:
		p, err := decodeTask[eventsPayload](t)
		if err != nil {
			return err
		}
		return e.ProcessEvents(ctx, p.Events)
	case TypeGroup:
		p, err := decodeTask[groupPayload](t)
		if err != nil {
			return err
		}
		return e.FlushGroup(ctx, p.Rule, p.Key)
	case TypeHook:
		p, err := decodeTask[hookPayload](t)
		if err != nil {
			return err
		}
		return e.deliver(ctx, p.Delivery)
	}
	return fmt.Errorf("unknown task type %q: %w", t.Type(), asynq.SkipRetry)
}

// env is what the rules of one batch run against, read once per batch.
type env struct {
	rules    []*ent.EventRule
	silences []*ent.Silence
	// maintNodes and maintHosts are under an open maintenance.
	maintNodes, maintHosts map[int]bool
	// suppress maps the hosts behind an open cause alert (power zone, PDU, switch, rack)
	// to that alert; refreshed when the batch raises or resolves a cause.
	suppress Suppressors
}

func (e *Engine) loadEnv(ctx context.Context, now time.Time) (*env, error) {
	rules, err := e.Client.EventRule.Query().Where(eventrule.Enabled(true)).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("load event rules: %w", err)
	}
	sortRules(rules)
	sil, err := e.Client.Silence.Query().Where(silence.StartsAtLTE(now), silence.EndsAtGT(now)).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("load silences: %w", err)
	}
	ms, err := e.Client.Maintenance.Query().Where(maintenance.Or(
		maintenance.StatusEQ(maintenance.StatusInProgress),
		maintenance.And(maintenance.StatusEQ(maintenance.StatusPlanned), maintenance.StartsAtLTE(now),
			maintenance.Or(maintenance.EndsAtIsNil(), maintenance.EndsAtGT(now))))).
		WithNodes(func(q *ent.ComputeNodeQuery) { q.Select("id") }).
		WithHosts(func(q *ent.HostQuery) { q.Select("id") }).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("load open maintenance: %w", err)
	}
	sup, err := LoadSuppressors(ctx, e.Client)
	if err != nil {
		return nil, err
	}
	en := &env{rules: rules, silences: sil, maintNodes: map[int]bool{}, maintHosts: map[int]bool{}, suppress: sup}
	for _, m := range ms {
		for _, n := range m.Edges.Nodes {
			en.maintNodes[n.ID] = true
		}
		for _, h := range m.Edges.Hosts {
			en.maintHosts[h.ID] = true
		}
	}
	return en, nil
}

// ProcessEvents runs the rules on the events ids in one transaction per chunk of
// [ChunkSize] events (a commit per event capped the engine at about 200 events/s on
// PostgreSQL; per chunk it keeps up with agents' batches): the chunk's events are locked
// at once, those already processed (a task run again, another worker) or gone (filtered)
// are skipped, and everything the rules write for the chunk commits or rolls back
// together, so a task run again after a crash or a lost race redoes the chunk whole.
// Where the events happened (node, host, rack, cluster) is read once for the batch.
func (e *Engine) ProcessEvents(ctx context.Context, ids []int) error {
	ctx = system(ctx)
	en, err := e.loadEnv(ctx, e.now())
	if err != nil {
		return err
	}
	evs, err := withPlace(e.Client.Event.Query().Where(event.IDIn(ids...), event.ProcessedAtIsNil()).
		Order(ent.Asc(event.FieldID))).All(ctx)
	if err != nil {
		return fmt.Errorf("load events: %w", err)
	}
	for len(evs) > 0 {
		chunk := evs[:min(len(evs), ChunkSize)]
		evs = evs[len(chunk):]
		if _, err := dbtx.Run(ctx, e.Client, func(c *ent.Client) error { return e.processChunk(ctx, c, en, chunk) }); err != nil {
			return fmt.Errorf("events %d..%d: %w", chunk[0].ID, chunk[len(chunk)-1].ID, err)
		}
	}
	return nil
}

// ChunkSize is how many events ProcessEvents handles in one transaction.
const ChunkSize = 250

// processChunk locks the chunk's unprocessed events and runs the rules on each, in the
// transaction c.
func (e *Engine) processChunk(ctx context.Context, c *ent.Client, en *env, chunk []*ent.Event) error {
	ids := make([]int, len(chunk))
	for i, ev := range chunk {
		ids[i] = ev.ID
	}
	q := c.Event.Query().Where(event.IDIn(ids...), event.ProcessedAtIsNil()).Order(ent.Asc(event.FieldID))
	q.Modify(rowlock.ForUpdate)
	open, err := q.IDs(ctx)
	if err != nil {
		return fmt.Errorf("lock: %w", err)
	}
	todo := make(map[int]bool, len(open))
	for _, id := range open {
		todo[id] = true
	}
	rec, err := recoverable(ctx, c, chunk, todo, en)
	if err != nil {
		return err
	}
	plans := make([]plan, 0, len(open))
	keys := map[stateKey]bool{}
	for _, ev := range chunk {
		if !todo[ev.ID] {
			continue
		}
		p := planFor(ev, en, rec)
		if !p.filtered && failing(p.s.Status) {
			// A SUCCESS later in the chunk may recover what this failure opens.
			rec[p.s.Fingerprint()] = true
		}
		if !p.filtered && p.silenced == "" {
			for _, r := range p.matched {
				if k, ok := stateKeyOf(r, p.s); ok {
					keys[k] = true
				}
			}
		}
		plans = append(plans, p)
	}
	st, err := lockStates(ctx, c, keys)
	if err != nil {
		return err
	}
	if err := st.loadOpenAlerts(ctx, c, keys); err != nil {
		return err
	}
	for _, p := range plans {
		if err := e.processOne(ctx, c, en, st, p); err != nil {
			return fmt.Errorf("event %d: %w", p.ev.ID, err)
		}
	}
	if err := st.flushAlerts(ctx, c); err != nil {
		return err
	}
	if err := st.flushEvents(ctx, c, e.now()); err != nil {
		return err
	}
	return st.flush(ctx, c)
}

// plan is what the rules make of one event before anything is written: its subject,
// whether a FILTER drops it, what silences it, and the rules that match it.
type plan struct {
	ev       *ent.Event
	s        Subject
	filtered bool
	silenced string
	matched  []*ent.EventRule
}

// planFor is what the rules make of ev. A FILTER never drops a recovery: a SUCCESS whose
// fingerprint is in rec (an open alert, or
// an ACTION rule that last acted on a failure of it) goes on to the other rules, so that
// "drop successful checks" keeps the one success that resolves an alert or sends the
// recovery hook.
func planFor(ev *ent.Event, en *env, rec map[string]bool) plan {
	p := plan{ev: ev, s: subjectOf(ev, en)}
	p.silenced = whySilenced(p.s, en)
	recovery := !failing(p.s.Status) && rec[p.s.Fingerprint()]
	for _, r := range en.rules {
		if !Matches(r, p.s) {
			continue
		}
		if r.Kind == eventrule.KindFilter {
			if recovery {
				continue
			}
			p.filtered = true
			return p
		}
		if r.Kind == eventrule.KindSilence && p.silenced == "" {
			p.silenced = "silenced by rule " + r.Name
		}
		p.matched = append(p.matched, r)
	}
	return p
}

// recoverable returns the fingerprints of the chunk's SUCCESS events (those in todo) that
// would recover something: an open alert with that fingerprint, or an ACTION rule a
// SUCCESS can match whose state for it last acted on a failure (two statements, none
// without a SUCCESS).
func recoverable(ctx context.Context, c *ent.Client, chunk []*ent.Event, todo map[int]bool, en *env) (map[string]bool, error) {
	rec := map[string]bool{}
	var fps []string
	for _, ev := range chunk {
		if todo[ev.ID] && ev.Status == event.StatusSuccess {
			fps = append(fps, subjectOf(ev, en).Fingerprint())
		}
	}
	if len(fps) == 0 {
		return rec, nil
	}
	open, err := c.Alert.Query().Where(alert.StatusEQ(alert.StatusOpen), alert.FingerprintIn(fps...)).
		Select(alert.FieldFingerprint).Strings(ctx)
	if err != nil {
		return nil, fmt.Errorf("open alerts of recoveries: %w", err)
	}
	// Only rules a SUCCESS can reach recover: an ACTION rule matching CRITICAL only keeps
	// its last failure forever, and must not keep every later SUCCESS from the filter.
	var rules []int
	for _, r := range en.rules {
		if r.Kind == eventrule.KindAction && r.Action != nil &&
			(r.StatusMatch == nil || *r.StatusMatch == eventrule.StatusMatchSuccess) {
			rules = append(rules, r.ID)
		}
	}
	var failed []string
	if len(rules) > 0 {
		failed, err = c.RuleState.Query().Where(rulestate.RuleIDIn(rules...), rulestate.KeyIn(fps...),
			rulestate.IssuedStatusNEQ(""), rulestate.IssuedStatusNEQ(string(event.StatusSuccess))).
			Select(rulestate.FieldKey).Strings(ctx)
		if err != nil {
			return nil, fmt.Errorf("rule states of recoveries: %w", err)
		}
	}
	for _, fp := range append(open, failed...) {
		rec[fp] = true
	}
	return rec, nil
}

// subjectOf reads what rules match on from an event loaded with its node (host, rack,
// cluster) and host (rack).
func subjectOf(ev *ent.Event, en *env) Subject {
	s := Subject{Check: ev.CheckName, Status: string(ev.Status), Labels: map[string]string{}}
	h := ev.Edges.Host
	if n := ev.Edges.Node; n != nil {
		s.Node, s.NodeID = n.Name, n.ID
		s.Cordoned = !n.Schedulable
		s.Draining = n.DrainState != nil
		for k, v := range n.Labels {
			s.Labels[k] = v
		}
		if n.Edges.Cluster != nil {
			s.Cluster = n.Edges.Cluster.Name
		}
		if h == nil {
			h = n.Edges.Host
		}
	}
	if h != nil {
		s.Host, s.HostID = h.Name, h.ID
		if h.Edges.Rack != nil {
			s.Rack = h.Edges.Rack.Name
		}
	}
	if cl := ev.Edges.Cluster; cl != nil && s.Cluster == "" {
		s.Cluster, s.ClusterID = cl.Name, cl.ID
	}
	for k, v := range ev.Labels {
		s.Labels[k] = v
	}
	s.InMaint = en.maintNodes[s.NodeID] || en.maintHosts[s.HostID]
	return s
}

// whySilenced names what silences the subject, or "".
func whySilenced(s Subject, en *env) string {
	switch {
	case s.InMaint:
		return "silenced: under maintenance"
	case s.Draining:
		return "silenced: node draining"
	case s.Cordoned:
		return "silenced: node cordoned"
	}
	for _, si := range en.silences {
		if silenceMatches(si, s) {
			return fmt.Sprintf("silenced by silence %d (%s)", si.ID, truncate.String(si.Comment, 64))
		}
	}
	return ""
}

func withPlace(q *ent.EventQuery) *ent.EventQuery {
	return q.WithNode(func(n *ent.ComputeNodeQuery) {
		n.WithCluster().WithHost(func(h *ent.HostQuery) { h.WithRack() })
	}).WithHost(func(h *ent.HostQuery) { h.WithRack() }).WithCluster()
}

// processOne runs the rules on one event, locked by processChunk with the rule states st,
// in the transaction c.
func (e *Engine) processOne(ctx context.Context, c *ent.Client, en *env, st *states, p plan) error {
	now := e.now()
	ev, s, silenced, matched := p.ev, p.s, p.silenced, p.matched
	if p.filtered {
		// Dropped: the event is not kept.
		return c.Event.DeleteOneID(ev.ID).Exec(ctx)
	}
	var outcome []string
	res := eventResult{id: ev.ID}
	if silenced != "" {
		res.silenced, res.outcome = true, silenced
		st.results = append(st.results, res)
		return nil
	}
	for _, r := range matched {
		var (
			what    string
			alertID int
			err     error
		)
		switch r.Kind {
		case eventrule.KindAggregate:
			what, err = e.aggregate(ctx, c, st, r, s, ev, now)
		case eventrule.KindAction:
			what, alertID, err = e.act(ctx, c, en, st, r, s, ev, now)
		default:
			continue
		}
		if err != nil {
			return fmt.Errorf("rule %s: %w", r.Name, err)
		}
		if what != "" {
			outcome = append(outcome, r.Name+": "+what)
		}
		if alertID != 0 {
			res.alert = alertID
		}
	}
	if len(outcome) == 0 {
		outcome = append(outcome, "no rule acted")
	}
	res.outcome = truncate.String(strings.Join(outcome, "; "), 1024)
	st.results = append(st.results, res)
	return nil
}

// lockState returns the rule's state for key, locked for the rest of the transaction
// (created first if needed).
func lockState(ctx context.Context, c *ent.Client, rule int, key string) (*ent.RuleState, error) {
	err := c.RuleState.Create().SetRuleID(rule).SetKey(key).
		OnConflict(sql.ConflictColumns(rulestate.FieldRuleID, rulestate.FieldKey)).DoNothing().Exec(ctx)
	if err != nil && !errors.Is(err, stdsql.ErrNoRows) {
		return nil, fmt.Errorf("rule state: %w", err)
	}
	q := c.RuleState.Query().Where(rulestate.RuleID(rule), rulestate.Key(key))
	q.Modify(rowlock.ForUpdate)
	return q.Only(ctx)
}

func stateOf(st *ent.RuleState) State {
	return State{LastStatus: st.LastStatus, Consecutive: st.Consecutive, IssuedStatus: st.IssuedStatus, IssuedAt: st.LastIssuedAt}
}

// act applies an ACTION rule to an event: Occurrences and ReissueDuration (Decide), then
// the rule's action. It returns what it did and the alert it raised or resolved.
func (e *Engine) act(ctx context.Context, c *ent.Client, en *env, sts *states, r *ent.EventRule, s Subject, ev *ent.Event, now time.Time) (string, int, error) {
	if r.Action == nil {
		return "", 0, nil
	}
	fp := s.Fingerprint()
	row := sts.get(stateKey{r.ID, fp})
	always := *r.Action == eventrule.ActionResolveAlert
	d, st := Decide(stateOf(row), s.Status, now, r.Occurrences, time.Duration(r.ReissueSeconds)*time.Second, always)
	row.LastStatus, row.Consecutive, row.IssuedStatus, row.LastIssuedAt, row.LastEventID =
		st.LastStatus, st.Consecutive, st.IssuedStatus, st.IssuedAt, ev.ID
	if !d.Act {
		return d.Why, 0, nil
	}
	switch *r.Action {
	case eventrule.ActionCreateAlert:
		if d.Recovery {
			return e.resolve(ctx, c, en, sts, fp, "rule:"+r.Name, now)
		}
		if oa := sts.alerts[fp]; oa != nil {
			// A repeat of an open alert: counted here, written once for the chunk; once per
			// event however many rules raise it.
			if oa.event != ev.ID {
				oa.add++
				oa.event = ev.ID
			}
			oa.at, oa.message, oa.severity = now, ev.Output, severityOf(r, s.Status)
			return fmt.Sprintf("alert %d repeated", oa.id), oa.id, nil
		}
		a, created, err := Raise(ctx, c, AlertSpec{Name: alertName(s), Severity: severityOf(r, s.Status),
			Message: ev.Output, Fingerprint: fp, NodeID: s.NodeID, HostID: s.HostID, At: now,
			Source: "rule:" + r.Name, SuppressedBy: en.suppress[s.HostID]})
		if err != nil {
			return "", 0, err
		}
		sts.alerts[fp] = &openAlert{id: a.ID, event: ev.ID}
		if created {
			if err := e.afterChange(ctx, c, en, a.ID); err != nil {
				return "", 0, err
			}
			if _, err := Route(ctx, c, a.ID, false); err != nil {
				return "", 0, err
			}
			return fmt.Sprintf("alert %d raised", a.ID), a.ID, nil
		}
		return fmt.Sprintf("alert %d repeated (%d)", a.ID, a.Occurrences), a.ID, nil
	case eventrule.ActionResolveAlert:
		return e.resolve(ctx, c, en, sts, fp, "rule:"+r.Name, now)
	case eventrule.ActionCallHook:
		if by := en.suppress[s.HostID]; by != 0 {
			return fmt.Sprintf("hook suppressed by alert %d", by), 0, nil
		}
		body := HookBody{Rule: r.Name, Fingerprint: fp, Recovery: d.Recovery, Count: 1, Event: eventBody(ev, s)}
		id, err := e.schedule(ctx, c, r, fmt.Sprintf("rule:%d:event:%d", r.ID, ev.ID), fp, body)
		if err != nil {
			return "", 0, err
		}
		return fmt.Sprintf("hook delivery %d scheduled", id), 0, nil
	}
	return "", 0, nil
}

// resolve resolves the open alert with fingerprint fp and reconciles suppression if it
// was a cause.
func (e *Engine) resolve(ctx context.Context, c *ent.Client, en *env, sts *states, fp, by string, now time.Time) (string, int, error) {
	if err := sts.flushAlert(ctx, c, fp); err != nil {
		return "", 0, err
	}
	n, id, err := Resolve(ctx, c, fp, by, now)
	if err != nil || n == 0 {
		return fmt.Sprintf("resolved %d alert(s)", n), id, err
	}
	if _, err := Route(ctx, c, id, true); err != nil {
		return "", 0, err
	}
	return fmt.Sprintf("resolved %d alert(s)", n), id, e.afterChange(ctx, c, en, id)
}

// afterChange reconciles suppression when alert id (raised or resolved in c) is a cause,
// and refreshes the batch's view of it.
func (e *Engine) afterChange(ctx context.Context, c *ent.Client, en *env, id int) error {
	ok, err := isCause(ctx, c, id)
	if err != nil || !ok {
		return err
	}
	if _, err := Reconcile(ctx, c); err != nil {
		return err
	}
	en.suppress, err = LoadSuppressors(ctx, c)
	return err
}

// aggregate counts the event into its AGGREGATE rule's group; the first event of a window
// schedules the group's flush after the group wait, and no sooner than group interval after
// the group's last notification.
func (e *Engine) aggregate(ctx context.Context, c *ent.Client, sts *states, r *ent.EventRule, s Subject, ev *ent.Event, now time.Time) (string, error) {
	key := s.GroupKey(r.GroupBy)
	row := sts.get(stateKey{r.ID, "group:" + key})
	pending := row.Pending
	row.Pending, row.LastEventID, row.LastStatus = pending+1, ev.ID, s.Status
	if pending > 0 {
		return "grouped in " + key, nil
	}
	flush := now.Add(time.Duration(r.AggregateWindowSeconds) * time.Second)
	if row.LastIssuedAt != nil {
		if next := row.LastIssuedAt.Add(time.Duration(r.GroupIntervalSeconds) * time.Second); next.After(flush) {
			flush = next
		}
	}
	b, _ := json.Marshal(groupPayload{Rule: r.ID, Key: key})
	err := outbox.Enqueue(ctx, c, outbox.Task{Kind: TypeGroup, Queue: Queue, Payload: b,
		DedupKey: fmt.Sprintf("alerting:group:%d:%d", r.ID, ev.ID), Delay: flush.Sub(now)})
	if err != nil {
		return "", err
	}
	return "opened group " + key, nil
}

// FlushGroup acts once for the events an AGGREGATE rule gathered in group key, if any are
// pending (a flush run again finds none).
func (e *Engine) FlushGroup(ctx context.Context, ruleID int, key string) error {
	ctx = system(ctx)
	_, err := dbtx.Run(ctx, e.Client, func(c *ent.Client) error {
		row, err := lockState(ctx, c, ruleID, "group:"+key)
		if err != nil || row.Pending == 0 {
			return err
		}
		now := e.now()
		if err := c.RuleState.UpdateOne(row).SetPending(0).SetLastIssuedAt(now).SetIssuedStatus(row.LastStatus).Exec(ctx); err != nil {
			return err
		}
		r, err := c.EventRule.Get(ctx, ruleID)
		if ent.IsNotFound(err) || (err == nil && (!r.Enabled || r.Action == nil)) {
			return nil
		}
		if err != nil {
			return err
		}
		ev, err := withPlace(c.Event.Query().Where(event.ID(row.LastEventID))).Only(ctx)
		if ent.IsNotFound(err) {
			ev = &ent.Event{ID: row.LastEventID, CheckName: "group", Status: event.Status(row.LastStatus)}
		} else if err != nil {
			return err
		}
		s := subjectOf(ev, &env{})
		fp := fmt.Sprintf("group:%d:%s", r.ID, key)
		switch *r.Action {
		case eventrule.ActionCreateAlert:
			_, _, err = Raise(ctx, c, AlertSpec{Name: fmt.Sprintf("%s: %s", r.Name, key), Severity: severityOf(r, row.LastStatus),
				Message: fmt.Sprintf("%d events in group %s; last: %s", row.Pending, key, ev.Output), Fingerprint: fp,
				NodeID: s.NodeID, HostID: s.HostID, At: now})
		case eventrule.ActionResolveAlert:
			_, _, err = Resolve(ctx, c, fp, "rule:"+r.Name, now)
		case eventrule.ActionCallHook:
			body := HookBody{Rule: r.Name, Fingerprint: fp, Group: key, Count: row.Pending, Event: eventBody(ev, s)}
			_, err = e.schedule(ctx, c, r, fmt.Sprintf("rule:%d:group:%d:%d", r.ID, row.ID, row.LastEventID), fp, body)
		}
		return err
	})
	return err
}

func alertName(s Subject) string {
	switch {
	case s.Node != "":
		return s.Check + " on " + s.Node
	case s.Host != "":
		return s.Check + " on " + s.Host
	case s.Cluster != "":
		return s.Check + " on cluster " + s.Cluster
	}
	return s.Check
}

// severityOf is the rule's alert severity, or the event's status (CRITICAL or WARNING).
func severityOf(r *ent.EventRule, status string) alert.Severity {
	if r.AlertSeverity != nil {
		return alert.Severity(*r.AlertSeverity)
	}
	if status == string(event.StatusCritical) {
		return alert.SeverityCritical
	}
	return alert.SeverityWarning
}
