package bgp_test

import (
	"net/netip"
	"os"
	"testing"
	"time"

	"github.com/virtflow/virtflow/agent/bgp"
	"github.com/virtflow/virtflow/agent/bgp/bgptest"
	"github.com/virtflow/virtflow/internal/testkit/netlab"
)

func TestMain(m *testing.M) {
	bgptest.Helper()
	os.Exit(m.Run())
}

func TestNewRejectsBadConfig(t *testing.T) {
	good := bgp.Config{ASN: 65001, RouterID: netip.MustParseAddr("10.0.0.2"), ListenPort: -1}
	if _, err := bgp.New(good); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]bgp.Config{
		"no asn":       {RouterID: good.RouterID},
		"v6 router id": {ASN: 1, RouterID: netip.MustParseAddr("::1")},
		"short hold":   {ASN: 1, RouterID: good.RouterID, HoldTime: time.Second},
		"peer no asn":  {ASN: 1, RouterID: good.RouterID, Peers: []bgp.Peer{{Address: good.RouterID}}},
		"port":         {ASN: 1, RouterID: good.RouterID, ListenPort: 70000},
	} {
		if _, err := bgp.New(c); err == nil {
			t.Errorf("%s: New accepted %+v", name, c)
		}
	}
	s, _ := bgp.New(good)
	if err := s.Announce(netip.MustParsePrefix("10.1.0.1/32"), netip.Addr{}); err != bgp.ErrNotStarted {
		t.Errorf("Announce before Start: %v, want ErrNotStarted", err)
	}
}

// TestSpeakerAgainstBIRD peers a speaker in a node namespace with BIRD in a router
// namespace and checks the router's kernel table learns an announced /32 and drops it
// within one second each, and drops everything when the speaker closes.
func TestSpeakerAgainstBIRD(t *testing.T) {
	node := netlab.NewNS(t, "node")
	router := netlab.NewNS(t, "leaf")
	nodeAddr, leafAddr := netip.MustParseAddr("10.77.0.2"), netip.MustParseAddr("10.77.0.1")
	netlab.Link(t, node, "up0", netip.PrefixFrom(nodeAddr, 30), router, "down0", netip.PrefixFrom(leafAddr, 30))
	netlab.StartBIRD(t, router, netlab.BIRDConfig{RouterID: leafAddr, ASN: 65000,
		Neighbors: []netlab.BIRDNeighbor{{Address: nodeAddr, ASN: 65101, Passive: true}}})
	sp := bgptest.Start(t, node, bgp.Config{ASN: 65101, RouterID: nodeAddr, ListenPort: -1,
		Peers: []bgp.Peer{{Address: leafAddr, ASN: 65000, BFD: true}}})
	must := func(line string) string {
		t.Helper()
		out, err := sp.Do(line)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	must("wait")
	vm := netip.MustParsePrefix("10.200.0.7/32")
	must("announce " + vm.String())
	learn := router.WaitRoute(t, vm, nodeAddr, true, time.Second)
	if got := must("list"); got != "[{10.200.0.7/32 invalid IP}]" {
		t.Errorf("Announced() = %s", got)
	}
	must("withdraw " + vm.String())
	drop := router.WaitRoute(t, vm, netip.Addr{}, false, time.Second)
	t.Logf("router learned the /32 in %v and dropped it in %v", learn, drop)

	// An explicit next hop (the VM's host address on the same link) and close.
	must("announce 10.200.0.8/32 " + nodeAddr.String())
	router.WaitRoute(t, netip.MustParsePrefix("10.200.0.8/32"), nodeAddr, true, time.Second)
	_ = sp.Close()
	router.WaitRoute(t, netip.MustParsePrefix("10.200.0.8/32"), netip.Addr{}, false, 2*time.Second)
}
