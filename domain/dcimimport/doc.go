// Package dcimimport is the bulk import and export of datacenter records as CSV: hosts (with
// their rack placement), ports and cables, NetBox's daily chore of loading a delivery of
// servers from a spreadsheet.
//
// An import is two phases. Check parses the file (encoding/csv, a header row naming the
// columns), validates every row — values with the schema's own validators, references resolved
// by name (a rack by its name or datacenter/floor/rack, a host by its name, a port by host and
// name), duplicates within the file and conflicts with what exists (a taken name or MAC, units
// already occupied, a port already cabled) — and reports each problem with its row (the line
// of the file, the header being line 1) and column. Apply runs only when no row failed: it
// creates every row in one transaction (internal/dbtx, so a GraphQL mutation's transaction when
// there is one) as the viewer, so the authorization policy and the schema's hooks still have
// the last word, and writes one audit row per record created. A write refused at that point
// (a concurrent change took the units) fails the whole import naming its row: nothing is
// applied when any row fails.
//
// Export writes the same columns, so an exported file imports again elsewhere (round trip).
package dcimimport
