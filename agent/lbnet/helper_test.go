package lbnet_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/virtflow/virtflow/agent/bgp"
	"github.com/virtflow/virtflow/agent/lbnet"
	"github.com/virtflow/virtflow/internal/testkit/netlab"
)

// A node (its BGP speaker and its load-balancer data plane) must run inside the node's
// namespace, and GoBGP opens its sessions from goroutines of its own, so the tests run a node
// as a child process: this test binary under `ip netns exec`, with VIRTFLOW_LBNODE_HELPER set
// to the speaker's config in JSON and VIRTFLOW_LBNODE_DIR to its HAProxy directory, obeying
// commands on stdin (the part of the node agent that realizes VM routes and load balancers).
func TestMain(m *testing.M) {
	if c := os.Getenv("VIRTFLOW_LBNODE_HELPER"); c != "" {
		os.Exit(helperMain(c, os.Getenv("VIRTFLOW_LBNODE_DIR"), os.Stdin, os.Stdout))
	}
	os.Exit(m.Run())
}

// helperMain obeys lines "wait" (BGP established), "announce PREFIX", "withdraw PREFIX" (VM
// routes), "lb SPECS-JSON" (Reconcile) and "state" (the last Sync's states in JSON),
// answering "ok ..." or "err ...". The node syncs every 100 ms.
func helperMain(config, dir string, in io.Reader, out io.Writer) int {
	var cfg bgp.Config
	if err := json.Unmarshal([]byte(config), &cfg); err != nil {
		fmt.Fprintln(out, "err", err)
		return 2
	}
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	sp, err := bgp.New(cfg)
	if err == nil {
		err = sp.Start(context.Background())
	}
	if err != nil {
		fmt.Fprintln(out, "err", err)
		return 1
	}
	defer sp.Close()
	table := bgp.NewTable()
	if err := table.Attach(sp); err != nil {
		fmt.Fprintln(out, "err", err)
		return 1
	}
	node := &lbnet.Node{Proxy: &lbnet.Proxy{Dir: dir, Output: os.Stderr}, Announcer: table.For("lb"), VIPs: lbnet.LoopbackVIPs{},
		Log: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { node.Run(ctx, 100*time.Millisecond, nil); close(done) }()
	defer func() { cancel(); <-done }()
	vms := table.For("vm")
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		cmd, arg, _ := strings.Cut(strings.TrimSpace(sc.Text()), " ")
		var res string
		var err error
		switch cmd {
		case "wait":
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			err = sp.WaitEstablished(ctx)
			cancel()
		case "announce":
			err = vms.Announce(netip.MustParsePrefix(arg), netip.Addr{})
		case "withdraw":
			err = vms.Withdraw(netip.MustParsePrefix(arg))
		case "lb":
			var specs []lbnet.Spec
			if err = json.Unmarshal([]byte(arg), &specs); err == nil {
				err = node.Reconcile(specs)
			}
		case "state":
			var b []byte
			b, err = json.Marshal(node.States())
			res = string(b)
		default:
			err = fmt.Errorf("unknown command %q", cmd)
		}
		if err != nil {
			fmt.Fprintln(out, "err", strings.ReplaceAll(err.Error(), "\n", " "))
		} else {
			fmt.Fprintln(out, "ok", res)
		}
	}
	return 0
}

// nodeProc is a node running in a namespace, driven over its stdin.
type nodeProc struct {
	ns   *netlab.NS
	addr netip.Addr
	in   io.WriteCloser
	out  *bufio.Scanner
}

func startNode(t *testing.T, ns *netlab.NS, addr, leaf netip.Addr, asn uint32) *nodeProc {
	t.Helper()
	js, err := json.Marshal(bgp.Config{ASN: asn, RouterID: addr, ListenPort: -1,
		Peers: []bgp.Peer{{Address: leaf, ASN: 65000, BFD: true}}})
	if err != nil {
		t.Fatal(err)
	}
	cmd := ns.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "VIRTFLOW_LBNODE_HELPER="+string(js), "VIRTFLOW_LBNODE_DIR="+t.TempDir())
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
	sc := bufio.NewScanner(outp)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	return &nodeProc{ns: ns, addr: addr, in: in, out: sc}
}

func (p *nodeProc) do(t *testing.T, line string) string {
	t.Helper()
	if _, err := fmt.Fprintln(p.in, line); err != nil {
		t.Fatalf("%s: %v", p.ns.Name, err)
	}
	if !p.out.Scan() {
		t.Fatalf("%s ended on %q: %v", p.ns.Name, line, p.out.Err())
	}
	res := p.out.Text()
	if !strings.HasPrefix(res, "ok") {
		t.Fatalf("%s: %s: %s", p.ns.Name, line, res)
	}
	return strings.TrimSpace(strings.TrimPrefix(res, "ok"))
}

func (p *nodeProc) serve(t *testing.T, specs ...lbnet.Spec) {
	t.Helper()
	b, err := json.Marshal(specs)
	if err != nil {
		t.Fatal(err)
	}
	p.do(t, "lb "+string(b))
}

func (p *nodeProc) states(t *testing.T) []lbnet.State {
	t.Helper()
	var st []lbnet.State
	if err := json.Unmarshal([]byte(p.do(t, "state")), &st); err != nil {
		t.Fatal(err)
	}
	return st
}

// memberHealth is the health node p reports for member vm of load balancer lb.
func (p *nodeProc) memberHealth(t *testing.T, lb, vm int) string {
	t.Helper()
	for _, s := range p.states(t) {
		if s.ID != lb {
			continue
		}
		for _, m := range s.Members {
			if m.ID == vm {
				return m.Health
			}
		}
	}
	return ""
}
