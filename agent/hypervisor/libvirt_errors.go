package hypervisor

import (
	"errors"

	"github.com/digitalocean/go-libvirt"
)

// isCode reports whether err is an error libvirtd answered with one of codes.
func isCode(err error, codes ...libvirt.ErrorNumber) bool {
	var lerr libvirt.Error
	if !errors.As(err, &lerr) {
		return false
	}
	for _, c := range codes {
		if lerr.Code == uint32(c) {
			return true
		}
	}
	return false
}

// notFound maps libvirt's "no domain" to a *NotFoundError for name and returns other errors
// unchanged.
func notFound(err error, name string) error {
	if isCode(err, libvirt.ErrNoDomain) {
		return &NotFoundError{Name: name}
	}
	return err
}

// notRunning reports whether err says the domain is not running (or already is), which an
// idempotent operation that raced with a state change treats as done.
func notRunning(err error) bool { return isCode(err, libvirt.ErrOperationInvalid) }

// mapState maps libvirt's domain state to a DomainState.
func mapState(s libvirt.DomainState) DomainState {
	switch s {
	case libvirt.DomainRunning, libvirt.DomainBlocked:
		return StateRunning
	case libvirt.DomainPaused:
		return StatePaused
	case libvirt.DomainShutdown:
		return StateShuttingDown
	case libvirt.DomainShutoff:
		return StateShutOff
	case libvirt.DomainCrashed:
		return StateCrashed
	case libvirt.DomainPmsuspended:
		return StateSuspended
	}
	return StateUnknown
}
