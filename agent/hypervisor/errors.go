package hypervisor

import (
	"errors"
	"fmt"
)

var (
	// ErrNotFound matches a [*NotFoundError]: the domain does not exist.
	ErrNotFound = errors.New("domain not found")
	// ErrInvalidSpec is returned by Define for a spec that does not validate.
	ErrInvalidSpec = errors.New("invalid domain spec")
	// ErrConflict is returned by Define when another domain already holds the name (with
	// another UUID) or the UUID (with another name).
	ErrConflict = errors.New("domain conflict")
	// ErrClosed is returned by every operation after Close.
	ErrClosed = errors.New("hypervisor closed")
	// ErrUnsupported is returned by AttachDisk and DetachDisk when the hypervisor cannot
	// change the devices of a running domain (libvirt's test driver, for one).
	ErrUnsupported = errors.New("not supported by this hypervisor")
	// ErrNoGuestAgent is returned by GuestAgent when no QEMU guest agent answers.
	ErrNoGuestAgent = errors.New("no guest agent answers")
	// ErrInjected is the failure the [Simulated] hypervisor injects at its failure rate.
	ErrInjected = errors.New("simulated failure")
)

// NotFoundError says that the named domain does not exist. errors.Is(err, ErrNotFound) holds
// for it.
type NotFoundError struct {
	// Name is the domain's name (or the pool's, or pool/volume).
	Name string
	// Kind is what is missing: "domain" when empty, "pool" or "volume".
	Kind string
}

// Error implements error.
func (e *NotFoundError) Error() string {
	kind := e.Kind
	if kind == "" {
		kind = "domain"
	}
	return fmt.Sprintf("%s %s not found", kind, e.Name)
}

// Is makes errors.Is(err, ErrNotFound) true.
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

// invalidSpec wraps a validation failure so that errors.Is(err, ErrInvalidSpec) holds.
func invalidSpec(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidSpec, fmt.Sprintf(format, args...))
}
