package yamllimit

import (
	"fmt"
	"strings"
	"testing"
)

var limits = Limits{MaxBytes: 64 << 10, MaxDepth: 64, MaxNodes: 20_000, MaxAliases: 256, MaxBracketDepth: 1000}

// bomb is a "billion laughs" document expanding to 9^levels scalars.
func bomb(levels int) string {
	var b strings.Builder
	b.WriteString("a0: &a0 [lol,lol,lol,lol,lol,lol,lol,lol,lol]\n")
	for i := 1; i < levels; i++ {
		p := fmt.Sprintf("*a%d", i-1)
		fmt.Fprintf(&b, "a%d: &a%d [%s]\n", i, i, strings.Repeat(p+",", 8)+p)
	}
	return b.String()
}

// TestParse: documents within the limits parse (aliases left unexpanded), the others are
// refused with what is wrong.
func TestParse(t *testing.T) {
	for _, tc := range []struct{ name, text, wantErr string }{
		{"anchors", "base: &b {x: 1}\nuse: [*b, *b]\n", ""},
		{"empty", "# only a comment\n", ""},
		{"bomb 9^6", bomb(6), "YAML nodes"},
		{"bomb 9^9", bomb(9), "YAML nodes"},
		{"deep flow", "x: " + strings.Repeat("[", 30000) + strings.Repeat("]", 30000), "nests more than 64"},
		{"65 levels", "x: " + strings.Repeat("[", 65) + strings.Repeat("]", 65), "nests more than 64"},
		{"64 levels", "x: " + strings.Repeat("[", 63) + strings.Repeat("]", 63), ""},
		{"aliases", "a: &a x\nb: [" + strings.Repeat("*a,", 256) + "*a]\n", "aliases"},
		{"self", "a: &a [*a]\n", "contains it"},
		{"two documents", "a: 1\n---\nb: 2\n", "one YAML document"},
		{"bad", "a: [1\n", "not valid YAML"},
		{"too long", "x: \"" + strings.Repeat("a", 70000) + "\"\n", "bytes, at most"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.text, limits)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("Parse: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("Parse error = %v, want one saying %q", err, tc.wantErr)
			}
		})
	}
}
