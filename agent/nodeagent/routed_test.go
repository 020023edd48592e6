package nodeagent_test

import (
	"net/netip"
	"testing"

	"github.com/virtflow/virtflow/agent/bgp"
	"github.com/virtflow/virtflow/agent/hypervisor"
	"github.com/virtflow/virtflow/agent/nodeagent"
)

func TestParseBGPPeers(t *testing.T) {
	got, err := nodeagent.ParseBGPPeers(" 10.0.0.1:65000, 10.0.0.5:4200000000:bfd ,")
	want := []bgp.Peer{{Address: netip.MustParseAddr("10.0.0.1"), ASN: 65000}, {Address: netip.MustParseAddr("10.0.0.5"), ASN: 4200000000, BFD: true}}
	if err != nil || len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("ParseBGPPeers = %+v, %v", got, err)
	}
	if p, err := nodeagent.ParseBGPPeers(""); err != nil || p != nil {
		t.Fatalf("empty: %v %v", p, err)
	}
	for _, bad := range []string{"10.0.0.1", "10.0.0.1:0", "x:65000", "10.0.0.1:65000:nobfd", "10.0.0.1:99999999999"} {
		if _, err := nodeagent.ParseBGPPeers(bad); err == nil {
			t.Errorf("ParseBGPPeers(%q) accepted", bad)
		}
	}
}

func TestRoutedModeNeedsNamespaces(t *testing.T) {
	hv, err := hypervisor.NewSimulated(hypervisor.SimulatedConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer hv.Close()
	base := nodeagent.Config{APIURL: "http://x/query", Token: "t", Hypervisor: hv, CacheDir: t.TempDir()}
	if _, err := nodeagent.New(base); err != nil {
		t.Fatalf("bridged (default): %v", err)
	}
	for _, mode := range []string{nodeagent.NetworkRouted, "bogus"} {
		c := base
		c.NetworkMode = mode
		if _, err := nodeagent.New(c); err == nil {
			t.Errorf("New accepted network mode %q without namespaces", mode)
		}
	}
}
