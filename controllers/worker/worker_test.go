package worker

import (
	"slices"
	"testing"
)

func TestParseQueues(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{" , ", nil},
		{"eu-west", []string{"region:eu-west"}},
		{"region:eu-west, default,eu-west,critical", []string{"region:eu-west", "default", "critical"}},
		{"tokyo1,osaka1", []string{"region:tokyo1", "region:osaka1"}},
	} {
		if got := ParseQueues(c.in); !slices.Equal(got, c.want) {
			t.Errorf("ParseQueues(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
