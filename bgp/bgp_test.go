package bgp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/virtflow/virtflow/internal/netlab"
)

// The speaker must run inside the node's namespace, and GoBGP opens its sessions from
// goroutines of its own (a Go program cannot keep those in a namespace), so the test runs
// it in a child process: this test binary, started under `ip netns exec` with
// VIRTFLOW_BGP_HELPER set to the speaker's Config in JSON, reading commands on stdin.
func TestMain(m *testing.M) {
	if c := os.Getenv("VIRTFLOW_BGP_HELPER"); c != "" {
		os.Exit(helperMain(c, os.Stdin, os.Stdout))
	}
	os.Exit(m.Run())
}

// helperMain runs a speaker and obeys lines "announce PREFIX [NEXTHOP]", "withdraw PREFIX",
// "wait" (until established) and "list", answering "ok ..." or "err ...".
func helperMain(config string, in io.Reader, out io.Writer) int {
	var cfg Config
	if err := json.Unmarshal([]byte(config), &cfg); err != nil {
		fmt.Fprintln(out, "err", err)
		return 2
	}
	s, err := New(cfg)
	if err == nil {
		err = s.Start(context.Background())
	}
	if err != nil {
		fmt.Fprintln(out, "err", err)
		return 1
	}
	defer s.Close()
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		var err error
		var res string
		switch f[0] {
		case "announce":
			var nh netip.Addr
			if len(f) > 2 {
				nh, err = netip.ParseAddr(f[2])
			}
			if err == nil {
				err = s.Announce(netip.MustParsePrefix(f[1]), nh)
			}
		case "withdraw":
			err = s.Withdraw(netip.MustParsePrefix(f[1]))
		case "wait":
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			err = s.WaitEstablished(ctx)
			cancel()
		case "list":
			res = fmt.Sprint(s.Announced())
		default:
			err = fmt.Errorf("unknown command %q", f[0])
		}
		if err != nil {
			fmt.Fprintln(out, "err", err)
		} else {
			fmt.Fprintln(out, "ok", res)
		}
	}
	return 0
}

// speakerProc is a speaker running in a namespace, driven over its stdin.
type speakerProc struct {
	in  io.WriteCloser
	out *bufio.Scanner
}

func startSpeaker(t *testing.T, ns *netlab.NS, cfg Config) *speakerProc {
	t.Helper()
	js, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cmd := ns.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "VIRTFLOW_BGP_HELPER="+string(js))
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	outp, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); _ = cmd.Wait() })
	return &speakerProc{in: in, out: bufio.NewScanner(outp)}
}

func (p *speakerProc) do(t *testing.T, line string) string {
	t.Helper()
	if _, err := fmt.Fprintln(p.in, line); err != nil {
		t.Fatal(err)
	}
	if !p.out.Scan() {
		t.Fatalf("speaker ended on %q: %v", line, p.out.Err())
	}
	res := p.out.Text()
	if !strings.HasPrefix(res, "ok") {
		t.Fatalf("%s: %s", line, res)
	}
	return strings.TrimSpace(strings.TrimPrefix(res, "ok"))
}

func TestNewRejectsBadConfig(t *testing.T) {
	good := Config{ASN: 65001, RouterID: netip.MustParseAddr("10.0.0.2"), ListenPort: -1}
	if _, err := New(good); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]Config{
		"no asn":       {RouterID: good.RouterID},
		"v6 router id": {ASN: 1, RouterID: netip.MustParseAddr("::1")},
		"short hold":   {ASN: 1, RouterID: good.RouterID, HoldTime: time.Second},
		"peer no asn":  {ASN: 1, RouterID: good.RouterID, Peers: []Peer{{Address: good.RouterID}}},
		"port":         {ASN: 1, RouterID: good.RouterID, ListenPort: 70000},
	} {
		if _, err := New(c); err == nil {
			t.Errorf("%s: New accepted %+v", name, c)
		}
	}
	s, _ := New(good)
	if err := s.Announce(netip.MustParsePrefix("10.1.0.1/32"), netip.Addr{}); err != ErrNotStarted {
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
	sp := startSpeaker(t, node, Config{ASN: 65101, RouterID: nodeAddr, ListenPort: -1,
		Peers: []Peer{{Address: leafAddr, ASN: 65000, BFD: true}}})
	sp.do(t, "wait")

	vm := netip.MustParsePrefix("10.200.0.7/32")
	sp.do(t, "announce "+vm.String())
	learn := router.WaitRoute(t, vm, nodeAddr, true, time.Second)
	if got := sp.do(t, "list"); got != "[{10.200.0.7/32 invalid IP}]" {
		t.Errorf("Announced() = %s", got)
	}
	sp.do(t, "withdraw "+vm.String())
	drop := router.WaitRoute(t, vm, netip.Addr{}, false, time.Second)
	t.Logf("router learned the /32 in %v and dropped it in %v", learn, drop)

	// An explicit next hop (the VM's host address on the same link) and close.
	sp.do(t, "announce 10.200.0.8/32 "+nodeAddr.String())
	router.WaitRoute(t, netip.MustParsePrefix("10.200.0.8/32"), nodeAddr, true, time.Second)
	sp.in.Close()
	router.WaitRoute(t, netip.MustParsePrefix("10.200.0.8/32"), netip.Addr{}, false, 2*time.Second)
}
