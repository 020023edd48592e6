package graph

import (
	"github.com/virtflow/virtflow/domain/guest"
	"github.com/virtflow/virtflow/graph/model"
)

// guestAgentReport is the guest.Report of a GuestAgentReportInput; nil for none.
func guestAgentReport(in *model.GuestAgentReportInput) *guest.Report {
	if in == nil {
		return nil
	}
	r := &guest.Report{Addresses: in.Addresses}
	if in.Hostname != nil {
		r.Hostname = *in.Hostname
	}
	return r
}
