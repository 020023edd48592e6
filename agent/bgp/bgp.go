// Package bgp announces a node's addresses (a VM's /32, a load balancer's VIP) to its BGP
// peers, the rack-leaf routers of the fabric (seed 001, "VM network (L3 advertisement)").
//
// A Speaker wraps the GoBGP library (github.com/osrg/gobgp/v3) in process: New takes the
// node's ASN, router id and peers, Start opens the sessions, Announce and Withdraw add and
// remove one prefix with its next hop, Announced lists what is announced, and Close ends the
// sessions (the peers then drop every route the speaker announced). Announce and Withdraw
// are sent to established peers at once (GoBGP applies no minimum advertisement interval
// unless asked to), so a peer learns or drops a route within a round trip of the call.
//
// BFD: GoBGP's library has no BFD. A peer marked BFD is therefore given the shortest hold
// time BGP allows (3 s, keepalive 1 s) instead, and Peer.BFD is reported back as not in use
// (PeerState.BFD is always false); a failed node is detected by the hold timer, not by BFD.
// Announce/withdraw latency is unaffected: they are explicit messages.
//
// The Speaker is safe for concurrent use. Announcer is the small interface the parts of the
// node agent that own addresses (VM networking, load balancers) depend on.
package bgp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"sync"
	"time"

	api "github.com/osrg/gobgp/v3/api"
	gobgplog "github.com/osrg/gobgp/v3/pkg/log"
	"github.com/osrg/gobgp/v3/pkg/server"
	"google.golang.org/protobuf/types/known/anypb"
)

// Announcer announces and withdraws prefixes. *Speaker implements it; the node agent hands
// it to whatever owns addresses on the node (VM networks, load-balancer VIPs).
type Announcer interface {
	// Announce announces prefix with nexthop (the zero Addr: the speaker's own address on
	// each session). Announcing an announced prefix again replaces its next hop.
	Announce(prefix netip.Prefix, nexthop netip.Addr) error
	// Withdraw withdraws prefix; withdrawing a prefix that is not announced does nothing.
	Withdraw(prefix netip.Prefix) error
}

// Peer is one BGP neighbour, typically a rack-leaf router the node's host is cabled to.
type Peer struct {
	// Address is the peer's address (its BGP session address on the shared link).
	Address netip.Addr
	// ASN is the peer's autonomous system number.
	ASN uint32
	// BFD asks for fast failure detection. GoBGP has no BFD: such a peer gets the
	// minimum hold time (3 s) instead; see the package documentation.
	BFD bool
	// Port is the peer's BGP port; 0 means 179.
	Port uint16
	// LocalAddress, when valid, is the address the session is opened from.
	LocalAddress netip.Addr
	// Passive, when true, makes the speaker wait for the peer to connect.
	Passive bool
}

// Config configures a Speaker.
type Config struct {
	// ASN is the node's own autonomous system number (required).
	ASN uint32
	// RouterID is the node's BGP router id, an IPv4 address (required).
	RouterID netip.Addr
	// ListenPort is the port the speaker accepts sessions on; -1 means it does not listen
	// (it only opens sessions itself); 0 means 179.
	ListenPort int32
	// ListenAddresses restricts the listening addresses (default: all).
	ListenAddresses []netip.Addr
	// Peers are the neighbours to open sessions with.
	Peers []Peer
	// HoldTime is the BGP hold time proposed to peers (default 9 s; BFD peers 3 s). The
	// keepalive interval is a third of it.
	HoldTime time.Duration
	// ConnectRetry is the interval between attempts to open a session (default 1 s).
	ConnectRetry time.Duration
	// Logger receives the library's warnings and errors (default slog.Default()).
	Logger *slog.Logger
}

// Route is one announced prefix.
type Route struct {
	Prefix  netip.Prefix
	NextHop netip.Addr // zero: the speaker's own session address
}

// PeerState is the state of one session.
type PeerState struct {
	Address     netip.Addr
	ASN         uint32
	Established bool
	State       string // the BGP FSM state, e.g. "ESTABLISHED", "ACTIVE"
	HoldTime    time.Duration
	BFD         bool // always false: GoBGP has no BFD
}

// Speaker is a BGP speaker announcing this node's prefixes.
type Speaker struct {
	cfg    Config
	srv    *server.BgpServer
	mu     sync.Mutex
	routes map[netip.Prefix]announced
	start  bool
	closed bool
}

type announced struct {
	nexthop netip.Addr
	uuid    []byte
}

// ErrNotStarted is returned by Announce and Withdraw before Start or after Close.
var ErrNotStarted = errors.New("bgp: speaker not running")

// New checks cfg and returns a Speaker that is not yet running.
func New(cfg Config) (*Speaker, error) {
	if cfg.ASN == 0 {
		return nil, errors.New("bgp: ASN is required")
	}
	if !cfg.RouterID.Is4() {
		return nil, fmt.Errorf("bgp: router id %v must be an IPv4 address", cfg.RouterID)
	}
	if cfg.ListenPort < -1 || cfg.ListenPort > 65535 {
		return nil, fmt.Errorf("bgp: listen port %d out of range", cfg.ListenPort)
	}
	seen := map[netip.Addr]bool{}
	for _, p := range cfg.Peers {
		if !p.Address.IsValid() || p.ASN == 0 {
			return nil, fmt.Errorf("bgp: peer %v needs an address and an ASN", p.Address)
		}
		if seen[p.Address] {
			return nil, fmt.Errorf("bgp: peer %v listed twice", p.Address)
		}
		seen[p.Address] = true
	}
	if cfg.HoldTime == 0 {
		cfg.HoldTime = 9 * time.Second
	}
	if cfg.HoldTime < 3*time.Second {
		return nil, fmt.Errorf("bgp: hold time %v below BGP's minimum of 3s", cfg.HoldTime)
	}
	if cfg.ConnectRetry == 0 {
		cfg.ConnectRetry = time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Speaker{cfg: cfg, routes: map[netip.Prefix]announced{}}, nil
}

// Start starts the speaker and opens its sessions; it returns once the speaker runs (the
// sessions come up in the background: see Peers and WaitEstablished). ctx bounds the
// start only; Close stops the speaker.
func (s *Speaker) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.start || s.closed {
		return errors.New("bgp: speaker already started")
	}
	srv := server.NewBgpServer(server.LoggerOption(&logger{l: s.cfg.Logger, level: gobgplog.WarnLevel}))
	go srv.Serve()
	g := &api.Global{Asn: s.cfg.ASN, RouterId: s.cfg.RouterID.String(), ListenPort: s.cfg.ListenPort}
	if g.ListenPort == 0 {
		g.ListenPort = 179
	}
	for _, a := range s.cfg.ListenAddresses {
		g.ListenAddresses = append(g.ListenAddresses, a.String())
	}
	if err := srv.StartBgp(ctx, &api.StartBgpRequest{Global: g}); err != nil {
		srv.Stop()
		return fmt.Errorf("bgp: start: %w", err)
	}
	for _, p := range s.cfg.Peers {
		if err := srv.AddPeer(ctx, &api.AddPeerRequest{Peer: s.apiPeer(p)}); err != nil {
			srv.Stop()
			return fmt.Errorf("bgp: peer %v: %w", p.Address, err)
		}
	}
	s.srv = srv
	s.start = true
	return nil
}

func (s *Speaker) holdTime(p Peer) time.Duration {
	if p.BFD {
		return 3 * time.Second
	}
	return s.cfg.HoldTime
}

func (s *Speaker) apiPeer(p Peer) *api.Peer {
	hold := uint64(s.holdTime(p) / time.Second)
	keep := max(hold/3, 1)
	family := &api.Family{Afi: api.Family_AFI_IP, Safi: api.Family_SAFI_UNICAST}
	if p.Address.Is6() {
		family.Afi = api.Family_AFI_IP6
	}
	ap := &api.Peer{
		Conf: &api.PeerConf{NeighborAddress: p.Address.String(), PeerAsn: p.ASN},
		Timers: &api.Timers{Config: &api.TimersConfig{
			ConnectRetry:           uint64(max(s.cfg.ConnectRetry/time.Second, 1)),
			HoldTime:               hold,
			KeepaliveInterval:      keep,
			IdleHoldTimeAfterReset: 1,
		}},
		Transport: &api.Transport{PassiveMode: p.Passive},
		AfiSafis:  []*api.AfiSafi{{Config: &api.AfiSafiConfig{Family: family, Enabled: true}}},
	}
	if p.Port != 0 {
		ap.Transport.RemotePort = uint32(p.Port)
	}
	if p.LocalAddress.IsValid() {
		ap.Transport.LocalAddress = p.LocalAddress.String()
	}
	return ap
}

// Announce announces prefix with nexthop to every peer (now to established ones, on
// session start to the others). A zero nexthop means the speaker's own session address.
func (s *Speaker) Announce(prefix netip.Prefix, nexthop netip.Addr) error {
	if !prefix.IsValid() {
		return fmt.Errorf("bgp: invalid prefix %v", prefix)
	}
	prefix = prefix.Masked()
	if nexthop.IsValid() && nexthop.Is4() != prefix.Addr().Is4() {
		return fmt.Errorf("bgp: next hop %v is not of prefix %v's family", nexthop, prefix)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.start || s.closed {
		return ErrNotStarted
	}
	if old, ok := s.routes[prefix]; ok && old.nexthop == nexthop {
		return nil
	}
	path, err := apiPath(prefix, nexthop)
	if err != nil {
		return err
	}
	res, err := s.srv.AddPath(context.Background(), &api.AddPathRequest{TableType: api.TableType_GLOBAL, Path: path})
	if err != nil {
		return fmt.Errorf("bgp: announce %v: %w", prefix, err)
	}
	// A new next hop replaces the old path in GoBGP's table (same prefix, same source).
	s.routes[prefix] = announced{nexthop: nexthop, uuid: res.Uuid}
	return nil
}

// Withdraw withdraws prefix from every peer. Withdrawing a prefix that is not announced
// does nothing.
func (s *Speaker) Withdraw(prefix netip.Prefix) error {
	if !prefix.IsValid() {
		return fmt.Errorf("bgp: invalid prefix %v", prefix)
	}
	prefix = prefix.Masked()
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.start || s.closed {
		return ErrNotStarted
	}
	r, ok := s.routes[prefix]
	if !ok {
		return nil
	}
	path, err := apiPath(prefix, r.nexthop)
	if err != nil {
		return err
	}
	if err := s.srv.DeletePath(context.Background(), &api.DeletePathRequest{TableType: api.TableType_GLOBAL, Family: path.Family, Path: path}); err != nil {
		return fmt.Errorf("bgp: withdraw %v: %w", prefix, err)
	}
	delete(s.routes, prefix)
	return nil
}

// Announced returns the announced routes, sorted by prefix.
func (s *Speaker) Announced() []Route {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Route, 0, len(s.routes))
	for p, r := range s.routes {
		out = append(out, Route{Prefix: p, NextHop: r.nexthop})
	}
	slices.SortFunc(out, func(a, b Route) int {
		if c := a.Prefix.Addr().Compare(b.Prefix.Addr()); c != 0 {
			return c
		}
		return a.Prefix.Bits() - b.Prefix.Bits()
	})
	return out
}

// Peers returns the state of every session, in the configured order.
func (s *Speaker) Peers(ctx context.Context) ([]PeerState, error) {
	s.mu.Lock()
	srv := s.srv
	running := s.start && !s.closed
	s.mu.Unlock()
	if !running {
		return nil, ErrNotStarted
	}
	states := map[string]*api.Peer{}
	if err := srv.ListPeer(ctx, &api.ListPeerRequest{}, func(p *api.Peer) {
		states[p.GetConf().GetNeighborAddress()] = p
	}); err != nil {
		return nil, fmt.Errorf("bgp: list peers: %w", err)
	}
	out := make([]PeerState, 0, len(s.cfg.Peers))
	for _, p := range s.cfg.Peers {
		ps := PeerState{Address: p.Address, ASN: p.ASN, State: "UNKNOWN", HoldTime: s.holdTime(p)}
		if ap := states[p.Address.String()]; ap != nil {
			st := ap.GetState().GetSessionState()
			ps.State = st.String()
			ps.Established = st == api.PeerState_ESTABLISHED
			if h := ap.GetTimers().GetState().GetNegotiatedHoldTime(); h > 0 {
				ps.HoldTime = time.Duration(h) * time.Second
			}
		}
		out = append(out, ps)
	}
	return out, nil
}

// WaitEstablished waits until every peer's session is established or ctx ends.
func (s *Speaker) WaitEstablished(ctx context.Context) error {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		ps, err := s.Peers(ctx)
		if err != nil {
			return err
		}
		up := true
		for _, p := range ps {
			up = up && p.Established
		}
		if up {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("bgp: sessions not established: %v: %w", ps, ctx.Err())
		case <-t.C:
		}
	}
}

// Close ends every session and stops the speaker; the peers drop its routes.
func (s *Speaker) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if s.srv == nil {
		return nil
	}
	err := s.srv.StopBgp(context.Background(), &api.StopBgpRequest{})
	s.srv.Stop()
	s.routes = map[netip.Prefix]announced{}
	return err
}

func apiPath(prefix netip.Prefix, nexthop netip.Addr) (*api.Path, error) {
	nlri, err := anypb.New(&api.IPAddressPrefix{Prefix: prefix.Addr().String(), PrefixLen: uint32(prefix.Bits())})
	if err != nil {
		return nil, err
	}
	origin, err := anypb.New(&api.OriginAttribute{Origin: 0}) // IGP
	if err != nil {
		return nil, err
	}
	family := &api.Family{Afi: api.Family_AFI_IP, Safi: api.Family_SAFI_UNICAST}
	nh := "0.0.0.0"
	if prefix.Addr().Is6() {
		family.Afi = api.Family_AFI_IP6
		nh = "::"
	}
	if nexthop.IsValid() {
		nh = nexthop.String()
	}
	attrs := []*anypb.Any{origin}
	if prefix.Addr().Is4() {
		nha, err := anypb.New(&api.NextHopAttribute{NextHop: nh})
		if err != nil {
			return nil, err
		}
		attrs = append(attrs, nha)
	} else {
		mp, err := anypb.New(&api.MpReachNLRIAttribute{Family: family, NextHops: []string{nh}, Nlris: []*anypb.Any{nlri}})
		if err != nil {
			return nil, err
		}
		attrs = append(attrs, mp)
	}
	return &api.Path{Family: family, Nlri: nlri, Pattrs: attrs}, nil
}

// logger adapts slog to GoBGP's logger interface, passing warnings and worse.
type logger struct {
	l     *slog.Logger
	mu    sync.Mutex
	level gobgplog.LogLevel
}

func (g *logger) log(lv gobgplog.LogLevel, sl slog.Level, msg string, f gobgplog.Fields) {
	if lv > g.GetLevel() {
		return
	}
	args := make([]any, 0, 2*len(f))
	for k, v := range f {
		args = append(args, k, v)
	}
	g.l.Log(context.Background(), sl, "gobgp: "+msg, args...)
}

func (g *logger) Panic(msg string, f gobgplog.Fields) {
	g.log(gobgplog.PanicLevel, slog.LevelError, msg, f)
	panic(msg)
}
func (g *logger) Fatal(msg string, f gobgplog.Fields) {
	g.log(gobgplog.FatalLevel, slog.LevelError, msg, f)
}
func (g *logger) Error(msg string, f gobgplog.Fields) {
	g.log(gobgplog.ErrorLevel, slog.LevelError, msg, f)
}
func (g *logger) Warn(msg string, f gobgplog.Fields) {
	g.log(gobgplog.WarnLevel, slog.LevelWarn, msg, f)
}
func (g *logger) Info(msg string, f gobgplog.Fields) {
	g.log(gobgplog.InfoLevel, slog.LevelInfo, msg, f)
}
func (g *logger) Debug(msg string, f gobgplog.Fields) {
	g.log(gobgplog.DebugLevel, slog.LevelDebug, msg, f)
}
func (g *logger) SetLevel(lv gobgplog.LogLevel) { g.mu.Lock(); g.level = lv; g.mu.Unlock() }
func (g *logger) GetLevel() gobgplog.LogLevel {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.level
}
