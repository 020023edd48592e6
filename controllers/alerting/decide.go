package alerting

import (
	"fmt"
	"time"
)

// State is what a rule remembers of one fingerprint between events (a RuleState row).
type State struct {
	// LastStatus and Consecutive are the run of events with the same status (Occurrences).
	LastStatus  string
	Consecutive int
	// IssuedStatus and IssuedAt are the status the rule last acted on, and when
	// (ReissueDuration).
	IssuedStatus string
	IssuedAt     *time.Time
}

// Decision is what Decide makes of one event.
type Decision struct {
	Act bool
	// Recovery is set when a SUCCESS follows a failure the rule acted on.
	Recovery bool
	// Why says why the rule did not act (empty when it does).
	Why string
}

// Decide applies a rule's Occurrences and ReissueDuration to an event of status seen at
// now, given the rule's state for the event's fingerprint, and returns the decision and
// the new state. It is pure: the rule engine stores the state in the event's transaction.
//
//   - Occurrences: the rule acts only once it has seen occurrences consecutive events of
//     the same status (a flapping check never gets there).
//   - ReissueDuration: once the rule acted on a status, repeats of that status are ignored
//     until reissue has passed; a different status acts at once. A zero reissue acts on
//     every repeat (an alert then counts them).
//   - A SUCCESS acts only as a recovery, when the rule last acted on a failure (unless
//     always is set: ResolveAlert rules resolve whatever raised the alert).
func Decide(st State, status string, now time.Time, occurrences int, reissue time.Duration, always bool) (Decision, State) {
	if status == st.LastStatus {
		st.Consecutive++
	} else {
		st.LastStatus, st.Consecutive = status, 1
	}
	if st.Consecutive < occurrences {
		return Decision{Why: fmt.Sprintf("seen %d of %d occurrences", st.Consecutive, occurrences)}, st
	}
	recovery := !failing(status) && st.IssuedStatus != "" && failing(st.IssuedStatus)
	if !failing(status) && !recovery && !always {
		return Decision{Why: "success with no failure to recover from"}, st
	}
	if reissue > 0 && st.IssuedStatus == status && st.IssuedAt != nil && now.Before(st.IssuedAt.Add(reissue)) {
		return Decision{Why: fmt.Sprintf("already handled at %s; reissued after %s", st.IssuedAt.UTC().Format(time.RFC3339), reissue)}, st
	}
	t := now
	st.IssuedStatus, st.IssuedAt = status, &t
	return Decision{Act: true, Recovery: recovery}, st
}
