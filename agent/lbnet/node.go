package lbnet

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Member health values, as the API spells them.
const (
	Up      = "UP"
	Down    = "DOWN"
	Unknown = "UNKNOWN"
)

// Announcer announces and withdraws prefixes to the node's BGP peers; a zero next hop means
// the node's own session address. bgp.Table.For("lb") and *bgp.Speaker satisfy it.
type Announcer interface {
	Announce(prefix netip.Prefix, nexthop netip.Addr) error
	Withdraw(prefix netip.Prefix) error
}

// VIPs puts VIPs on the node so that its proxy may bind them (a /32 or /128 on the loopback).
type VIPs interface {
	Add(vip netip.Addr) error
	Remove(vip netip.Addr) error
}

// MemberHealth is the health of one member as the node's proxy sees it.
type MemberHealth struct {
	ID        int        `json:"id"`
	Address   netip.Addr `json:"address"`
	Health    string     `json:"health"`
	Reason    string     `json:"reason,omitempty"`
	CheckedAt time.Time  `json:"checkedAt"`
}

// State is what a node reports for one load balancer.
type State struct {
	ID int `json:"id"`
	// Forwarding: the proxy runs and at least one member is UP.
	Forwarding bool `json:"forwarding"`
	// Announced: the VIP is announced to the node's BGP peers.
	Announced bool           `json:"announced"`
	Reason    string         `json:"reason,omitempty"`
	Members   []MemberHealth `json:"members"`
}

// Node serves load balancers on one node: one HAProxy for all of them and one announcement
// per VIP. Its methods may be called from several goroutines.
type Node struct {
	Proxy     *Proxy
	Announcer Announcer
	VIPs      VIPs
	Log       *slog.Logger
	// Now is the clock (time.Now when nil).
	Now func() time.Time

	mu        sync.Mutex
	specs     []Spec
	announced map[netip.Addr]bool
	states    []State
}

func (n *Node) now() time.Time {
	if n.Now != nil {
		return n.Now()
	}
	return time.Now()
}

func (n *Node) log() *slog.Logger {
	if n.Log != nil {
		return n.Log
	}
	return slog.Default()
}

// Reconcile makes the node serve exactly specs: VIPs on the node, the proxy configured for
// them, and the VIPs of load balancers no longer served withdrawn. Announcements follow in
// Sync, once the members' health is known.
func (n *Node) Reconcile(specs []Spec) error {
	for _, s := range specs {
		if err := s.Validate(); err != nil {
			return err
		}
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	keep := map[netip.Addr]bool{}
	for _, s := range specs {
		keep[s.VIP] = true
		if n.VIPs != nil {
			if err := n.VIPs.Add(s.VIP); err != nil {
				return fmt.Errorf("VIP %s: %w", s.VIP, err)
			}
		}
	}
	var errs []error
	for vip := range n.announced {
		if !keep[vip] {
			errs = append(errs, n.withdrawLocked(vip))
		}
	}
	for _, s := range n.specs {
		if !keep[s.VIP] && n.VIPs != nil {
			errs = append(errs, n.VIPs.Remove(s.VIP))
		}
	}
	n.specs = slices.Clone(specs)
	if len(specs) == 0 {
		n.Proxy.Stop()
		return errors.Join(errs...)
	}
	errs = append(errs, n.Proxy.Apply(Render(specs, n.Proxy.StatsSocket())))
	return errors.Join(errs...)
}

func (n *Node) withdrawLocked(vip netip.Addr) error {
	if n.announced == nil || !n.announced[vip] {
		return nil
	}
	if err := n.Announcer.Withdraw(netip.PrefixFrom(vip, vip.BitLen())); err != nil {
		return fmt.Errorf("withdraw %s: %w", vip, err)
	}
	delete(n.announced, vip)
	n.log().Info("VIP withdrawn", "vip", vip)
	return nil
}

func (n *Node) announceLocked(vip netip.Addr) error {
	if n.announced[vip] {
		return nil
	}
	if err := n.Announcer.Announce(netip.PrefixFrom(vip, vip.BitLen()), netip.Addr{}); err != nil {
		return fmt.Errorf("announce %s: %w", vip, err)
	}
	if n.announced == nil {
		n.announced = map[netip.Addr]bool{}
	}
	n.announced[vip] = true
	n.log().Info("VIP announced", "vip", vip)
	return nil
}

// Sync reads the members' health from the proxy, announces the VIP of every load balancer
// that forwards (proxy running, a member UP) and withdraws the others, and returns the
// states to report. A proxy that does not run withdraws every VIP.
func (n *Node) Sync(ctx context.Context) ([]State, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	stats, statErr := n.Proxy.Stat(ctx)
	now := n.now().UTC()
	byServer := map[string][]ServerStat{}
	for _, st := range stats {
		byServer[st.Backend+"/"+st.Server] = append(byServer[st.Backend+"/"+st.Server], st)
	}
	var errs []error
	states := make([]State, 0, len(n.specs))
	for _, s := range n.specs {
		st := State{ID: s.ID}
		for _, m := range s.Members {
			mh := MemberHealth{ID: m.ID, Address: m.Address, Health: Unknown, CheckedAt: now}
			if statErr != nil {
				mh.Reason = "proxy: " + statErr.Error()
			} else {
				mh.Health, mh.Reason = memberHealth(s, m, byServer)
			}
			if mh.Health == Up {
				st.Forwarding = true
			}
			st.Members = append(st.Members, mh)
		}
		switch {
		case statErr != nil:
			st.Reason = "proxy not running: " + statErr.Error()
		case len(s.Listeners) == 0:
			st.Forwarding, st.Reason = false, "no listeners"
		case !st.Forwarding:
			st.Reason = "no member passes its health check"
		}
		var err error
		if st.Forwarding {
			err = n.announceLocked(s.VIP)
		} else {
			err = n.withdrawLocked(s.VIP)
		}
		if err != nil {
			errs = append(errs, err)
			st.Reason = strings.TrimSpace(st.Reason + " " + err.Error())
		}
		st.Announced = n.announced[s.VIP]
		states = append(states, st)
	}
	slices.SortFunc(states, func(a, b State) int { return cmp.Compare(a.ID, b.ID) })
	n.states = states
	return states, errors.Join(errs...)
}

// memberHealth is UP when the member passes the checks of every listener, DOWN (with the
// failed check) when one fails, UNKNOWN before the first checks.
func memberHealth(s Spec, m Member, byServer map[string][]ServerStat) (string, string) {
	if len(s.Listeners) == 0 {
		return Unknown, "no listeners"
	}
	health := Up
	var reasons []string
	for _, l := range s.Listeners {
		rows := byServer[backendName(s.ID, l.Port)+"/m"+strconv.Itoa(m.ID)]
		if len(rows) == 0 {
			return Unknown, "not in the proxy yet"
		}
		r := rows[0]
		switch {
		case r.CheckStatus == "" || strings.HasPrefix(r.CheckStatus, "INI") || strings.HasPrefix(r.CheckStatus, "*INI"):
			if health == Up {
				health = Unknown
			}
		case strings.HasPrefix(r.Status, "UP"):
		default:
			health = Down
			reasons = append(reasons, fmt.Sprintf("port %d: %s %s", l.TargetPort, strings.TrimPrefix(r.CheckStatus, "* "), r.LastCheck))
		}
	}
	return health, strings.TrimSpace(strings.Join(reasons, "; "))
}

// States are the states of the last Sync.
func (n *Node) States() []State {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.states)
}

// Run syncs every interval until ctx ends, and at once when the proxy exits, so a dead
// proxy's VIPs are withdrawn without waiting; report (may be nil) gets every sync's states.
// On return every VIP is withdrawn and the proxy stopped.
func (n *Node) Run(ctx context.Context, interval time.Duration, report func([]State)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		states, err := n.Sync(ctx)
		if err != nil {
			n.log().Warn("load balancer sync", "err", err)
		}
		if report != nil {
			report(states)
		}
		select {
		case <-ctx.Done():
			_ = n.Reconcile(nil)
			return
		case <-t.C:
		case <-n.Proxy.Done():
			// Exited: sync now (withdraws); then wait for the ticker, not a closed channel.
			if _, err := n.Sync(ctx); err != nil {
				n.log().Warn("load balancer sync", "err", err)
			}
			select {
			case <-ctx.Done():
				_ = n.Reconcile(nil)
				return
			case <-t.C:
			}
		}
	}
}
