package hypervisor

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sync"
)

var _ Consoler = (*Simulated)(nil)

// OpenConsole attaches to a simulated domain's console; see [Consoler]. A simulated guest
// has no operating system: its console prints a banner and a login prompt and echoes what
// is typed (a carriage return as a new line and a new prompt), which is what the demo's
// console page shows.
func (s *Simulated) OpenConsole(ctx context.Context, name string, out io.Writer) (ConsoleStream, error) {
	st, err := s.State(ctx, name)
	if err != nil {
		return nil, err
	}
	if st != StateRunning {
		return nil, fmt.Errorf("console of %s (%s): %w", name, st, ErrNotRunning)
	}
	c := &simConsole{out: out, prompt: []byte(name + " login: "), done: make(chan struct{})}
	if _, err := fmt.Fprintf(out, "VirtFlow simulated console of %s (no guest OS: input is echoed)\r\n\r\n%s", name, c.prompt); err != nil {
		return nil, fmt.Errorf("console of %s: %w", name, err)
	}
	return c, nil
}

// simConsole echoes its input like a terminal's line discipline.
type simConsole struct {
	out    io.Writer
	prompt []byte

	mu     sync.Mutex
	closed bool
	err    error
	done   chan struct{}
}

func (c *simConsole) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return 0, io.ErrClosedPipe
	}
	echo := bytes.ReplaceAll(p, []byte("\r"), append([]byte("\r\n"), c.prompt...))
	if _, err := c.out.Write(echo); err != nil {
		c.err = err
		c.closeLocked()
		return 0, err
	}
	return len(p), nil
}

func (c *simConsole) closeLocked() {
	if !c.closed {
		c.closed = true
		close(c.done)
	}
}

func (c *simConsole) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closeLocked()
	return nil
}

func (c *simConsole) Done() <-chan struct{} { return c.done }

func (c *simConsole) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}
