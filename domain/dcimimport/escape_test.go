package dcimimport

import "testing"

// TestEscapeCell: every cell a spreadsheet reads as a formula gets one leading quote, and
// unescaping gives back exactly the value (a value that starts with a quote included).
func TestEscapeCell(t *testing.T) {
	for _, tc := range []struct{ in, out string }{
		{`=HYPERLINK("http://x","y")`, `'=HYPERLINK("http://x","y")`},
		{"+1", "'+1"}, {"-2", "'-2"}, {"@SUM(A1)", "'@SUM(A1)"},
		{"\tcmd", "'\tcmd"}, {"\rcmd", "'\rcmd"},
		{"'quoted", "''quoted"}, {"'", "''"},
		{"plain", "plain"}, {"", ""}, {"a=b", "a=b"},
	} {
		if got := escapeCell(tc.in); got != tc.out {
			t.Errorf("escapeCell(%q) = %q, want %q", tc.in, got, tc.out)
		}
		if back := unescapeCell(escapeCell(tc.in)); back != tc.in {
			t.Errorf("unescapeCell(escapeCell(%q)) = %q", tc.in, back)
		}
	}
	// A quote a person typed before an ordinary value is kept.
	if got := unescapeCell("'plain"); got != "'plain" {
		t.Errorf("unescapeCell('plain) = %q", got)
	}
}
