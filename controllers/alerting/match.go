package alerting

import (
	"path"
	"sort"
	"strings"

	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/event"
	"github.com/virtflow/virtflow/ent/schema/fieldtype"
)

// Subject is what rules and silences match an event on: its check and status, and where it
// happened — the node, its host, the host's rack, the node's cluster — with the labels of
// the node overlaid by the event's own.
type Subject struct {
	Check, Status               string
	Node, Host, Rack, Cluster   string
	NodeID, HostID, ClusterID   int
	Labels                      map[string]string
	Cordoned, Draining, InMaint bool
}

// glob reports whether s matches the shell pattern p ("" and "*" match anything, including
// an empty s). A malformed pattern matches nothing.
func glob(p, s string) bool {
	if p == "" || p == "*" {
		return true
	}
	ok, err := path.Match(p, s)
	return err == nil && ok
}

// labelsMatch reports whether every matcher equals the subject's label; the value "*"
// requires only that the label exists.
func labelsMatch(m fieldtype.Labels, l map[string]string) bool {
	for k, want := range m {
		got, ok := l[k]
		if !ok || (want != "*" && want != got) {
			return false
		}
	}
	return true
}

// Matches reports whether rule r applies to the subject.
func Matches(r *ent.EventRule, s Subject) bool {
	if r.StatusMatch != nil && string(*r.StatusMatch) != s.Status {
		return false
	}
	return glob(r.CheckNamePattern, s.Check) && glob(r.NodePattern, s.Node) && glob(r.HostPattern, s.Host) &&
		glob(r.RackPattern, s.Rack) && glob(r.ClusterPattern, s.Cluster) && labelsMatch(r.LabelMatchers, s.Labels)
}

// Silenced reports whether the explicit silence si mutes the subject.
func silenceMatches(si *ent.Silence, s Subject) bool {
	return glob(si.CheckNamePattern, s.Check) && glob(si.NodePattern, s.Node) && glob(si.HostPattern, s.Host) &&
		labelsMatch(si.LabelMatchers, s.Labels)
}

// Fingerprint is the identity of what an event is about, shared by its repeats: the check
// and the node or host, plus the alertname label when a receiver set one. Alerts raised for
// it carry it, so a repeat updates the open alert instead of opening another.
func (s Subject) Fingerprint() string {
	var b strings.Builder
	b.WriteString(s.Check)
	if s.NodeID != 0 {
		b.WriteString("|node:")
		b.WriteString(itoa(s.NodeID))
	} else if s.HostID != 0 {
		b.WriteString("|host:")
		b.WriteString(itoa(s.HostID))
	} else if s.ClusterID != 0 {
		b.WriteString("|cluster:")
		b.WriteString(itoa(s.ClusterID))
	}
	if n := s.Labels["alertname"]; n != "" {
		b.WriteString("|alertname:")
		b.WriteString(n)
	}
	return b.String()
}

// GroupKey is the Aggregate group of the subject under groupBy: the values of the named
// attributes (check, status, node, host, rack, cluster, label:<key>) joined; an empty
// groupBy puts every event in one group.
func (s Subject) GroupKey(groupBy []string) string {
	keys := append([]string(nil), groupBy...)
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		var v string
		switch k {
		case "check":
			v = s.Check
		case "status":
			v = s.Status
		case "node":
			v = s.Node
		case "host":
			v = s.Host
		case "rack":
			v = s.Rack
		case "cluster":
			v = s.Cluster
		default:
			if l, ok := strings.CutPrefix(k, "label:"); ok {
				v = s.Labels[l]
			}
		}
		parts = append(parts, k+"="+v)
	}
	if len(parts) == 0 {
		return "all"
	}
	return strings.Join(parts, ",")
}

// kindOrder is the seed's order of rule kinds: Filter, Silence, Aggregate, Action.
var kindOrder = map[string]int{"FILTER": 0, "SILENCE": 1, "AGGREGATE": 2, "ACTION": 3}

// sortRules orders rules by kind (the seed's order), then priority (lowest first), then id.
func sortRules(rules []*ent.EventRule) {
	sort.SliceStable(rules, func(i, j int) bool {
		a, b := rules[i], rules[j]
		if ka, kb := kindOrder[string(a.Kind)], kindOrder[string(b.Kind)]; ka != kb {
			return ka < kb
		}
		if a.Priority != b.Priority {
			return a.Priority < b.Priority
		}
		return a.ID < b.ID
	})
}

// failing reports whether status is a failure (WARNING or CRITICAL).
func failing(status string) bool { return status != string(event.StatusSuccess) }
