package nodeagent_test

import (
	"strings"
	"testing"

	"github.com/virtflow/virtflow/agent/hypervisor"
	"github.com/virtflow/virtflow/agent/nodeagent"
)

// TestDomainDrift: the DOMAIN_STATE_DRIFT check compares the domains with the APPLIED
// assignments; one still being realized is not drift.
func TestDomainDrift(t *testing.T) {
	vm := func(id int) *int { return &id }
	a := func(id int, desired nodeagent.AssignmentDesiredState, st nodeagent.AssignmentStatus) nodeagent.Assignment {
		return nodeagent.Assignment{Id: "a", VmID: vm(id), DesiredState: desired, Status: st}
	}
	dom := func(id int64, s hypervisor.DomainState) hypervisor.Domain {
		return hypervisor.Domain{Name: hypervisor.DomainName(id), VMID: id, State: s}
	}
	run, stop, gone := nodeagent.AssignmentDesiredStateRunning, nodeagent.AssignmentDesiredStateStopped, nodeagent.AssignmentDesiredStateAbsent
	applied, pending := nodeagent.AssignmentStatusApplied, nodeagent.AssignmentStatusPending
	tests := []struct {
		name string
		as   []nodeagent.Assignment
		doms []hypervisor.Domain
		want nodeagent.EventStatus
		has  string
	}{
		{"as assigned", []nodeagent.Assignment{a(1, run, applied), a(2, stop, applied), a(3, gone, applied)},
			[]hypervisor.Domain{dom(1, hypervisor.StateRunning), dom(2, hypervisor.StateShutOff)}, nodeagent.EventStatusSuccess, "OK"},
		{"running one crashed", []nodeagent.Assignment{a(1, run, applied)},
			[]hypervisor.Domain{dom(1, hypervisor.StateCrashed)}, nodeagent.EventStatusCritical, "should run but is crashed"},
		{"running one gone", []nodeagent.Assignment{a(1, run, applied)}, nil, nodeagent.EventStatusCritical, "should run but is gone"},
		{"still being created", []nodeagent.Assignment{a(1, run, pending)}, nil, nodeagent.EventStatusSuccess, "OK"},
		{"stopped one running", []nodeagent.Assignment{a(2, stop, applied)},
			[]hypervisor.Domain{dom(2, hypervisor.StateRunning)}, nodeagent.EventStatusWarning, "should be stopped"},
		{"absent one defined", []nodeagent.Assignment{a(3, gone, applied)},
			[]hypervisor.Domain{dom(3, hypervisor.StateShutOff)}, nodeagent.EventStatusWarning, "should be gone"},
		{"unassigned domain", nil, []hypervisor.Domain{dom(9, hypervisor.StateRunning)}, nodeagent.EventStatusWarning, "assigned to no VM"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := nodeagent.DomainDrift(tt.as, tt.doms)
			if r.Status != tt.want || !strings.Contains(r.Output, tt.has) {
				t.Errorf("got %s %q, want %s containing %q", r.Status, r.Output, tt.want, tt.has)
			}
		})
	}
}
