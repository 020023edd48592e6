// Package bgptest runs a bgp.Speaker inside a network namespace a test made, for tests.
//
// GoBGP opens its sessions from goroutines of its own, which a Go program cannot keep in a
// namespace, so the speaker runs in a child process: the test binary itself, started under
// `ip netns exec` with the speaker's Config in the environment. The test's TestMain must
// call Helper first (it returns at once in the test process and never returns in the
// child). Start returns a Remote, a bgp.Announcer driving that child over its stdin.
package bgptest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/netip"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/virtflow/virtflow/agent/bgp"
	"github.com/virtflow/virtflow/internal/testkit/netlab"
)

const env = "VIRTFLOW_BGPTEST_SPEAKER"

// Helper runs the speaker and exits when this process is a child Start made; otherwise it
// returns at once. Call it first in TestMain.
func Helper() {
	if c := os.Getenv(env); c != "" {
		os.Exit(serve(c, os.Stdin, os.Stdout))
	}
}

// serve runs a speaker and obeys lines "announce PREFIX [NEXTHOP]", "withdraw PREFIX",
// "wait" (until established) and "list", answering "ok ..." or "err ...".
func serve(config string, in io.Reader, out io.Writer) int {
	var cfg bgp.Config
	if err := json.Unmarshal([]byte(config), &cfg); err != nil {
		fmt.Fprintln(out, "err", err)
		return 2
	}
	s, err := bgp.New(cfg)
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
		switch {
		case f[0] == "announce" && len(f) >= 2:
			var nh netip.Addr
			if len(f) > 2 {
				nh, err = netip.ParseAddr(f[2])
			}
			if err == nil {
				err = s.Announce(netip.MustParsePrefix(f[1]), nh)
			}
		case f[0] == "withdraw" && len(f) == 2:
			err = s.Withdraw(netip.MustParsePrefix(f[1]))
		case f[0] == "wait":
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			err = s.WaitEstablished(ctx)
			cancel()
		case f[0] == "list":
			res = fmt.Sprint(s.Announced())
		default:
			err = fmt.Errorf("bad command %q", sc.Text())
		}
		if err != nil {
			fmt.Fprintln(out, "err", err)
		} else {
			fmt.Fprintln(out, "ok", res)
		}
	}
	return 0
}

// Remote is a speaker running in a namespace; it implements bgp.Announcer.
type Remote struct {
	mu  sync.Mutex
	in  io.WriteCloser
	out *bufio.Scanner
}

// Start runs a speaker with cfg in ns until the test ends (or Close).
func Start(t testing.TB, ns *netlab.NS, cfg bgp.Config) *Remote {
	t.Helper()
	cfg.Logger = nil // the child logs to its stderr
	js, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cmd := ns.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env+"="+string(js))
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
	return &Remote{in: in, out: bufio.NewScanner(outp)}
}

// Do sends one command line and returns the answer after "ok".
func (r *Remote) Do(line string) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, err := fmt.Fprintln(r.in, line); err != nil {
		return "", err
	}
	if !r.out.Scan() {
		return "", fmt.Errorf("speaker ended on %q: %v", line, r.out.Err())
	}
	res := r.out.Text()
	if !strings.HasPrefix(res, "ok") {
		return "", fmt.Errorf("%s: %s", line, res)
	}
	return strings.TrimSpace(strings.TrimPrefix(res, "ok")), nil
}

// WaitEstablished waits (up to 20 s) until every session is established.
func (r *Remote) WaitEstablished() error { _, err := r.Do("wait"); return err }

// Announce implements bgp.Announcer.
func (r *Remote) Announce(p netip.Prefix, nh netip.Addr) error {
	line := "announce " + p.String()
	if nh.IsValid() {
		line += " " + nh.String()
	}
	_, err := r.Do(line)
	return err
}

// Withdraw implements bgp.Announcer.
func (r *Remote) Withdraw(p netip.Prefix) error { _, err := r.Do("withdraw " + p.String()); return err }

// Close ends the speaker (its peers drop its routes).
func (r *Remote) Close() error { return r.in.Close() }
