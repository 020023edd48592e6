package dcimimport

import "strings"

// Spreadsheet formula injection (OWASP "CSV Injection"): a cell that starts with =, +, -,
// @, a tab or a carriage return is a formula to Excel, LibreOffice and Google Sheets, so an
// exported description "=HYPERLINK(...)" would run when an operator opens the file. Export
// prefixes such a text cell with a single quote, which spreadsheets show as text and hide;
// Import strips that quote again, so an exported file imports to the values it came from.
//
// Only text columns are escaped: numeric columns (positions, heights, speeds, MTUs, VLANs,
// lengths) hold numbers the import parses, never formulas, and a negative number stays a
// number ("-1" is refused by the validators as a number, not read as text). A text cell that
// itself starts with a quote gets one more, so unescaping is exact: Import removes the first
// quote only when a formula character or another quote follows it, which is what Export wrote.

// formulaStart reports whether a cell starting with c is read as a formula by spreadsheets.
func formulaStart(c byte) bool {
	switch c {
	case '=', '+', '-', '@', '\t', '\r':
		return true
	}
	return false
}

// escapeCell returns a text cell as Export writes it.
func escapeCell(s string) string {
	if s != "" && (formulaStart(s[0]) || s[0] == '\'') {
		return "'" + s
	}
	return s
}

// unescapeCell returns the value of a text cell Import read, removing the quote
// escapeCell added.
func unescapeCell(s string) string {
	if len(s) >= 2 && s[0] == '\'' && (formulaStart(s[1]) || s[1] == '\'') {
		return s[1:]
	}
	return s
}

// escapeRows escapes every cell of rows outside the numeric columns of cols.
func escapeRows(cols []string, numeric []string, rows [][]string) {
	text := make([]bool, len(cols))
	for i, c := range cols {
		text[i] = !contains(numeric, c)
	}
	for _, row := range rows {
		for i := range row {
			if i < len(text) && text[i] {
				row[i] = escapeCell(row[i])
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// EscapeCell returns a text cell as VirtFlow's CSV exports write it: a cell a spreadsheet
// would read as a formula gets a leading quote (see escapeCell).
func EscapeCell(s string) string { return escapeCell(s) }
