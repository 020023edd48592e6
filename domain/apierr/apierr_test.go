package apierr_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/virtflow/virtflow/domain/apierr"
)

func TestConstructorsAndAs(t *testing.T) {
	in := apierr.Validation("memoryMB", "must be at least %d", 64)
	if in.Code != apierr.CodeValidation || in.Field != "memoryMB" || in.Error() != "memoryMB: must be at least 64" {
		t.Errorf("Validation = %+v, Error() = %q", in, in.Error())
	}
	for _, err := range []error{in, fmt.Errorf("ctx: %w", in), fmt.Errorf("a: %w", fmt.Errorf("b: %w", in))} {
		if got, ok := apierr.As(err); !ok || got != in {
			t.Errorf("As(%v) = %+v, %v; want the *Error itself", err, got, ok)
		}
	}
	if _, ok := apierr.As(errors.New("plain")); ok {
		t.Errorf("As(plain error) = true")
	}
	for _, c := range []struct {
		got  *apierr.Error
		code apierr.Code
		msg  string
	}{
		{apierr.Conflict("x %d", 1), apierr.CodeConflict, "x 1"},
		{apierr.NotFound("rack %d not found", 9), apierr.CodeNotFound, "rack 9 not found"},
		{apierr.Unauthenticated("no token"), apierr.CodeUnauthenticated, "no token"},
		{apierr.Forbidden("not yours"), apierr.CodeForbidden, "not yours"},
		{apierr.Exhausted("networkID", "network %s is full", "n1"), apierr.CodeExhausted, "networkID: network n1 is full"},
	} {
		if c.got.Code != c.code || c.got.Error() != c.msg {
			t.Errorf("got %+v (%q), want code %s and message %q", c.got, c.got.Error(), c.code, c.msg)
		}
	}
}
