package bgp

import (
	"errors"
	"net/netip"
	"slices"
	"sync"
)

// Table is the node's desired set of announcements, shared by the parts of the node agent
// that own addresses (its VM networks, its load balancers). Each owner announces and
// withdraws only its own prefixes through For(owner); a prefix several owners announce
// stays announced until the last of them withdraws it (the first owner's next hop wins).
//
// The Table keeps the desired state even while no speaker is attached: Attach hands it a
// running speaker (on start, or after the peers changed and a new speaker replaced the
// old) and replays every announcement to it; Detach forgets the speaker. So owners can
// announce before the BGP sessions exist, and nothing is lost when the speaker is
// replaced. A Table is safe for concurrent use.
type Table struct {
	mu      sync.Mutex
	speaker Announcer
	owners  map[netip.Prefix]map[string]netip.Addr // prefix -> owner -> next hop
	order   map[netip.Prefix][]string              // owners in the order they announced
}

// NewTable returns an empty Table with no speaker attached.
func NewTable() *Table {
	return &Table{owners: map[netip.Prefix]map[string]netip.Addr{}, order: map[netip.Prefix][]string{}}
}

// For returns the Announcer through which owner announces its prefixes.
func (t *Table) For(owner string) Announcer { return ownerAnnouncer{t: t, owner: owner} }

// Attach makes s the table's speaker and announces every desired prefix through it.
func (t *Table) Attach(s Announcer) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.speaker = s
	var errs []error
	for p := range t.owners {
		errs = append(errs, s.Announce(p, t.nexthop(p)))
	}
	return errors.Join(errs...)
}

// Detach forgets the speaker (which the caller closes); the desired state stays.
func (t *Table) Detach() {
	t.mu.Lock()
	t.speaker = nil
	t.mu.Unlock()
}

// Entry is one desired announcement and who wants it.
type Entry struct {
	Prefix  netip.Prefix
	NextHop netip.Addr
	Owners  []string
}

// Entries returns the desired announcements, sorted by prefix.
func (t *Table) Entries() []Entry {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]Entry, 0, len(t.owners))
	for p := range t.owners {
		out = append(out, Entry{Prefix: p, NextHop: t.nexthop(p), Owners: slices.Clone(t.order[p])})
	}
	slices.SortFunc(out, func(a, b Entry) int {
		if c := a.Prefix.Addr().Compare(b.Prefix.Addr()); c != 0 {
			return c
		}
		return a.Prefix.Bits() - b.Prefix.Bits()
	})
	return out
}

// Owned returns the prefixes owner announces, sorted.
func (t *Table) Owned(owner string) []netip.Prefix {
	var out []netip.Prefix
	for _, e := range t.Entries() {
		if slices.Contains(e.Owners, owner) {
			out = append(out, e.Prefix)
		}
	}
	return out
}

func (t *Table) nexthop(p netip.Prefix) netip.Addr {
	if o := t.order[p]; len(o) > 0 {
		return t.owners[p][o[0]]
	}
	return netip.Addr{}
}

func (t *Table) announce(owner string, p netip.Prefix, nh netip.Addr) error {
	if !p.IsValid() {
		return errors.New("bgp: invalid prefix")
	}
	p = p.Masked()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.owners[p] == nil {
		t.owners[p] = map[string]netip.Addr{}
	}
	if _, ok := t.owners[p][owner]; !ok {
		t.order[p] = append(t.order[p], owner)
	}
	t.owners[p][owner] = nh
	if t.speaker == nil {
		return nil
	}
	return t.speaker.Announce(p, t.nexthop(p))
}

func (t *Table) withdraw(owner string, p netip.Prefix) error {
	if !p.IsValid() {
		return errors.New("bgp: invalid prefix")
	}
	p = p.Masked()
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.owners[p][owner]; !ok {
		return nil
	}
	delete(t.owners[p], owner)
	t.order[p] = slices.DeleteFunc(t.order[p], func(o string) bool { return o == owner })
	if len(t.owners[p]) > 0 {
		if t.speaker == nil {
			return nil
		}
		return t.speaker.Announce(p, t.nexthop(p))
	}
	delete(t.owners, p)
	delete(t.order, p)
	if t.speaker == nil {
		return nil
	}
	return t.speaker.Withdraw(p)
}

type ownerAnnouncer struct {
	t     *Table
	owner string
}

func (o ownerAnnouncer) Announce(p netip.Prefix, nh netip.Addr) error {
	return o.t.announce(o.owner, p, nh)
}
func (o ownerAnnouncer) Withdraw(p netip.Prefix) error { return o.t.withdraw(o.owner, p) }
