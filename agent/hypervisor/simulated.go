package hypervisor

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"
)

// OperationDelays are the simulated durations of each operation; zero is instant.
type OperationDelays struct {
	Define, Start, Shutdown, Stop, Reboot, Undefine, State, List time.Duration
}

// SimulatedConfig configures a [Simulated] hypervisor.
type SimulatedConfig struct {
	// Capacity is what the simulated host reports; 64 vCPUs and 256 GiB when zero.
	Capacity Capacity
	// PoolCapacityBytes is the size every simulated storage pool reports (PoolInfo);
	// DefaultSimulatedPoolCapacity when zero.
	PoolCapacityBytes int64
	// Delays are the simulated durations of the operations.
	Delays OperationDelays
	// FailureRate is the probability (0 to 1) that an operation changing a domain (Define,
	// Start, Shutdown, Stop, Reboot, Undefine) fails with ErrInjected after its delay, before
	// changing anything, so that a retry can succeed. Reads never fail.
	FailureRate float64
	// Seed makes the injected failures reproducible: the same seed and the same sequence of
	// calls fail the same calls.
	Seed uint64
	// Sleep waits d or until ctx is done; a test passes a fake clock here. Nil uses a timer.
	Sleep func(ctx context.Context, d time.Duration) error
	// Shared is storage this host mounts with others (a region's backup target); nil: none.
	Shared *SharedStorage
}

// DefaultSimulatedPoolCapacity is the size of a simulated storage pool: 2 TiB.
const DefaultSimulatedPoolCapacity = 2 << 40

// DomainType returns DomainTypeSimulated: what a simulated node reports as its domain type.
func (s *Simulated) DomainType() string { return DomainTypeSimulated }

// Simulated is an in-memory [Hypervisor] for --demo, development and benchmarks of a
// simulated fleet: domains exist only in the process, and operations take the configured
// delays and fail at the configured rate. It follows the same contract as [Libvirt],
// idempotency and errors included, so agent code does not know which one it drives.
type Simulated struct {
	cfg SimulatedConfig

	mu      sync.Mutex
	rng     *rand.Rand
	domains map[string]*simDomain
	storage simStorage
	closed  bool
}

// simDomain is one simulated domain.
type simDomain struct {
	spec  DomainSpec // normalized
	state DomainState
	live  []Disk     // the running instance's disks: the definition's at its start, then hot-plugged
	guest *GuestInfo // what its guest agent answers; nil: none
}

var _ Hypervisor = (*Simulated)(nil)

// NewSimulated returns an empty simulated host.
func NewSimulated(cfg SimulatedConfig) (*Simulated, error) {
	if cfg.FailureRate < 0 || cfg.FailureRate > 1 {
		return nil, fmt.Errorf("simulated hypervisor: failure rate %v: want 0 to 1", cfg.FailureRate)
	}
	if cfg.Capacity.VCPUs == 0 && cfg.Capacity.MemoryMiB == 0 {
		cfg.Capacity = Capacity{VCPUs: 64, MemoryMiB: 256 * 1024}
	}
	if cfg.PoolCapacityBytes <= 0 {
		cfg.PoolCapacityBytes = DefaultSimulatedPoolCapacity
	}
	if cfg.Sleep == nil {
		cfg.Sleep = sleep
	}
	return &Simulated{
		cfg:     cfg,
		rng:     rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x5eed_f1ee7)),
		domains: map[string]*simDomain{},
	}, nil
}

// sleep waits d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// begin runs the common part of an operation: the simulated delay, then, for an operation
// that changes a domain, the injected failure. It returns with s.mu held when err is nil.
func (s *Simulated) begin(ctx context.Context, op, name string, delay time.Duration, mutates bool) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	if err := s.cfg.Sleep(ctx, delay); err != nil {
		return fmt.Errorf("%s domain %s: %w", op, name, err)
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	if mutates && s.cfg.FailureRate > 0 && s.rng.Float64() < s.cfg.FailureRate {
		s.mu.Unlock()
		return fmt.Errorf("%s domain %s: %w", op, name, ErrInjected)
	}
	return nil
}

// checkOpen fails after Close.
func (s *Simulated) checkOpen() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	return nil
}

// get returns the named domain; s.mu must be held.
func (s *Simulated) get(name string) (*simDomain, error) {
	d, ok := s.domains[name]
	if !ok {
		return nil, &NotFoundError{Name: name}
	}
	return d, nil
}

// Define creates or updates a domain; see [Hypervisor.Define].
func (s *Simulated) Define(ctx context.Context, spec DomainSpec) error {
	n, err := spec.normalize()
	if err != nil {
		return err
	}
	name := n.Name()
	if err := s.begin(ctx, "define", name, s.cfg.Delays.Define, true); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if d, ok := s.domains[name]; ok {
		if d.spec.UUID != n.UUID {
			return fmt.Errorf("define domain %s: %w: it exists with UUID %s, the spec has %s", name, ErrConflict, d.spec.UUID, n.UUID)
		}
		d.spec = n // a running domain keeps running, as with libvirt
		return nil
	}
	for other, d := range s.domains {
		if d.spec.UUID == n.UUID {
			return fmt.Errorf("define domain %s: %w: UUID %s belongs to domain %s", name, ErrConflict, n.UUID, other)
		}
	}
	s.domains[name] = &simDomain{spec: n, state: StateShutOff}
	return nil
}

// Start runs a defined domain; see [Hypervisor.Start].
func (s *Simulated) Start(ctx context.Context, name string) error {
	return s.setState(ctx, "start", name, s.cfg.Delays.Start, func(DomainState) DomainState { return StateRunning })
}

// Shutdown powers a domain off after the Shutdown delay; see [Hypervisor.Shutdown].
func (s *Simulated) Shutdown(ctx context.Context, name string) error {
	return s.setState(ctx, "shut down", name, s.cfg.Delays.Shutdown, powerOff)
}

// Stop powers a domain off; see [Hypervisor.Stop].
func (s *Simulated) Stop(ctx context.Context, name string) error {
	return s.setState(ctx, "stop", name, s.cfg.Delays.Stop, powerOff)
}

// Suspend pauses a running domain; see [Hypervisor.Suspend].
func (s *Simulated) Suspend(ctx context.Context, name string) error {
	return s.setState(ctx, "suspend", name, 0, func(st DomainState) DomainState {
		if st == StateRunning {
			return StatePaused
		}
		return st
	})
}

// Reboot leaves a domain running; see [Hypervisor.Reboot].
func (s *Simulated) Reboot(ctx context.Context, name string) error {
	return s.setState(ctx, "reboot", name, s.cfg.Delays.Reboot, func(DomainState) DomainState { return StateRunning })
}

// powerOff is the state after Shutdown or Stop: off, unless the domain was not running.
func powerOff(st DomainState) DomainState {
	if st.Active() {
		return StateShutOff
	}
	return st
}

// setState moves an existing domain to next(its state).
func (s *Simulated) setState(ctx context.Context, op, name string, delay time.Duration, next func(DomainState) DomainState) error {
	if err := s.begin(ctx, op, name, delay, true); err != nil {
		return err
	}
	defer s.mu.Unlock()
	d, err := s.get(name)
	if err != nil {
		return err
	}
	was := d.state
	d.state = next(d.state)
	if d.state.Active() && !was.Active() {
		d.live = slices.Clone(d.spec.Disks) // a cold start boots the definition
	}
	return nil
}

// Undefine removes a domain; see [Hypervisor.Undefine].
func (s *Simulated) Undefine(ctx context.Context, name string) error {
	if err := s.begin(ctx, "undefine", name, s.cfg.Delays.Undefine, true); err != nil {
		return err
	}
	defer s.mu.Unlock()
	delete(s.domains, name)
	return nil
}

// State returns a domain's state; see [Hypervisor.State].
func (s *Simulated) State(ctx context.Context, name string) (DomainState, error) {
	if err := s.begin(ctx, "get state of", name, s.cfg.Delays.State, false); err != nil {
		return StateUnknown, err
	}
	defer s.mu.Unlock()
	d, err := s.get(name)
	if err != nil {
		return StateUnknown, err
	}
	return d.state, nil
}

// List returns every simulated domain, sorted by name; see [Hypervisor.List].
func (s *Simulated) List(ctx context.Context) ([]Domain, error) {
	if err := s.begin(ctx, "list", "*", s.cfg.Delays.List, false); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	out := make([]Domain, 0, len(s.domains))
	for name, d := range s.domains {
		out = append(out, Domain{
			Name: name, UUID: d.spec.UUID, VMID: d.spec.VMID, Generation: d.spec.Generation, State: d.state,
		})
	}
	slices.SortFunc(out, func(a, b Domain) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// Capacity returns the configured capacity; see [Hypervisor.Capacity].
func (s *Simulated) Capacity(context.Context) (Capacity, error) {
	if err := s.checkOpen(); err != nil {
		return Capacity{}, err
	}
	return s.cfg.Capacity, nil
}

// SetCPUAffinity records cpus as the domain's shared CPU set (its spec's SharedCPUs), as
// if the running instance and its definition had been re-pinned; see
// [Hypervisor.SetCPUAffinity].
func (s *Simulated) SetCPUAffinity(_ context.Context, name string, cpus []int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	d, err := s.get(name)
	if err != nil {
		return err
	}
	d.spec.SharedCPUs = slices.Clone(cpus)
	return nil
}

// Crash marks a domain crashed, as if its guest had died: for tests and demos of the agent's
// reconcile loop. Start brings it back.
func (s *Simulated) Crash(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := s.get(name)
	if err != nil {
		return err
	}
	d.state = StateCrashed
	return nil
}

// Close ends the simulated host: later calls fail with ErrClosed.
func (s *Simulated) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return nil
}
