package truncate_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/virtflow/virtflow/store/truncate"
)

func TestString(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    string
		max  int
		want string
	}{
		{"fits", "héllo", 6, "héllo"},
		{"ascii", "abcdefgh", 6, "abc…"},
		{"two-byte character across the cut", "aaééé", 6, "aa…"},
		{"four-byte character across the cut", "a😀b", 5, "a…"},
		{"smaller than the ellipsis", "éa", 1, ""},
		{"zero", "abc", 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := truncate.String(tc.s, tc.max)
			if got != tc.want {
				t.Errorf("String(%q, %d) = %q, want %q", tc.s, tc.max, got, tc.want)
			}
			if len(got) > tc.max || !utf8.ValidString(got) {
				t.Errorf("String(%q, %d) = %q: %d bytes, valid UTF-8 %v", tc.s, tc.max, got, len(got), utf8.ValidString(got))
			}
		})
	}
	// Every cut of a string of mixed widths stays valid and within bounds.
	s := strings.Repeat("aé€😀", 50)
	for max := 0; max <= len(s)+1; max++ {
		got := truncate.String(s, max)
		if len(got) > max || !utf8.ValidString(got) || (max >= len(s) && got != s) {
			t.Fatalf("String(s, %d) = %q", max, got)
		}
	}
}
