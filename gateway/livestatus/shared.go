package livestatus

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/virtflow/virtflow/authz"
)

// keepReads is how many recent events' re-reads a hub keeps for late subscribers.
const keepReads = 256

// sharedReads lets the subscribers of one viewer share the re-read of an event: with many
// subscriptions of one token (dashboards, agents reconnecting) an event costs one query per
// viewer instead of one per subscriber. What a read returns is only ever read afterwards.
type sharedReads struct {
	mu      sync.Mutex
	entries map[readKey]*readEntry
}

type readKey struct {
	seq    uint64
	viewer string
}

type readEntry struct {
	done chan struct{}
	v    any
	err  error
}

func newSharedReads() *sharedReads { return &sharedReads{entries: map[readKey]*readEntry{}} }

// do returns the result of read for the event seq as viewer sees it, calling read once.
func (s *sharedReads) do(seq uint64, viewer string, read func() (any, error)) (any, error) {
	k := readKey{seq, viewer}
	s.mu.Lock()
	e, ok := s.entries[k]
	if !ok {
		e = &readEntry{done: make(chan struct{})}
		s.entries[k] = e
	}
	s.mu.Unlock()
	if ok {
		<-e.done
		return e.v, e.err
	}
	e.v, e.err = read()
	close(e.done)
	return e.v, e.err
}

// forget drops the reads of events older than the last keepReads before seq.
func (s *sharedReads) forget(seq uint64) {
	if seq <= keepReads {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.entries {
		if k.seq <= seq-keepReads {
			delete(s.entries, k)
		}
	}
}

// viewerKey identifies what a viewer may read: two viewers with the same key see the same
// rows.
func viewerKey(v *authz.Viewer) string {
	return fmt.Sprintf("%t|%s|%d|%d|%t|%v|%d|%v", v.IsSystem(), v.Name, v.UserID, v.TokenID, v.ReadOnly,
		v.Bindings, v.MaintainerID, v.MaintainerGroupIDs)
}

// readScopeKey identifies what a viewer may read of entity type typ, for sharing the re-read
// of an event among subscribers: viewers with the same permissions (system or not, read-only
// or not, the same role bindings in any order, the same maintainer and groups) read the same
// rows, whoever they are and whatever token they used, so 1,000 viewers holding the same
// roles cost one query per event, not 1,000. Where reads depend on the user as well
// (authz.SelfScoped: users, tokens, role bindings, notices), the user is part of the key.
func readScopeKey(v *authz.Viewer, typ string) string {
	bindings := make([]string, len(v.Bindings))
	for i, b := range v.Bindings {
		bindings[i] = string(b.Role) + "@" + b.Domain
	}
	slices.Sort(bindings)
	groups := slices.Clone(v.MaintainerGroupIDs)
	slices.Sort(groups)
	user := 0
	if authz.SelfScoped(typ) {
		user = v.UserID
	}
	return fmt.Sprintf("%s|%t|%t|%d|%s|%d|%v", typ, v.IsSystem(), v.ReadOnly, user, strings.Join(bindings, ","),
		v.MaintainerID, groups)
}
