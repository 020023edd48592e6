package lbnet

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ErrProxyDown is returned by Stat while no HAProxy runs.
var ErrProxyDown = errors.New("haproxy is not running")

// Proxy runs one HAProxy in master-worker mode with a configuration in Dir and reloads it
// (SIGUSR2 to the master: the old workers finish their connections) when the configuration
// changes.
type Proxy struct {
	// Dir holds haproxy.cfg and the stats socket.
	Dir string
	// Command builds the command that runs a program where the proxy must run: exec.Command
	// on a node; `ip netns exec <ns> …` in tests. Nil means exec.Command.
	Command func(name string, args ...string) *exec.Cmd
	// Binary is the haproxy executable; empty means "haproxy".
	Binary string
	// Output receives HAProxy's messages (nil: discarded).
	Output io.Writer

	mu      sync.Mutex
	cmd     *exec.Cmd
	done    chan struct{} // closed when cmd exited
	applied string
}

func (p *Proxy) command(args ...string) *exec.Cmd {
	bin := p.Binary
	if bin == "" {
		bin = "haproxy"
	}
	if p.Command != nil {
		return p.Command(bin, args...)
	}
	return exec.Command(bin, args...)
}

// ConfigPath is where the configuration is written.
func (p *Proxy) ConfigPath() string { return filepath.Join(p.Dir, "haproxy.cfg") }

// StatsSocket is the path of the stats socket the configuration must declare.
func (p *Proxy) StatsSocket() string { return filepath.Join(p.Dir, "stats.sock") }

// Apply makes the running HAProxy serve cfg: it checks cfg with `haproxy -c` (a bad
// configuration never replaces a good one), writes it, and starts HAProxy or reloads it.
// Applying the configuration already running does nothing.
func (p *Proxy) Apply(cfg string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if cfg == p.applied && p.runningLocked() {
		return nil
	}
	if err := os.MkdirAll(p.Dir, 0o700); err != nil {
		return fmt.Errorf("haproxy dir: %w", err)
	}
	next := p.ConfigPath() + ".next"
	if err := os.WriteFile(next, []byte(cfg), 0o600); err != nil {
		return fmt.Errorf("write haproxy config: %w", err)
	}
	if out, err := p.command("-c", "-q", "-f", next).CombinedOutput(); err != nil {
		return fmt.Errorf("haproxy config rejected: %v: %s", err, bytes.TrimSpace(out))
	}
	if err := os.Rename(next, p.ConfigPath()); err != nil {
		return fmt.Errorf("install haproxy config: %w", err)
	}
	if p.runningLocked() {
		if err := p.cmd.Process.Signal(syscall.SIGUSR2); err != nil {
			return fmt.Errorf("reload haproxy: %w", err)
		}
		p.applied = cfg
		return nil
	}
	cmd := p.command("-W", "-db", "-f", p.ConfigPath())
	cmd.Stdout, cmd.Stderr = p.Output, p.Output
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start haproxy: %w", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	p.cmd, p.done, p.applied = cmd, done, cfg
	return nil
}

func (p *Proxy) runningLocked() bool {
	if p.cmd == nil {
		return false
	}
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// Running reports whether HAProxy runs.
func (p *Proxy) Running() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.runningLocked()
}

// Done is closed when the running HAProxy exits (nil before the first start).
func (p *Proxy) Done() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.done
}

// Stop ends HAProxy and waits for it.
func (p *Proxy) Stop() {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.cmd, p.applied = nil, ""
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
}

// ServerStat is one server row of HAProxy's `show stat`: a member in the backend of one
// listener.
type ServerStat struct {
	Backend     string
	Server      string
	Status      string // UP, DOWN, "UP 1/2", MAINT, "no check", …
	CheckStatus string // L4OK, L4CON, L7STS, INI, … ("" before the first check)
	LastCheck   string // HAProxy's description of the last check
}

// Stat reads the servers' state from the stats socket.
func (p *Proxy) Stat(ctx context.Context) ([]ServerStat, error) {
	if !p.Running() {
		return nil, ErrProxyDown
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", p.StatsSocket())
	if err != nil {
		return nil, fmt.Errorf("haproxy stats socket: %w", err)
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	} else {
		_ = conn.SetDeadline(time.Now().Add(2 * time.Second))
	}
	if _, err := io.WriteString(conn, "show stat\n"); err != nil {
		return nil, fmt.Errorf("haproxy show stat: %w", err)
	}
	return parseStat(bufio.NewReader(conn))
}

// parseStat reads the CSV of `show stat` (a header line starting with "# ").
func parseStat(r io.Reader) ([]ServerStat, error) {
	raw, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read haproxy stats: %w", err)
	}
	text := strings.TrimPrefix(strings.TrimLeft(string(raw), "\n"), "# ")
	cr := csv.NewReader(strings.NewReader(text))
	cr.FieldsPerRecord = -1
	rows, err := cr.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("parse haproxy stats: %w", err)
	}
	if len(rows) == 0 {
		return nil, errors.New("haproxy stats: empty answer")
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	get := func(row []string, name string) string {
		if i, ok := col[name]; ok && i < len(row) {
			return row[i]
		}
		return ""
	}
	var out []ServerStat
	for _, row := range rows[1:] {
		sv := get(row, "svname")
		if sv == "FRONTEND" || sv == "BACKEND" || sv == "" {
			continue
		}
		out = append(out, ServerStat{Backend: get(row, "pxname"), Server: sv, Status: get(row, "status"),
			CheckStatus: get(row, "check_status"), LastCheck: get(row, "last_chk")})
	}
	return out, nil
}
