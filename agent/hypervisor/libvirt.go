package hypervisor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/digitalocean/go-libvirt"
	"github.com/digitalocean/go-libvirt/socket/dialers"
)

// Defaults of [LibvirtConfig].
const (
	// DefaultSocket is libvirtd's read-write UNIX socket.
	DefaultSocket = "/run/libvirt/libvirt-sock"
	// DefaultURI is the system QEMU/KVM driver; tests use "test:///default".
	DefaultURI = "qemu:///system"
	// DefaultDialTimeout bounds connecting to the socket.
	DefaultDialTimeout = 5 * time.Second
	// DefaultPollInterval is how often Shutdown checks whether the domain is off yet.
	DefaultPollInterval = 250 * time.Millisecond
)

// LibvirtConfig configures a [Libvirt] hypervisor. The zero value connects to qemu:///system
// through the default socket.
type LibvirtConfig struct {
	// Socket is the path of libvirtd's UNIX socket; DefaultSocket when empty.
	Socket string
	// URI is the libvirt driver to open through the daemon; DefaultURI when empty.
	URI string
	// DomainType is the type of the domains defined: DomainTypeTest, DomainTypeKVM or
	// DomainTypeQEMU, or DomainTypeAuto (also when empty), which chooses from the URI: test
	// for test:///…, and for qemu:///… kvm when KVMProbe says KVM really runs a guest, else
	// qemu (see ChooseDomainType).
	DomainType string
	// KVMProbe is auto's probe for qemu:///… URIs; QEMUProbe{} when nil.
	KVMProbe KVMProber
	// DialTimeout bounds connecting to the socket; DefaultDialTimeout when zero.
	DialTimeout time.Duration
	// PollInterval is how often Shutdown checks whether the domain is off yet;
	// DefaultPollInterval when zero.
	PollInterval time.Duration
}

// Libvirt is the [Hypervisor] of a host running libvirtd, reached over its UNIX socket with
// go-libvirt. It keeps one connection, opened by NewLibvirt; when the connection drops (libvirtd
// restarted, socket closed) the next operation reconnects, and an operation that lost its
// connection midway is retried once on the new one, which is safe because every operation is
// idempotent.
//
// go-libvirt calls cannot be interrupted: ctx is checked before each call to libvirtd and while
// Shutdown waits, not during a call.
type Libvirt struct {
	cfg              LibvirtConfig
	domainType       string
	domainTypeReason string

	mu     sync.Mutex
	conn   *libvirt.Libvirt // nil before the first connection and after a drop
	closed bool
}

var _ Hypervisor = (*Libvirt)(nil)

// NewLibvirt connects to libvirtd as cfg says and returns the hypervisor, or an error when the
// daemon cannot be reached or refuses the URI.
func NewLibvirt(ctx context.Context, cfg LibvirtConfig) (*Libvirt, error) {
	if cfg.Socket == "" {
		cfg.Socket = DefaultSocket
	}
	if cfg.URI == "" {
		cfg.URI = DefaultURI
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = DefaultDialTimeout
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = DefaultPollInterval
	}
	if cfg.KVMProbe == nil {
		cfg.KVMProbe = QEMUProbe{}
	}
	dt, reason, err := ChooseDomainType(ctx, cfg.URI, cfg.DomainType, cfg.KVMProbe)
	if err != nil {
		return nil, err
	}
	h := &Libvirt{cfg: cfg, domainType: dt, domainTypeReason: reason}
	if _, err := h.client(ctx); err != nil {
		return nil, err
	}
	return h, nil
}

// DomainType returns the type of the domains this hypervisor defines.
func (h *Libvirt) DomainType() string { return h.domainType }

// DomainTypeReason says why DomainType was chosen (the probe's result under auto).
func (h *Libvirt) DomainTypeReason() string { return h.domainTypeReason }

// client returns the open connection, connecting first when there is none or it dropped.
func (h *Libvirt) client(ctx context.Context) (*libvirt.Libvirt, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, ErrClosed
	}
	if h.conn != nil && h.conn.IsConnected() {
		return h.conn, nil
	}
	h.conn = nil
	c := libvirt.NewWithDialer(dialers.NewLocal(
		dialers.WithSocket(h.cfg.Socket), dialers.WithLocalTimeout(h.cfg.DialTimeout)))
	if err := c.ConnectToURI(libvirt.ConnectURI(h.cfg.URI)); err != nil {
		return nil, fmt.Errorf("connect to libvirtd at %s (%s): %w", h.cfg.Socket, h.cfg.URI, err)
	}
	h.conn = c
	return c, nil
}

// drop forgets c after it failed at the transport level, so that the next call reconnects.
func (h *Libvirt) drop(c *libvirt.Libvirt) {
	h.mu.Lock()
	if h.conn == c {
		h.conn = nil
	}
	h.mu.Unlock()
	_ = c.Disconnect() // best effort: the socket is usually gone already
}

// do runs fn on a connection. When fn fails because the connection was lost (not because
// libvirtd answered with an error), it reconnects and runs fn once more: every operation is
// idempotent, so a retry after a lost answer is safe.
func (h *Libvirt) do(ctx context.Context, fn func(c *libvirt.Libvirt) error) error {
	for attempt := 0; ; attempt++ {
		c, err := h.client(ctx)
		if err != nil {
			return err
		}
		err = fn(c)
		if err == nil || attempt > 0 || !connectionLost(c, err) {
			return err
		}
		h.drop(c)
	}
}

// Close disconnects from libvirtd; domains keep running. It is safe to call more than once.
func (h *Libvirt) Close() error {
	h.mu.Lock()
	c := h.conn
	h.conn, h.closed = nil, true
	h.mu.Unlock()
	if c == nil || !c.IsConnected() {
		return nil
	}
	if err := c.Disconnect(); err != nil && !transportError(err) {
		return fmt.Errorf("disconnect from libvirtd: %w", err)
	}
	return nil
}

// connectionLost reports whether fn's failure err on c came from losing the connection
// rather than from libvirtd answering with an error (or from VirtFlow's own checks).
func connectionLost(c *libvirt.Libvirt, err error) bool {
	var lerr libvirt.Error
	if errors.As(err, &lerr) || errors.Is(err, ErrNotFound) || errors.Is(err, ErrConflict) ||
		errors.Is(err, ErrInvalidSpec) || errors.Is(err, ErrClosed) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	return transportError(err) || !c.IsConnected()
}

// transportError reports whether err is one go-libvirt returns when the socket is closed or
// broken.
func transportError(err error) bool {
	var opErr *net.OpError
	var errno syscall.Errno
	return errors.Is(err, libvirt.ErrInterrupted) || errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.ErrClosedPipe) ||
		errors.Is(err, net.ErrClosed) || errors.As(err, &opErr) || errors.As(err, &errno)
}
