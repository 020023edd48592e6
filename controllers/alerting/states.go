package alerting

import (
	"context"
	stdsql "database/sql"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"entgo.io/ent/dialect/sql"

	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/alert"
	"github.com/virtflow/virtflow/ent/event"
	"github.com/virtflow/virtflow/ent/eventrule"
	"github.com/virtflow/virtflow/ent/predicate"
	"github.com/virtflow/virtflow/ent/rulestate"
	"github.com/virtflow/virtflow/store/rowlock"
)

// stateKey names one RuleState row.
type stateKey struct {
	rule int
	key  string
}

// states are the rule states one chunk of events uses. They are created and locked at the
// chunk's start in a fixed order (rule, key) with two statements, so that two workers whose
// chunks share fingerprints wait for each other instead of deadlocking; the rules then
// read and change them in memory, and flush writes the changed ones back in one statement.
type states struct {
	rows  map[stateKey]*ent.RuleState
	dirty map[stateKey]bool
	// alerts are the open alerts of the chunk's fingerprints; repeats are counted on them
	// and written once (flushAlerts).
	alerts map[string]*openAlert
	// results are what the rules did with each event, written in one statement.
	results []eventResult
}

// openAlert is an open alert and the repeats the chunk counted on it.
type openAlert struct {
	id  int
	add int
	// event is the last event counted on the alert: an event that several CREATE_ALERT
	// rules match counts once (occurrences count events, not rules).
	event    int
	at       time.Time
	message  string
	severity alert.Severity
}

// eventResult is what the rules did with one event.
type eventResult struct {
	id       int
	silenced bool
	outcome  string
	alert    int
}

// stateKeyOf is the state an ACTION or AGGREGATE rule keeps for subject s.
func stateKeyOf(r *ent.EventRule, s Subject) (stateKey, bool) {
	switch {
	case r.Kind == eventrule.KindAggregate:
		return stateKey{r.ID, "group:" + s.GroupKey(r.GroupBy)}, true
	case r.Kind == eventrule.KindAction && r.Action != nil:
		return stateKey{r.ID, s.Fingerprint()}, true
	}
	return stateKey{}, false
}

// lockStates creates the missing states of keys and locks them all, in order.
func lockStates(ctx context.Context, c *ent.Client, keys map[stateKey]bool) (*states, error) {
	st := &states{rows: make(map[stateKey]*ent.RuleState, len(keys)), dirty: map[stateKey]bool{}, alerts: map[string]*openAlert{}}
	if len(keys) == 0 {
		return st, nil
	}
	sorted := make([]stateKey, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Slice(sorted, func(i, j int) bool {
		if sorted[i].rule != sorted[j].rule {
			return sorted[i].rule < sorted[j].rule
		}
		return sorted[i].key < sorted[j].key
	})
	builders := make([]*ent.RuleStateCreate, len(sorted))
	byRule := map[int][]string{}
	for i, k := range sorted {
		builders[i] = c.RuleState.Create().SetRuleID(k.rule).SetKey(k.key)
		byRule[k.rule] = append(byRule[k.rule], k.key)
	}
	err := c.RuleState.CreateBulk(builders...).
		OnConflict(sql.ConflictColumns(rulestate.FieldRuleID, rulestate.FieldKey)).DoNothing().Exec(ctx)
	if err != nil && !errors.Is(err, stdsql.ErrNoRows) {
		return nil, fmt.Errorf("rule states: %w", err)
	}
	var or []predicate.RuleState
	for r, ks := range byRule {
		or = append(or, rulestate.And(rulestate.RuleID(r), rulestate.KeyIn(ks...)))
	}
	q := c.RuleState.Query().Where(rulestate.Or(or...)).Order(ent.Asc(rulestate.FieldRuleID), ent.Asc(rulestate.FieldKey))
	q.Modify(rowlock.ForUpdate)
	rows, err := q.All(ctx)
	if err != nil {
		return nil, fmt.Errorf("lock rule states: %w", err)
	}
	for _, r := range rows {
		st.rows[stateKey{r.RuleID, r.Key}] = r
	}
	return st, nil
}

// get returns the locked state k (a zero one if lockStates did not see it).
func (st *states) get(k stateKey) *ent.RuleState {
	r := st.rows[k]
	if r == nil {
		r = &ent.RuleState{RuleID: k.rule, Key: k.key}
		st.rows[k] = r
	}
	st.dirty[k] = true
	return r
}

// flush writes the changed states back with one upsert.
func (st *states) flush(ctx context.Context, c *ent.Client) error {
	if len(st.dirty) == 0 {
		return nil
	}
	builders := make([]*ent.RuleStateCreate, 0, len(st.dirty))
	for k := range st.dirty {
		r := st.rows[k]
		builders = append(builders, c.RuleState.Create().SetRuleID(k.rule).SetKey(k.key).SetLastStatus(r.LastStatus).
			SetConsecutive(r.Consecutive).SetIssuedStatus(r.IssuedStatus).SetNillableLastIssuedAt(r.LastIssuedAt).
			SetPending(r.Pending).SetLastEventID(r.LastEventID))
	}
	err := c.RuleState.CreateBulk(builders...).
		OnConflict(sql.ConflictColumns(rulestate.FieldRuleID, rulestate.FieldKey)).UpdateNewValues().Exec(ctx)
	if err != nil {
		return fmt.Errorf("save rule states: %w", err)
	}
	st.dirty = map[stateKey]bool{}
	return nil
}

// loadOpenAlerts reads, in one statement, the open alerts of the fingerprints the chunk's
// ACTION rules keep states for.
func (st *states) loadOpenAlerts(ctx context.Context, c *ent.Client, keys map[stateKey]bool) error {
	var fps []string
	for k := range keys {
		if !strings.HasPrefix(k.key, "group:") {
			fps = append(fps, k.key)
		}
	}
	if len(fps) == 0 {
		return nil
	}
	as, err := c.Alert.Query().Where(alert.StatusEQ(alert.StatusOpen), alert.FingerprintIn(fps...)).
		Select(alert.FieldID, alert.FieldFingerprint).All(ctx)
	if err != nil {
		return fmt.Errorf("open alerts: %w", err)
	}
	for _, a := range as {
		st.alerts[a.Fingerprint] = &openAlert{id: a.ID}
	}
	return nil
}

// flushAlert writes the repeats counted on the open alert of fp, if any, and forgets it
// (it is about to be resolved).
func (st *states) flushAlert(ctx context.Context, c *ent.Client, fp string) error {
	oa := st.alerts[fp]
	if oa == nil {
		return nil
	}
	delete(st.alerts, fp)
	return oa.write(ctx, c)
}

// flushAlerts writes the repeats counted on every open alert: one statement per alert.
func (st *states) flushAlerts(ctx context.Context, c *ent.Client) error {
	for _, oa := range st.alerts {
		if err := oa.write(ctx, c); err != nil {
			return err
		}
	}
	return nil
}

func (oa *openAlert) write(ctx context.Context, c *ent.Client) error {
	if oa.add == 0 {
		return nil
	}
	err := c.Alert.UpdateOneID(oa.id).AddOccurrences(oa.add).SetLastSeenAt(oa.at).SetMessage(oa.message).
		SetSeverity(oa.severity).Exec(ctx)
	if err != nil {
		return fmt.Errorf("count repeats on alert %d: %w", oa.id, err)
	}
	oa.add = 0
	return nil
}

// flushEvents marks the chunk's events processed with what the rules did, in one UPDATE
// whose outcome, silenced and alert are CASE expressions over the event ids.
func (st *states) flushEvents(ctx context.Context, c *ent.Client, now time.Time) error {
	if len(st.results) == 0 {
		return nil
	}
	ids := make([]int, len(st.results))
	withAlert := false
	for i, r := range st.results {
		ids[i] = r.id
		withAlert = withAlert || r.alert != 0
	}
	// CASE id WHEN <id> THEN CAST(<value> AS <type>) … END, the casts for PostgreSQL's
	// parameters of unknown type (and valid in SQLite).
	column := func(typ string, value func(eventResult) (any, bool), otherwise string) sql.Querier {
		return sql.ExprFunc(func(b *sql.Builder) {
			b.WriteString("CASE ").Ident(event.FieldID)
			for _, r := range st.results {
				if v, ok := value(r); ok {
					b.WriteString(" WHEN ").Arg(r.id).WriteString(" THEN CAST(").Arg(v).WriteString(" AS " + typ + ")")
				}
			}
			if otherwise != "" {
				b.WriteString(" ELSE ").Ident(otherwise)
			}
			b.WriteString(" END")
		})
	}
	err := c.Event.Update().Where(event.IDIn(ids...)).SetProcessedAt(now).Modify(func(u *sql.UpdateBuilder) {
		u.Set(event.FieldOutcome, column("TEXT", func(r eventResult) (any, bool) { return r.outcome, true }, ""))
		u.Set(event.FieldSilenced, column("BOOLEAN", func(r eventResult) (any, bool) { return r.silenced, true }, ""))
		if withAlert {
			u.Set(event.AlertColumn, column("BIGINT", func(r eventResult) (any, bool) { return r.alert, r.alert != 0 }, event.AlertColumn))
		}
	}).Exec(ctx)
	if err != nil {
		return fmt.Errorf("mark events processed: %w", err)
	}
	st.results = nil
	return nil
}
