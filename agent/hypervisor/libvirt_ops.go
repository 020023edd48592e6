package hypervisor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/digitalocean/go-libvirt"
	"github.com/google/uuid"
)

// wrap adds the operation and domain to err, except to a *NotFoundError, which names the
// domain already.
func wrap(op, name string, err error) error {
	if err == nil || errors.Is(err, ErrNotFound) {
		return err
	}
	return fmt.Errorf("%s domain %s: %w", op, name, err)
}

// lookup finds a domain by name.
func lookup(c *libvirt.Libvirt, name string) (libvirt.Domain, error) {
	d, err := c.DomainLookupByName(name)
	return d, notFound(err, name)
}

// stateOf returns a domain's current state.
func stateOf(c *libvirt.Libvirt, d libvirt.Domain) (DomainState, error) {
	st, _, err := c.DomainGetState(d, 0)
	if err != nil {
		return StateUnknown, notFound(err, d.Name)
	}
	return mapState(libvirt.DomainState(st)), nil
}

// errBadMetadata marks VirtFlow metadata that does not parse (edited by hand, or written by
// something else in VirtFlow's namespace).
var errBadMetadata = errors.New("unreadable VirtFlow metadata")

// readMetadata returns VirtFlow's metadata of a domain: that of its persistent definition
// when it has one (Define may have changed it while the domain runs), else the live one.
// ok is false for a domain without VirtFlow metadata; metadata that does not parse gives an
// error matching errBadMetadata.
func readMetadata(c *libvirt.Libvirt, d libvirt.Domain) (m metadata, ok bool, err error) {
	uri := libvirt.OptString{MetadataNamespace}
	x, err := c.DomainGetMetadata(d, int32(libvirt.DomainMetadataElement), uri, libvirt.DomainAffectConfig)
	if isCode(err, libvirt.ErrOperationInvalid, libvirt.ErrInvalidArg) {
		// A transient domain has no persistent definition.
		x, err = c.DomainGetMetadata(d, int32(libvirt.DomainMetadataElement), uri, libvirt.DomainAffectCurrent)
	}
	if isCode(err, libvirt.ErrNoDomainMetadata) {
		return m, false, nil
	}
	if err != nil {
		return m, false, notFound(err, d.Name)
	}
	m, ok, err = parseMetadata(x, true)
	if err != nil {
		return m, false, fmt.Errorf("%w: %v", errBadMetadata, err)
	}
	return m, ok, nil
}

// Define creates or updates the persistent domain of spec; see [Hypervisor.Define].
func (h *Libvirt) Define(ctx context.Context, spec DomainSpec) error {
	n, err := spec.normalize()
	if err != nil {
		return err
	}
	doc, digest, err := domainXML(n, h.domainType)
	if err != nil {
		return err
	}
	name := n.Name()
	return wrap("define", name, h.do(ctx, func(c *libvirt.Libvirt) error {
		d, err := c.DomainLookupByName(name)
		switch {
		case err == nil:
			if u := uuid.UUID(d.UUID).String(); u != n.UUID {
				return fmt.Errorf("%w: it exists with UUID %s, the spec has %s", ErrConflict, u, n.UUID)
			}
			m, ok, err := readMetadata(c, d)
			if err != nil && !errors.Is(err, ErrNotFound) && !errors.Is(err, errBadMetadata) {
				return err
			}
			if err == nil && ok && m.SpecDigest == digest {
				return nil // identical: nothing to do
			}
		case isCode(err, libvirt.ErrNoDomain):
			u := uuid.MustParse(n.UUID) // normalize checked it
			other, err := c.DomainLookupByUUID(libvirt.UUID(u))
			if err == nil {
				return fmt.Errorf("%w: UUID %s belongs to domain %s", ErrConflict, n.UUID, other.Name)
			}
			if !isCode(err, libvirt.ErrNoDomain) {
				return err
			}
		default:
			return err
		}
		if _, err := c.DomainDefineXML(doc); err != nil {
			if isCode(err, libvirt.ErrDomExist) {
				return fmt.Errorf("%w: %v", ErrConflict, err)
			}
			return err
		}
		return nil
	}))
}

// Start boots a defined domain; see [Hypervisor.Start].
func (h *Libvirt) Start(ctx context.Context, name string) error {
	return wrap("start", name, h.do(ctx, func(c *libvirt.Libvirt) error {
		d, err := lookup(c, name)
		if err != nil {
			return err
		}
		return start(c, d)
	}))
}

// start brings a domain to running from whatever state it is in.
func start(c *libvirt.Libvirt, d libvirt.Domain) error {
	st, err := stateOf(c, d)
	if err != nil {
		return err
	}
	switch st {
	case StateRunning, StateShuttingDown:
		// Shutting down: libvirt cannot start a domain that is still active; once it is off
		// the agent's next reconcile starts it.
		return nil
	case StatePaused:
		err = c.DomainResume(d)
	case StateSuspended:
		err = c.DomainPmWakeup(d, 0)
	case StateCrashed:
		// A crashed domain kept for inspection must be powered off before it can start again.
		if err := c.DomainDestroy(d); err != nil && !notRunning(err) {
			return notFound(err, d.Name)
		}
		err = c.DomainCreate(d)
	default:
		err = c.DomainCreate(d)
	}
	if notRunning(err) {
		// Raced with another start: check that it runs now.
		if st, serr := stateOf(c, d); serr == nil && st == StateRunning {
			return nil
		}
	}
	return notFound(err, d.Name)
}

// Shutdown asks the guest to power off and waits until it is off; see [Hypervisor.Shutdown].
func (h *Libvirt) Shutdown(ctx context.Context, name string) error {
	requested := false
	var timer *time.Timer
	for {
		var st DomainState
		err := h.do(ctx, func(c *libvirt.Libvirt) error {
			d, err := lookup(c, name)
			if err != nil {
				return err
			}
			if st, err = stateOf(c, d); err != nil || !st.Active() || requested {
				return err
			}
			if st == StatePaused {
				// A paused guest cannot see the ACPI event.
				if err := c.DomainResume(d); err != nil && !notRunning(err) {
					return notFound(err, name)
				}
			}
			if err := c.DomainShutdown(d); err != nil && !notRunning(err) {
				return notFound(err, name)
			}
			requested = true
			return nil
		})
		if errors.Is(err, ErrNotFound) && requested {
			return nil // a transient domain is gone once off
		}
		if err != nil {
			return wrap("shut down", name, err)
		}
		if !st.Active() {
			return nil
		}
		if timer == nil {
			timer = time.NewTimer(h.cfg.PollInterval)
			defer timer.Stop()
		} else {
			timer.Reset(h.cfg.PollInterval)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("shut down domain %s: still %s: %w", name, st, ctx.Err())
		case <-timer.C:
		}
	}
}

// Stop powers the domain off at once; see [Hypervisor.Stop].
func (h *Libvirt) Stop(ctx context.Context, name string) error {
	return wrap("stop", name, h.do(ctx, func(c *libvirt.Libvirt) error {
		d, err := lookup(c, name)
		if err != nil {
			return err
		}
		st, err := stateOf(c, d)
		if err != nil || !st.Active() {
			return err
		}
		if err := c.DomainDestroy(d); err != nil && !notRunning(err) {
			return notFound(err, name)
		}
		return nil
	}))
}

// Reboot reboots a running domain and starts a stopped one; see [Hypervisor.Reboot].
func (h *Libvirt) Reboot(ctx context.Context, name string) error {
	return wrap("reboot", name, h.do(ctx, func(c *libvirt.Libvirt) error {
		d, err := lookup(c, name)
		if err != nil {
			return err
		}
		st, err := stateOf(c, d)
		if err != nil {
			return err
		}
		if st != StateRunning {
			return start(c, d)
		}
		if err := c.DomainReboot(d, libvirt.DomainRebootDefault); err != nil {
			if notRunning(err) { // stopped meanwhile
				return start(c, d)
			}
			return notFound(err, name)
		}
		return nil
	}))
}

// undefineFlags also drop what libvirt keeps beside the definition: a managed save image,
// snapshot and checkpoint metadata, UEFI variables.
const undefineFlags = libvirt.DomainUndefineManagedSave | libvirt.DomainUndefineSnapshotsMetadata |
	libvirt.DomainUndefineCheckpointsMetadata | libvirt.DomainUndefineNvram

// Undefine powers the domain off if needed and removes it; see [Hypervisor.Undefine].
func (h *Libvirt) Undefine(ctx context.Context, name string) error {
	err := h.do(ctx, func(c *libvirt.Libvirt) error {
		d, err := lookup(c, name)
		if err != nil {
			return err
		}
		st, err := stateOf(c, d)
		if err != nil {
			return err
		}
		if st.Active() {
			if err := c.DomainDestroy(d); err != nil && !notRunning(err) {
				return notFound(err, name)
			}
		}
		err = c.DomainUndefineFlags(d, undefineFlags)
		if isCode(err, libvirt.ErrInvalidArg, libvirt.ErrNoSupport) {
			// A driver that does not know some of the flags (the test driver).
			err = c.DomainUndefine(d)
		}
		if isCode(err, libvirt.ErrOperationInvalid) {
			// "cannot undefine transient domain": destroying it removed it already.
			if _, lerr := c.DomainLookupByName(name); isCode(lerr, libvirt.ErrNoDomain) {
				return nil
			}
		}
		return notFound(err, name)
	})
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	return wrap("undefine", name, err)
}

// State returns the domain's current state; see [Hypervisor.State].
func (h *Libvirt) State(ctx context.Context, name string) (DomainState, error) {
	var st DomainState
	err := h.do(ctx, func(c *libvirt.Libvirt) error {
		d, err := lookup(c, name)
		if err != nil {
			return err
		}
		st, err = stateOf(c, d)
		return err
	})
	if err != nil {
		return StateUnknown, wrap("get state of", name, err)
	}
	return st, nil
}

// List returns the VirtFlow-managed domains; see [Hypervisor.List].
func (h *Libvirt) List(ctx context.Context) ([]Domain, error) {
	var out []Domain
	err := h.do(ctx, func(c *libvirt.Libvirt) error {
		out = out[:0]
		doms, _, err := c.ConnectListAllDomains(1, libvirt.ConnectListDomainsActive|libvirt.ConnectListDomainsInactive)
		if err != nil {
			return fmt.Errorf("list domains: %w", err)
		}
		for _, d := range doms {
			if err := ctx.Err(); err != nil {
				return err
			}
			m, ok, err := readMetadata(c, d)
			if errors.Is(err, errBadMetadata) {
				// Still list a domain named like ours, at generation 0 (unknown), so that the
				// agent redefines it rather than losing sight of it; skip anything else.
				id, named := ParseDomainName(d.Name)
				m, ok, err = metadata{VMID: id}, named, nil
			}
			if errors.Is(err, ErrNotFound) || (err == nil && !ok) {
				continue // gone meanwhile, or not ours
			}
			if err != nil {
				return fmt.Errorf("list domains: %s: %w", d.Name, err)
			}
			st, err := stateOf(c, d)
			if errors.Is(err, ErrNotFound) {
				continue
			}
			if err != nil {
				return fmt.Errorf("list domains: %s: %w", d.Name, err)
			}
			out = append(out, Domain{
				Name: d.Name, UUID: uuid.UUID(d.UUID).String(),
				VMID: m.VMID, Generation: m.Generation, State: st,
			})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b Domain) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// Capacity returns the host's logical CPUs, memory and NUMA nodes; see [Hypervisor.Capacity].
func (h *Libvirt) Capacity(ctx context.Context) (Capacity, error) {
	var cp Capacity
	err := h.do(ctx, func(c *libvirt.Libvirt) error {
		_, memKiB, cpus, _, _, _, _, _, err := c.NodeGetInfo()
		if err != nil {
			return fmt.Errorf("get node info: %w", err)
		}
		cp = Capacity{VCPUs: int(cpus), MemoryMiB: int64(memKiB / 1024)}
		cp.NUMANodes, err = numaNodes(c)
		return err
	})
	return cp, err
}

// DomainXML returns the domain's XML as libvirt holds it (the live definition while it runs),
// for diagnostics and tests.
func (h *Libvirt) DomainXML(ctx context.Context, name string) (string, error) {
	var x string
	err := h.do(ctx, func(c *libvirt.Libvirt) error {
		d, err := lookup(c, name)
		if err != nil {
			return err
		}
		x, err = c.DomainGetXMLDesc(d, 0)
		return notFound(err, name)
	})
	return x, wrap("get XML of", name, err)
}

// Suspend pauses a running domain; see [Hypervisor.Suspend].
func (h *Libvirt) Suspend(ctx context.Context, name string) error {
	return wrap("suspend", name, h.do(ctx, func(c *libvirt.Libvirt) error {
		d, err := lookup(c, name)
		if err != nil {
			return err
		}
		st, err := stateOf(c, d)
		if err != nil || st != StateRunning {
			return err
		}
		if err := c.DomainSuspend(d); err != nil && !notRunning(err) {
			return notFound(err, name)
		}
		return nil
	}))
}
