package authz

import (
	"context"
	"testing"
)

// TestActor: the name recorded for who did something.
func TestActor(t *testing.T) {
	for _, c := range []struct {
		ctx  context.Context
		want string
	}{
		{context.Background(), "unknown"},
		{NewContext(context.Background(), &Viewer{}), "unknown"},
		{NewContext(context.Background(), &Viewer{Name: "alice"}), "alice"},
		{SystemContext(context.Background(), "drain"), "system:drain"},
	} {
		if got := Actor(c.ctx); got != c.want {
			t.Errorf("Actor = %q, want %q", got, c.want)
		}
	}
}
