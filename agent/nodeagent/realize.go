package nodeagent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/virtflow/virtflow/agent/hypervisor"
)

// Observed state of an assignment whose domain does not exist.
const observedAbsent = "absent"

// realize brings the domain of a (VM vmID; dom is what the hypervisor listed, nil for no
// domain) to a's desired state and reports the outcome. A domain already in the desired state
// at a's generation is left alone: that is how a restarted agent avoids doing work twice.
func (ag *Agent) realize(ctx context.Context, a Assignment, vmID int64, dom *hypervisor.Domain, pinned []int, pinErr error) {
	if settled(a, dom) {
		r := AssignmentReport{Status: AssignmentStatusApplied, ObservedState: observed(dom)}
		acted := ag.askGuestAgent(ctx, a, dom, &r)
		if ag.routed() {
			ag.routeReport(ctx, a, &r)
		}
		ag.send(ctx, a, r, acted)
		return
	}
	name := hypervisor.DomainName(vmID)
	log := ag.log.With("assignment", a.Id, "domain", name, "desired", a.DesiredState, "generation", a.Generation)
	if until, ok := ag.flaps.holding(vmID); ok && a.DesiredState != AssignmentDesiredStateAbsent {
		// Backed off: the domain flapped. Removing it is always allowed.
		ag.report(ctx, a, AssignmentStatusFailed, observed(dom), ag.flaps.flapReason(name, ag.flaps.limit, until), false)
		return
	}
	if ag.routed() && a.DesiredState != AssignmentDesiredStateRunning {
		// Withdraw first: the address leaves its peers' tables before the VM stops answering.
		ag.withdrawAll(a)
		ag.rememberInstance(a, false)
	}
	note, err := ag.apply(ctx, a, name, dom, pinned, pinErr)
	b := newBackOff(ag.cfg.RetryDelay, 30*time.Second)
	for attempt := 1; err != nil && attempt < ag.cfg.Attempts && retriable(err, pinErr) && ctx.Err() == nil; attempt++ {
		// Every operation is idempotent: try again from what the hypervisor has now, so
		// that a passing failure does not become a FAILED report (and a VM in ERROR).
		log.Info("assignment attempt failed; retrying", "attempt", attempt, "err", err)
		select {
		case <-ctx.Done():
		case <-time.After(b.NextBackOff()):
		}
		if dom, err = ag.lookup(ctx, vmID); err == nil {
			note, err = ag.apply(ctx, a, name, dom, pinned, pinErr)
		}
	}
	if ctx.Err() != nil {
		return // shutting down: the next start picks this up again
	}
	state, serr := ag.hv.State(ctx, name)
	obs := string(state)
	if errors.Is(serr, hypervisor.ErrNotFound) {
		obs = observedAbsent
	} else if serr != nil {
		obs = string(hypervisor.StateUnknown)
	}
	if a.Status != AssignmentStatusPending && dom != nil && serr == nil && dom.State.Active() != state.Active() {
		// The agent changed the power state of a domain for an assignment it had applied
		// already (drift: not a new request, which comes PENDING): counted for the flap guard.
		if until, n, flapping := ag.flaps.changed(vmID); flapping {
			reason := ag.flaps.flapReason(name, n, until)
			log.Warn("domain flapping: backing off", "changes", n, "until", until)
			ag.flapEvent(ctx, vmID, name, reason)
			ag.report(ctx, a, AssignmentStatusFailed, obs, reason, true)
			return
		}
	}
	if errors.Is(err, errWaiting) {
		// Not a failure: the API wakes the assignment (PENDING) once it can go on.
		log.Info("assignment waiting", "reason", err)
		ag.report(ctx, a, AssignmentStatusApplying, obs, err.Error(), true)
		return
	}
	if err != nil {
		log.Warn("assignment failed", "err", err, "observed", obs)
		ag.report(ctx, a, AssignmentStatusFailed, obs, err.Error(), true)
		return
	}
	log.Info("assignment applied", "observed", obs)
	r := AssignmentReport{Status: AssignmentStatusApplied, ObservedState: obs, Reason: note}
	if ag.routed() {
		ag.routeReport(ctx, a, &r)
	}
	if a.DesiredState != AssignmentDesiredStateAbsent {
		// Which volumes the domain has now: what moves them to ATTACHED or AVAILABLE.
		if ids, err := ag.domainVolumes(ctx, name); err == nil {
			r.Volumes, r.VolumeIDs = true, ids
		} else {
			log.Warn("cannot list the domain's disks", "err", err)
		}
	}
	ag.send(ctx, a, r, true)
}

// apply drives the hypervisor towards a's desired state. The note it returns goes into
// the report's reason (a volume change that waits for the VM's next start).
func (ag *Agent) apply(ctx context.Context, a Assignment, name string, dom *hypervisor.Domain, pinned []int, pinErr error) (string, error) {
	var spec *hypervisor.DomainSpec // the definition written, nil when left as it was
	define := func() error {
		if pinErr != nil {
			return pinErr
		}
		if dom != nil && dom.Generation == a.Generation && a.Status != AssignmentStatusPending {
			// The domain already has this generation's definition. A PENDING assignment at
			// the domain's generation had its volumes changed: define it again (Define
			// leaves an identical spec alone).
			return nil
		}
		s, err := ag.specFor(ctx, a, pinned)
		if err != nil {
			return fmt.Errorf("build domain: %w", err)
		}
		if err := ag.imageDisks(ctx, a, &s, dom == nil); err != nil {
			return err
		}
		if err := ag.volumeDisks(ctx, a, &s); err != nil {
			return err
		}
		spec = &s
		return ag.hv.Define(ctx, s)
	}
	switch a.DesiredState {
	case AssignmentDesiredStateRunning:
		if dom != nil && dom.State.Active() && dom.Generation > 0 && dom.Generation < a.Generation {
			// A running domain asked to run at a newer generation: a reboot (provision's
			// contract). Reboot first, then record the generation, so that an agent that dies
			// in between reboots again rather than not at all.
			if err := ag.hv.Reboot(ctx, name); err != nil {
				return "", fmt.Errorf("reboot: %w", err)
			}
		}
		if err := define(); err != nil {
			return "", err
		}
		if spec != nil && dom != nil && dom.State.Active() {
			// Running already: the volumes attached or detached meanwhile are hot-plugged.
			if note, err := ag.syncVolumes(ctx, name, *spec); err != nil || note != "" {
				return note, err
			}
		}
		if err := ag.ensureNetworks(a); err != nil {
			return "", err
		}
		return "", ag.hv.Start(ctx, name)
	case AssignmentDesiredStateStopped:
		if err := define(); err != nil {
			return "", err
		}
		sctx, cancel := context.WithTimeout(ctx, ag.cfg.ShutdownTimeout)
		err := ag.hv.Shutdown(sctx, name)
		cancel()
		if err != nil && ctx.Err() == nil {
			ag.log.Info("guest did not shut down in time; powering off", "domain", name, "err", err)
			return "", ag.hv.Stop(ctx, name)
		}
		return "", err
	case AssignmentDesiredStateAbsent:
		if err := ag.hv.Undefine(ctx, name); err != nil {
			return "", err
		}
		if id, ok := hypervisor.ParseDomainName(name); ok {
			if err := ag.removeDisks(ctx, id); err != nil {
				return "", err
			}
		}
		return "", ag.removeConfigDrive(name)
	}
	return "", fmt.Errorf("unknown desired state %q", a.DesiredState)
}

// settled reports whether dom is already what a asks for, at a's generation.
func settled(a Assignment, dom *hypervisor.Domain) bool {
	switch a.DesiredState {
	case AssignmentDesiredStateAbsent:
		return dom == nil
	case AssignmentDesiredStateRunning:
		return a.Status != AssignmentStatusPending && dom != nil && dom.Generation == a.Generation && dom.State == hypervisor.StateRunning
	case AssignmentDesiredStateStopped:
		return a.Status != AssignmentStatusPending && dom != nil && dom.Generation == a.Generation && !dom.State.Active()
	}
	return false
}

// askGuestAgent adds to r what the QEMU guest agent of a's running domain answers, if one
// does, and reports whether it did (such a report goes even when the API shows the
// assignment settled: the guest agent's word is news; the agent sends it once).
func (ag *Agent) askGuestAgent(ctx context.Context, a Assignment, dom *hypervisor.Domain, r *AssignmentReport) bool {
	if a.DesiredState != AssignmentDesiredStateRunning || dom == nil || dom.State != hypervisor.StateRunning {
		return false
	}
	gctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	info, err := ag.hv.GuestAgent(gctx, dom.Name)
	if err != nil {
		return false
	}
	r.GuestAgent, r.GuestHostname, r.GuestAddresses = true, info.Hostname, strings.Join(info.Addresses, ",")
	return true
}

// observed is the observed state of dom as reported to the API.
func observed(dom *hypervisor.Domain) string {
	if dom == nil {
		return observedAbsent
	}
	return string(dom.State)
}

// report sends the outcome of a, unless this agent already sent it or, for an assignment
// found settled without work (acted is false), the API already shows it: a settled
// assignment is reported once, not on every resync. After work (a reboot ends where it
// began: running) the report always goes, whatever the API shows.
func (ag *Agent) report(ctx context.Context, a Assignment, status AssignmentStatus, obs, reason string, acted bool) {
	ag.send(ctx, a, AssignmentReport{Status: status, ObservedState: obs, Reason: reason}, acted)
}

// send is report with the whole report r (its ID and Generation are a's).
func (ag *Agent) send(ctx context.Context, a Assignment, r AssignmentReport, acted bool) {
	r.ID, r.Generation = a.Id, a.Generation
	status, obs := r.Status, r.ObservedState
	if !acted && !r.Routes && status == AssignmentStatusApplied && a.Status == AssignmentStatusApplied && a.ObservedState != nil && *a.ObservedState == obs {
		return
	}
	ag.mu.Lock()
	last, ok := ag.reported[a.Id]
	ag.mu.Unlock()
	if ok && last == r {
		return
	}
	err := sendReport(ctx, ag.api, r)
	if err == nil {
		ag.mu.Lock()
		ag.reported[a.Id] = r
		ag.mu.Unlock()
	} else if ctx.Err() == nil {
		ag.log.Warn("report failed", "assignment", a.Id, "err", err)
	}
	if ag.cfg.OnReport != nil {
		ag.cfg.OnReport(r, err)
	}
}

// retriable reports whether another attempt may succeed: not for a spec that does not
// validate, a name held by another domain, or CPUs that cannot be pinned.
func retriable(err, pinErr error) bool {
	return pinErr == nil && !errors.Is(err, hypervisor.ErrInvalidSpec) && !errors.Is(err, hypervisor.ErrConflict) &&
		!errors.Is(err, hypervisor.ErrClosed) && !errors.Is(err, errWaiting)
}

// lookup returns the domain of VM vmID as the hypervisor lists it now, or nil for none.
func (ag *Agent) lookup(ctx context.Context, vmID int64) (*hypervisor.Domain, error) {
	doms, err := ag.hv.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("list domains: %w", err)
	}
	for _, d := range doms {
		if d.VMID == vmID {
			return &d, nil
		}
	}
	return nil, nil
}
