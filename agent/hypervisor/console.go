package hypervisor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"

	"github.com/digitalocean/go-libvirt"
	"github.com/digitalocean/go-libvirt/socket/dialers"
)

// Consoler is implemented by hypervisors that can attach to a running domain's serial
// console (the agent relays it to the dashboard's terminal). It is not part of [Hypervisor]:
// a hypervisor without consoles simply does not implement it.
type Consoler interface {
	// OpenConsole attaches to the first serial console of the running domain name: what the
	// guest prints is written to out until the stream ends, and what is written to the
	// returned stream is typed into the guest. It fails with ErrNotFound for a missing
	// domain and ErrNotRunning for one that does not run. A newer session on the same
	// domain takes the console over (libvirt's force flag): the older one ends.
	OpenConsole(ctx context.Context, name string, out io.Writer) (ConsoleStream, error)
}

// ConsoleStream is an open serial console.
type ConsoleStream interface {
	// Write types p into the guest.
	io.Writer
	// Close ends the session; it is safe to call more than once.
	Close() error
	// Done is closed when the stream has ended (Close, the domain stopped, the connection
	// dropped); Err then says why (nil after Close).
	Done() <-chan struct{}
	Err() error
}

// ErrNotRunning is returned by OpenConsole for a domain that does not run.
var ErrNotRunning = errors.New("the domain is not running")

var _ Consoler = (*Libvirt)(nil)

// OpenConsole attaches to the domain's serial console; see [Consoler].
//
// Every session has its own connection to libvirtd, so that ending it (closing the
// connection) ends libvirt's console stream and releases the console lock at once, and a
// slow reader never holds up the hypervisor's shared connection.
//
// Output comes from libvirt's console stream (DomainOpenConsole). go-libvirt binds that
// procedure as receive-only (it never sends stream data to libvirtd), so keystrokes are
// written to the console's pseudo-terminal, whose path libvirt reports in the live domain
// XML: the same device libvirt's stream reads from. The agent runs on the host as root,
// where that device is.
func (h *Libvirt) OpenConsole(ctx context.Context, name string, out io.Writer) (ConsoleStream, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c := libvirt.NewWithDialer(dialers.NewLocal(
		dialers.WithSocket(h.cfg.Socket), dialers.WithLocalTimeout(h.cfg.DialTimeout)))
	if err := c.ConnectToURI(libvirt.ConnectURI(h.cfg.URI)); err != nil {
		return nil, fmt.Errorf("console of %s: connect to libvirtd: %w", name, err)
	}
	fail := func(err error) (ConsoleStream, error) {
		_ = c.Disconnect()
		return nil, err
	}
	d, err := lookup(c, name)
	if err != nil {
		return fail(err)
	}
	st, err := stateOf(c, d)
	if err != nil {
		return fail(wrap("console", name, err))
	}
	if st != StateRunning {
		return fail(fmt.Errorf("console of %s (%s): %w", name, st, ErrNotRunning))
	}
	live, err := liveDomain(c, d)
	if err != nil {
		return fail(err)
	}
	var pty string
	if live.Devices != nil {
		for _, s := range live.Devices.Serials {
			if s.Source != nil && s.Source.Pty != nil && s.Source.Pty.Path != "" {
				pty = s.Source.Pty.Path
				break
			}
		}
	}
	if pty == "" {
		return fail(fmt.Errorf("console of %s: the domain has no serial console on a pseudo-terminal: %w", name, ErrUnsupported))
	}
	in, err := os.OpenFile(pty, os.O_WRONLY|syscall.O_NOCTTY, 0)
	if err != nil {
		return fail(fmt.Errorf("console of %s: open %s: %w", name, pty, err))
	}
	s := &libvirtConsole{conn: c, in: in, done: make(chan struct{})}
	go func() {
		err := c.DomainOpenConsole(d, libvirt.OptString{}, out, uint32(libvirt.DomainConsoleForce))
		s.finish(err)
	}()
	return s, nil
}

// libvirtConsole is a session of [Libvirt.OpenConsole].
type libvirtConsole struct {
	conn *libvirt.Libvirt
	in   *os.File

	once   sync.Once
	mu     sync.Mutex
	closed bool
	err    error
	done   chan struct{}
}

func (s *libvirtConsole) Write(p []byte) (int, error) { return s.in.Write(p) }

func (s *libvirtConsole) Done() <-chan struct{} { return s.done }

func (s *libvirtConsole) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// finish records why the stream ended (nothing when it was closed on purpose).
func (s *libvirtConsole) finish(err error) {
	s.mu.Lock()
	if !s.closed && err != nil {
		s.err = err
	}
	s.mu.Unlock()
	s.once.Do(func() {
		_ = s.in.Close()
		_ = s.conn.Disconnect()
		close(s.done)
	})
}

func (s *libvirtConsole) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	// Disconnecting ends DomainOpenConsole, whose goroutine then finishes the session.
	_ = s.conn.Disconnect()
	<-s.done
	return nil
}
