package nodeagent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/virtflow/virtflow/agent/hypervisor"
)

// DefaultCheckTick is how often the agent looks for due checks; the check list itself is
// read again every CheckRefresh (DefaultCheckRefresh).
const (
	DefaultCheckTick    = 5 * time.Second
	DefaultCheckRefresh = time.Minute
)

// CheckResult is the outcome of one check run: a status and the first line of its output.
type CheckResult struct {
	Status EventStatus
	Output string
}

// RunCommand runs a check command in the Nagios/Sensu plugin convention: split on spaces
// and run without a shell, bounded by timeout; exit 0 is SUCCESS, 1 WARNING, 2 CRITICAL,
// anything else (3 is UNKNOWN) WARNING with "UNKNOWN:" before the output, and a command
// that times out or cannot start CRITICAL. The output is the first line of stdout.
func RunCommand(ctx context.Context, command string, timeout time.Duration) CheckResult {
	argv := strings.Fields(command)
	if len(argv) == 0 {
		return CheckResult{EventStatusWarning, "UNKNOWN: the check has no command"}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var out bytes.Buffer
	cmd.Stdout = &out
	err := cmd.Run()
	line, _, _ := strings.Cut(strings.TrimSpace(out.String()), "\n")
	if ctx.Err() == context.DeadlineExceeded {
		return CheckResult{EventStatusCritical, fmt.Sprintf("CRITICAL: timed out after %s", timeout)}
	}
	var exit *exec.ExitError
	switch {
	case err == nil:
		return CheckResult{EventStatusSuccess, line}
	case errors.As(err, &exit):
		switch exit.ExitCode() {
		case 1:
			return CheckResult{EventStatusWarning, line}
		case 2:
			return CheckResult{EventStatusCritical, line}
		}
		return CheckResult{EventStatusWarning, strings.TrimSpace("UNKNOWN: " + line)}
	}
	return CheckResult{EventStatusCritical, fmt.Sprintf("CRITICAL: %v", err)}
}

// checkState is what the agent remembers of one check between runs.
type checkState struct {
	next     time.Time
	failures int
}

// runBuiltin runs one of the checks built into the agent; ok is false for one it lacks:
// nothing is reported for it.
func (ag *Agent) runBuiltin(ctx context.Context, b CheckBuiltin, timeout time.Duration) (CheckResult, bool) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	switch b {
	case CheckBuiltinLibvirtdReachable:
		if _, err := ag.hv.Capacity(ctx); err != nil {
			return CheckResult{EventStatusCritical, fmt.Sprintf("CRITICAL: hypervisor unreachable: %v", err)}, true
		}
		return CheckResult{EventStatusSuccess, "OK: hypervisor answers"}, true
	case CheckBuiltinStoragePoolFree:
		dir := ag.cfg.DiskDir
		if dir == "" {
			dir = "/"
		}
		return StorageFree(dir), true
	case CheckBuiltinNicLink:
		return NICLinks("/sys/class/net"), true
	case CheckBuiltinDomainStateDrift:
		as, err := readAssignments(ctx, ag.api, ag.NodeID())
		if err != nil {
			return CheckResult{EventStatusWarning, fmt.Sprintf("UNKNOWN: read assignments: %v", err)}, true
		}
		doms, err := ag.hv.List(ctx)
		if err != nil {
			return CheckResult{EventStatusCritical, fmt.Sprintf("CRITICAL: list domains: %v", err)}, true
		}
		return DomainDrift(as, doms), true
	}
	return CheckResult{}, false
}

// StorageFree checks the free space of the file system holding dir: under 10 % WARNING,
// under 5 % CRITICAL.
func StorageFree(dir string) CheckResult {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return CheckResult{EventStatusWarning, fmt.Sprintf("UNKNOWN: statfs %s: %v", dir, err)}
	}
	free := float64(st.Bavail) / float64(max(st.Blocks, 1)) * 100
	msg := fmt.Sprintf("%.1f%% free on %s", free, dir)
	switch {
	case free < 5:
		return CheckResult{EventStatusCritical, "CRITICAL: " + msg}
	case free < 10:
		return CheckResult{EventStatusWarning, "WARNING: " + msg}
	}
	return CheckResult{EventStatusSuccess, "OK: " + msg}
}

// NICLinks checks the physical network interfaces under sysfs (those with a device link):
// any whose operstate is not "up" is a WARNING naming it.
func NICLinks(sysfs string) CheckResult {
	entries, err := os.ReadDir(sysfs)
	if err != nil {
		return CheckResult{EventStatusWarning, fmt.Sprintf("UNKNOWN: %v", err)}
	}
	var down []string
	n := 0
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join(sysfs, e.Name(), "device")); err != nil {
			continue // virtual: bridges, taps, loopback
		}
		n++
		state, _ := os.ReadFile(filepath.Join(sysfs, e.Name(), "operstate"))
		if s := strings.TrimSpace(string(state)); s != "up" {
			down = append(down, e.Name()+" "+s)
		}
	}
	if len(down) > 0 {
		sort.Strings(down)
		return CheckResult{EventStatusWarning, "WARNING: link not up: " + strings.Join(down, ", ")}
	}
	return CheckResult{EventStatusSuccess, fmt.Sprintf("OK: %d physical links up", n)}
}

// RunChecks runs the node's checks until ctx ends: it reads them (checksForNode) every
// CheckRefresh, runs those due every CheckTick, and sends the results of a tick in one
// reportEvents batch. A check reports a failure only after its occurrences consecutive
// failures; a success is always reported (the rules decide whether it is news).
func (ag *Agent) RunChecks(ctx context.Context) {
	ag.startChecks(ctx).wait()
}

// startChecks starts what RunChecks does as a periodic loop (no goroutine between ticks).
func (ag *Agent) startChecks(ctx context.Context) *periodic {
	tick, refresh := ag.cfg.CheckTick, ag.cfg.CheckRefresh
	if tick <= 0 {
		tick = DefaultCheckTick
	}
	if refresh <= 0 {
		refresh = DefaultCheckRefresh
	}
	var (
		checks  []checksForNodeChecksForNodeCheck
		fetched time.Time
		state   = map[string]*checkState{}
	)
	// The runs never overlap (periodic), so the state above needs no lock.
	return startPeriodic(ctx, tick, func(ctx context.Context) {
		if time.Since(fetched) >= refresh {
			resp, err := checksForNode(ctx, ag.api, ag.NodeID())
			if err != nil {
				ag.log.Warn("read checks failed", "err", err)
			} else {
				checks, fetched = resp.ChecksForNode, time.Now()
			}
		}
		if in := ag.runDue(ctx, checks, state, time.Now()); len(in) > 0 {
			if _, err := reportEvents(ctx, ag.api, in); err != nil && ctx.Err() == nil {
				ag.log.Warn("report check results failed", "err", err, "results", len(in))
			}
		}
	})
}

// runDue runs the checks due at now and returns what to report.
func (ag *Agent) runDue(ctx context.Context, checks []checksForNodeChecksForNodeCheck, state map[string]*checkState, now time.Time) []ReportEventInput {
	var out []ReportEventInput
	for _, c := range checks {
		st := state[c.Id]
		if st == nil {
			st = &checkState{}
			state[c.Id] = st
		}
		if !c.Enabled || now.Before(st.next) {
			continue
		}
		st.next = now.Add(time.Duration(c.IntervalSeconds) * time.Second)
		timeout := time.Duration(c.TimeoutSeconds) * time.Second
		var (
			r  CheckResult
			ok = true
		)
		switch {
		case c.Builtin != nil:
			r, ok = ag.runBuiltin(ctx, *c.Builtin, timeout)
		case c.Command != nil:
			r = RunCommand(ctx, *c.Command, timeout)
		default:
			ok = false
		}
		if !ok {
			continue
		}
		if r.Status == EventStatusSuccess {
			st.failures = 0
		} else if st.failures++; st.failures < c.Occurrences {
			continue
		}
		id, output := c.Id, r.Output
		out = append(out, ReportEventInput{NodeID: ag.NodeID(), CheckName: c.Name, Status: r.Status, Output: &output, CheckID: &id})
	}
	return out
}

// DomainDrift compares what the hypervisor runs with what the node's assignments ask for
// (the DOMAIN_STATE_DRIFT check). Only assignments the agent reported APPLIED count — one
// still being realized is not drift. A domain of an APPLIED RUNNING assignment that is gone
// or not running is CRITICAL; a STOPPED one running, an ABSENT one present, or a VirtFlow
// domain no assignment names, WARNING.
func DomainDrift(as []Assignment, doms []hypervisor.Domain) CheckResult {
	byVM := make(map[int64]hypervisor.Domain, len(doms))
	for _, d := range doms {
		byVM[d.VMID] = d
	}
	known := map[int64]bool{}
	var crit, warn []string
	for _, a := range as {
		id, ok, err := assignedVM(a)
		if !ok || err != nil {
			continue
		}
		known[id] = true
		if a.Status != AssignmentStatusApplied {
			continue
		}
		d, exists := byVM[id]
		name := hypervisor.DomainName(id)
		switch a.DesiredState {
		case AssignmentDesiredStateRunning:
			if !exists {
				crit = append(crit, name+" should run but is gone")
			} else if d.State != hypervisor.StateRunning {
				crit = append(crit, fmt.Sprintf("%s should run but is %s", name, d.State))
			}
		case AssignmentDesiredStateStopped:
			if exists && d.State.Active() {
				warn = append(warn, fmt.Sprintf("%s should be stopped but is %s", name, d.State))
			}
		case AssignmentDesiredStateAbsent:
			if exists {
				warn = append(warn, name+" should be gone but is defined")
			}
		}
	}
	for _, d := range doms {
		if d.VMID > 0 && !known[d.VMID] {
			warn = append(warn, d.Name+" is assigned to no VM of this node")
		}
	}
	slices.Sort(crit)
	slices.Sort(warn)
	all := append(crit, warn...)
	switch {
	case len(crit) > 0:
		return CheckResult{EventStatusCritical, fmt.Sprintf("CRITICAL: %d domain(s) drifted: %s", len(all), strings.Join(all, "; "))}
	case len(warn) > 0:
		return CheckResult{EventStatusWarning, fmt.Sprintf("WARNING: %d domain(s) drifted: %s", len(all), strings.Join(all, "; "))}
	}
	return CheckResult{EventStatusSuccess, fmt.Sprintf("OK: %d domain(s) as assigned", len(doms))}
}
