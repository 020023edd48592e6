package guest

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/domain/audit"
	"github.com/virtflow/virtflow/domain/guest/credential"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/assignment"
	"github.com/virtflow/virtflow/ent/virtualmachine"
	"github.com/virtflow/virtflow/store/dbtx"
	"github.com/virtflow/virtflow/store/rowlock"
)

// Defaults of Config.
const (
	// DefaultDeadline is how long a guest may stay BOOTING before it is UNREACHABLE.
	DefaultDeadline = 10 * time.Minute
	// DefaultCredentialTTL is how long a credential works after its drive was built.
	DefaultCredentialTTL = 24 * time.Hour
	// DefaultInterval is how often Run looks for overdue guests.
	DefaultInterval = 30 * time.Second
)

// Limits of a guest's call.
const (
	// MaxAddresses is the most addresses one report may list.
	MaxAddresses = 64
	// MaxHostname is the longest host name (a fully qualified one) a report may give.
	MaxHostname = 255
	// MaxFailuresPerSource is how many calls with a bad credential one source address (an
	// IPv4 address or an IPv6 /64) may make per FailureWindow.
	MaxFailuresPerSource = 20
	// FailureWindow is how long failed calls are counted.
	FailureWindow = 15 * time.Minute
)

// CredentialPrefix starts every guest credential, so that one found in a log can be told
// for what it is.
const CredentialPrefix = credential.Prefix

// CodeRateLimited is the error code of a call refused because its source failed too often.
const CodeRateLimited apierr.Code = "RATE_LIMITED"

// ErrBadCredential is what Ready fails with (wrapped in an UNAUTHENTICATED error) when the
// credential is unknown, rotated or expired.
var ErrBadCredential = errors.New("unknown or expired guest credential")

// Config tunes a Service. Zero values take the defaults.
type Config struct {
	// Deadline is how long a guest may stay BOOTING (DefaultDeadline).
	Deadline time.Duration
	// CredentialTTL is how long a registered credential works (DefaultCredentialTTL).
	CredentialTTL time.Duration
	// Interval is how often Run looks for overdue guests (DefaultInterval).
	Interval time.Duration
	// Now is the clock (time.Now).
	Now func() time.Time
	// Redis counts failed calls per source address; nil counts nothing (no rate limit).
	Redis *redis.Client
	// RateLimitPrefix starts the limiter's keys ("virtflow:guest:").
	RateLimitPrefix string
	// OnBootstrap, when set, receives the report of a guest that says how its bootstrap
	// went (Report.Step set), after the VM was marked READY: package kubecluster records it
	// on the VM's cluster. internal/app wires it.
	OnBootstrap func(ctx context.Context, c *ent.Client, vm int, r Report) error
}

// Service records guests' reports. Safe for concurrent use.
type Service struct {
	client *ent.Client
	cfg    Config
}

// New returns a Service over client.
func New(client *ent.Client, cfg Config) *Service {
	if cfg.Deadline <= 0 {
		cfg.Deadline = DefaultDeadline
	}
	if cfg.CredentialTTL <= 0 {
		cfg.CredentialTTL = DefaultCredentialTTL
	}
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.RateLimitPrefix == "" {
		cfg.RateLimitPrefix = "virtflow:guest:"
	}
	return &Service{client: client, cfg: cfg}
}

// Deadline is the configured deadline of a BOOTING guest.
func (s *Service) Deadline() time.Duration { return s.cfg.Deadline }

// NewCredential returns a fresh random credential and its hash (what RegisterCredential
// takes). It is credential.New, kept here for the server's callers.
func NewCredential() (plain, hash string, err error) { return credential.New() }

// HashCredential is the SHA-256, in hex, of a credential: what the database keeps
// (credential.Hash).
func HashCredential(plain string) string { return credential.Hash(plain) }

var hashRe = regexp.MustCompile(`^[0-9a-f]{64}$`)

// system is ctx acting as the guest actor.
func system(ctx context.Context) context.Context { return audit.Guest.Context(ctx) }

// RegisterCredential records, as the viewer of ctx (the agent of the assignment's node), the
// hash of the credential the agent wrote onto the config drive of the VM of assignment id at
// generation. The VM's earlier credential stops working and its guestState starts again at
// UNKNOWN, with no host name or addresses: the drive was rebuilt, the guest has not spoken
// since. Returns the assignment.
func (s *Service) RegisterCredential(ctx context.Context, c *ent.Client, id int, generation int64, hash string) (*ent.Assignment, error) {
	if !hashRe.MatchString(hash) {
		return nil, apierr.Validation("credentialHash", "must be a SHA-256 hash in 64 lower-case hex digits")
	}
	var out *ent.Assignment
	_, err := dbtx.Run(ctx, c, func(c *ent.Client) error {
		// As the viewer: an agent reads its own node's assignments only.
		a, err := c.Assignment.Query().Where(assignment.ID(id)).WithNode().Only(ctx)
		if ent.IsNotFound(err) {
			return apierr.NotFound("assignment %d not found", id)
		}
		if err != nil {
			return err
		}
		if v := authz.FromContext(ctx); v == nil || (!v.Can("Assignment", authz.ActWrite) &&
			!slices.Contains(v.Domains("node", "Assignment", authz.ActWrite), a.Edges.Node.ID)) {
			return apierr.Forbidden("only the node's agent may register a guest credential")
		}
		if a.Generation != generation {
			return apierr.Validation("generation", "assignment %d is at generation %d, not %d", a.ID, a.Generation, generation)
		}
		sys := system(ctx)
		vm, err := c.Assignment.QueryVirtualMachine(a).WithNode().Only(sys)
		if ent.IsNotFound(err) {
			return apierr.NotFound("assignment %d has no VM", id)
		}
		if err != nil {
			return err
		}
		if vm.Edges.Node == nil || vm.Edges.Node.ID != a.Edges.Node.ID {
			return apierr.Validation("assignmentID", "the VM of assignment %d no longer runs on its node", id)
		}
		now := s.cfg.Now()
		u := c.VirtualMachine.UpdateOneID(vm.ID).SetGuestCredentialHash(hash).SetGuestCredentialExpiresAt(now.Add(s.cfg.CredentialTTL))
		if vm.GuestState != virtualmachine.GuestStateUnknown || vm.GuestHostname != "" || len(vm.GuestAddresses) > 0 || vm.GuestReadyAt != nil {
			u.SetGuestState(virtualmachine.GuestStateUnknown).SetGuestStateChangedAt(now).
				ClearGuestReadyAt().ClearGuestHostname().ClearGuestAddresses()
		}
		// The mutation's own audit row (the agent's, with its request) records the call; a
		// second row here would count one change twice.
		if err := u.Exec(sys); err != nil {
			return fmt.Errorf("register guest credential of VM %d: %w", vm.ID, err)
		}
		out, err = c.Assignment.Get(ctx, a.ID)
		return err
	})
	return out, err
}

// Report is what a guest says about itself.
type Report struct {
	// InstanceID is the instance-id the guest read from its config drive (vm-<id>); when
	// given, it must be the VM's.
	InstanceID string
	// Hostname is the guest's host name (or its FQDN).
	Hostname string
	// Addresses are the guest's addresses, bare or in CIDR notation.
	Addresses []string
	// SourceIP is where the call came from (for the rate limit and the audit log).
	SourceIP string
	// Step, Result, Reason and Mesh are a bootstrap script's outcome (package kubecluster):
	// the step it reached (the failing one, or "ready"), ok or failed, why it failed (the
	// tail of the step's output), and ok or failed for the service mesh it installed.
	// Handed to Config.OnBootstrap when Step is set.
	Step, Result, Reason, Mesh string
}

var hostRe = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$`)

// normalize validates r and returns its host name and its addresses, bare, sorted and
// without repeats (link-local and loopback ones dropped: they say nothing about the VM).
func normalize(r Report) (string, []string, error) {
	host := strings.TrimSuffix(strings.TrimSpace(r.Hostname), ".")
	if len(host) > MaxHostname || (host != "" && !hostRe.MatchString(host)) {
		return "", nil, apierr.Validation("hostname", "must be a host name of at most %d characters", MaxHostname)
	}
	if len(r.Addresses) > MaxAddresses {
		return "", nil, apierr.Validation("addresses", "at most %d addresses", MaxAddresses)
	}
	addrs := []string{}
	for _, a := range r.Addresses {
		a = strings.TrimSpace(a)
		if a == "" {
			continue
		}
		ip, err := netip.ParseAddr(a)
		if err != nil {
			p, perr := netip.ParsePrefix(a)
			if perr != nil {
				return "", nil, apierr.Validation("addresses", "%q is not an IP address", truncate(a, 64))
			}
			ip = p.Addr()
		}
		ip = ip.WithZone("").Unmap()
		if ip.IsLoopback() || ip.IsLinkLocalUnicast() || ip.IsUnspecified() || ip.IsMulticast() {
			continue
		}
		addrs = append(addrs, ip.String())
	}
	slices.Sort(addrs)
	return host, slices.Compact(addrs), nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
}

// Ready records the guest's own word that it is up: credential (the plaintext from its
// config drive) names the VM; the VM becomes READY with r's host name and addresses. A
// repeated call changes nothing but what changed (guestReadyAt stays the first call's). An
// unknown, rotated or expired credential is UNAUTHENTICATED and counts against r.SourceIP;
// a source with too many failures is RATE_LIMITED before its credential is looked at. A
// credential with another VM's instance-id is FORBIDDEN.
func (s *Service) Ready(ctx context.Context, credential string, r Report) (*ent.VirtualMachine, error) {
	if err := s.allow(ctx, r.SourceIP); err != nil {
		return nil, err
	}
	ctx = system(ctx)
	vm, err := s.byCredential(ctx, credential)
	if err != nil {
		if errors.Is(err, ErrBadCredential) {
			s.fail(ctx, r.SourceIP)
			return nil, apierr.Unauthenticated("%v", ErrBadCredential)
		}
		return nil, err
	}
	if r.InstanceID != "" && r.InstanceID != InstanceID(vm.ID) {
		s.fail(ctx, r.SourceIP)
		return nil, apierr.Forbidden("this credential is not instance %s's", truncate(r.InstanceID, 64))
	}
	host, addrs, err := normalize(r)
	if err != nil {
		return nil, err
	}
	if len(r.Step) > 64 || len(r.Result) > 16 || len(r.Mesh) > 16 || len(r.Reason) > 4096 {
		return nil, apierr.Validation("step", "step, result and mesh are short words; reason at most 4 KiB")
	}
	out, err := s.markReady(ctx, s.client, vm.ID, host, addrs, "reportGuestReady", r.SourceIP, credential)
	if err != nil || r.Step == "" || s.cfg.OnBootstrap == nil {
		return out, err
	}
	return out, s.cfg.OnBootstrap(ctx, s.client, vm.ID, r)
}

// InstanceID is the instance-id of VM id on its config drive.
func InstanceID(id int) string { return fmt.Sprintf("vm-%d", id) }

// byCredential returns the VM whose credential is plain, or ErrBadCredential.
func (s *Service) byCredential(ctx context.Context, plain string) (*ent.VirtualMachine, error) {
	if !strings.HasPrefix(plain, CredentialPrefix) || len(plain) > 128 {
		return nil, ErrBadCredential
	}
	hash := HashCredential(plain)
	vm, err := s.client.VirtualMachine.Query().Where(virtualmachine.GuestCredentialHash(hash)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, ErrBadCredential
	}
	if err != nil {
		return nil, err
	}
	if subtle.ConstantTimeCompare([]byte(vm.GuestCredentialHash), []byte(hash)) != 1 ||
		vm.GuestCredentialExpiresAt == nil || !s.cfg.Now().Before(*vm.GuestCredentialExpiresAt) {
		return nil, ErrBadCredential
	}
	return vm, nil
}

// ReadyFromAgent records, in c's transaction, that the QEMU guest agent inside VM id
// answered its node's agent, with the host name and addresses it gave: the guest's own
// word too. The caller (provision.ApplyReport) has checked that the report comes from the
// VM's node.
func (s *Service) ReadyFromAgent(ctx context.Context, c *ent.Client, id int, r Report) error {
	host, addrs, err := normalize(r)
	if err != nil {
		return err
	}
	_, err = s.markReady(system(ctx), c, id, host, addrs, "reportGuestAgentReady", "", "")
	return err
}

// markReady makes VM id READY with host and addrs in c's transaction (one of its own when c
// is not a transaction's), audited as action. With credential set, the VM must still hold
// it when its row is locked: a drive rebuilt meanwhile wins.
func (s *Service) markReady(ctx context.Context, c *ent.Client, id int, host string, addrs []string, action, sourceIP, credential string) (*ent.VirtualMachine, error) {
	var out *ent.VirtualMachine
	own, err := dbtx.Run(ctx, c, func(c *ent.Client) error {
		vm, err := c.VirtualMachine.Query().Where(virtualmachine.ID(id)).Modify(rowlock.ForUpdate).Only(ctx)
		if err != nil {
			return fmt.Errorf("read VM %d: %w", id, err)
		}
		if credential != "" && vm.GuestCredentialHash != HashCredential(credential) {
			return apierr.Unauthenticated("%v", ErrBadCredential)
		}
		if vm.Status == virtualmachine.StatusDeleting || vm.Status == virtualmachine.StatusDeleted {
			out = vm
			return nil
		}
		if host == "" {
			host = vm.GuestHostname
		}
		if vm.GuestState == virtualmachine.GuestStateReady && vm.GuestHostname == host && slices.Equal(vm.GuestAddresses, addrs) {
			out = vm // a repeated call: nothing new
			return nil
		}
		now := s.cfg.Now()
		u := c.VirtualMachine.UpdateOneID(id).SetGuestHostname(host).SetGuestAddresses(addrs)
		if vm.GuestState != virtualmachine.GuestStateReady {
			u.SetGuestState(virtualmachine.GuestStateReady).SetGuestStateChangedAt(now).SetGuestReadyAt(now)
		}
		if err := u.Exec(ctx); err != nil {
			return fmt.Errorf("mark VM %d ready: %w", id, err)
		}
		if err := auditVMFrom(ctx, c, audit.Guest, action, vm, sourceIP); err != nil {
			return err
		}
		out, err = c.VirtualMachine.Get(ctx, id)
		return err
	})
	if err == nil && own && out != nil {
		out = out.Unwrap()
	}
	return out, err
}

// MarkRunning moves the guest state of vm (read in c's transaction) for its node's report
// that its domain runs (running true) or does not (false), on the update u of the same VM
// the caller writes: BOOTING when the domain started (from UNKNOWN, for a VM whose drive
// carries a credential: a guest never told how to report is not waited for), UNKNOWN with
// no host name or addresses when it stopped. It reports whether it changed anything.
func (s *Service) MarkRunning(vm *ent.VirtualMachine, u *ent.VirtualMachineUpdateOne, running bool) bool {
	now := s.cfg.Now()
	switch {
	case running && vm.GuestState == virtualmachine.GuestStateUnknown && vm.GuestCredentialHash != "":
		// Only a guest told how to report (a drive with a credential) is waited for.
		u.SetGuestState(virtualmachine.GuestStateBooting).SetGuestStateChangedAt(now)
		return true
	case !running && (vm.GuestState != virtualmachine.GuestStateUnknown || vm.GuestReadyAt != nil || len(vm.GuestAddresses) > 0):
		u.SetGuestState(virtualmachine.GuestStateUnknown).SetGuestStateChangedAt(now).
			ClearGuestReadyAt().ClearGuestHostname().ClearGuestAddresses()
		return true
	}
	return false
}

// auditVM writes the audit row of a change to VM before.ID, as the viewer of ctx or, with
// actor set, as that system actor.
func auditVM(ctx context.Context, c *ent.Client, actor audit.SystemActor, action string, before *ent.VirtualMachine) error {
	return auditVMFrom(ctx, c, actor, action, before, "")
}

func auditVMFrom(ctx context.Context, c *ent.Client, actor audit.SystemActor, action string, before *ent.VirtualMachine, sourceIP string) error {
	after, err := c.VirtualMachine.Get(system(ctx), before.ID)
	if err != nil {
		return fmt.Errorf("read VM %d back: %w", before.ID, err)
	}
	return audit.Write(ctx, c, audit.Entry{System: actor, Action: action, Subject: after, Before: before, After: after, SourceIP: sourceIP})
}
