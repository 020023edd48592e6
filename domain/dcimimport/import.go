package dcimimport

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/domain/audit"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/store/dberr"
	"github.com/virtflow/virtflow/store/dbtx"
)

// FileKind is what a file holds.
type FileKind string

// The kinds of records a file may hold; the values are the GraphQL enum's.
const (
	Hosts  FileKind = "HOSTS"
	Ports  FileKind = "PORTS"
	Cables FileKind = "CABLES"
)

// Kinds lists every FileKind, in the order they should be imported (ports need their hosts,
// cables their ports).
var Kinds = []FileKind{Hosts, Ports, Cables}

// entity is the ent type a kind creates, for authorization and audit rows.
func (k FileKind) entity() string {
	switch k {
	case Hosts:
		return "Host"
	case Ports:
		return "Port"
	case Cables:
		return "Link"
	}
	return ""
}

// Limits of one import. The HTTP layer already refuses request bodies over 1 MiB.
const (
	MaxBytes = 1 << 20
	MaxRows  = 5000
)

// FieldError is one problem of a row: the column (the header's name; empty for the row as a
// whole) and what is wrong.
type FieldError struct {
	Column  string
	Message string
}

// Row is the outcome of one data row.
type Row struct {
	// Row is the line of the file, the header being 1, as a spreadsheet numbers it.
	Row int
	// Name says which record the row is about: a host's name, host:port, or a→b for a cable.
	Name string
	// ID is the record created (after an applied import).
	ID *int
	// Errors is empty for a valid row.
	Errors []FieldError
}

// Result is the outcome of an import: every data row, and whether anything was written.
type Result struct {
	Kind    FileKind
	DryRun  bool
	Applied bool
	Columns []string
	Rows    []*Row
}

// ErrorCount is the number of rows with at least one error.
func (r *Result) ErrorCount() int {
	n := 0
	for _, row := range r.Rows {
		if len(row.Errors) > 0 {
			n++
		}
	}
	return n
}

// Options are what an import needs from its caller besides the data.
type Options struct {
	// RequestID is written into the audit rows.
	RequestID string
}

// Import checks data, a CSV file of kind, and unless dryRun or a row failed, creates its
// records with client in one transaction as the viewer of ctx. File-level problems (too big,
// no header, an unknown or missing column) are a VALIDATION error on field "csv"; row problems
// are in the Result. A write the database refuses fails the whole import with a VALIDATION
// error naming the row.
func Import(ctx context.Context, client *ent.Client, kind FileKind, data string, dryRun bool, opts Options) (*Result, error) {
	spec, ok := specs[kind]
	if !ok {
		return nil, apierr.Validation("kind", "unknown kind %q: one of HOSTS, PORTS, CABLES", kind)
	}
	if err := mayWrite(ctx, kind); err != nil {
		return nil, err
	}
	if len(data) > MaxBytes {
		return nil, apierr.Validation("csv", "the file has %d bytes; the limit is %d (split it)", len(data), MaxBytes)
	}
	recs, err := parse(data, spec)
	if err != nil {
		return nil, err
	}
	res := &Result{Kind: kind, DryRun: dryRun, Columns: spec.columns()}
	plan, err := spec.check(ctx, client, recs)
	if err != nil {
		return nil, err
	}
	for _, p := range plan {
		res.Rows = append(res.Rows, p.row)
	}
	if dryRun || res.ErrorCount() > 0 {
		return res, nil
	}
	_, err = dbtx.Run(ctx, client, func(tx *ent.Client) error {
		for _, p := range plan {
			rec, id, err := p.create(ctx, tx)
			if err != nil {
				return rowError(p.row, err)
			}
			p.row.ID = &id
			if err := audit.Write(ctx, tx, audit.Entry{Action: "importDCIM", Subject: rec, After: rec, RequestID: opts.RequestID}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		for _, row := range res.Rows {
			row.ID = nil
		}
		return nil, err
	}
	res.Applied = true
	return res, nil
}

// rowError turns a write refused at row into a VALIDATION error naming the row and, when the
// refusal named one, the field.
func rowError(row *Row, err error) error {
	e := dberr.Classify(err)
	if e == nil {
		return fmt.Errorf("import row %d: %w", row.Row, err)
	}
	return &apierr.Error{
		Code:    apierr.CodeValidation,
		Field:   "csv",
		Message: fmt.Sprintf("row %d (%s): %s; nothing was imported", row.Row, row.Name, e.Error()),
		Extra:   map[string]any{"row": row.Row, "column": e.Field},
	}
}

// mayWrite refuses viewers who may not create kind's records on the platform: importing is
// an operator's task, and a dry run answers only those who could apply it.
func mayWrite(ctx context.Context, kind FileKind) error {
	v := authz.FromContext(ctx)
	if v == nil {
		return apierr.Unauthenticated("sign in: send Authorization: Bearer <token>")
	}
	if !v.Can(kind.entity(), authz.ActWrite) {
		return apierr.Forbidden("you may not import %s: it needs a platform role that creates %s records", strings.ToLower(string(kind)), kind.entity())
	}
	return nil
}

// record is one parsed data row: its line and its values by column.
type record struct {
	line   int
	values map[string]string
}

func (r record) get(col string) string { return r.values[col] }

// planned is a checked row and how to create it.
type planned struct {
	row    *Row
	create func(ctx context.Context, c *ent.Client) (ent.Noder, int, error)
}

// spec describes one kind's columns and how its rows are checked.
type spec struct {
	required []string
	optional []string
	// numeric are the columns holding numbers, which Export writes and Import reads
	// without formula escaping (escape.go).
	numeric []string
	check   func(ctx context.Context, c *ent.Client, recs []record) ([]*planned, error)
}

func (s spec) columns() []string { return append(slices.Clone(s.required), s.optional...) }

var specs = map[FileKind]spec{
	Hosts:  {required: hostRequired, optional: hostOptional, numeric: []string{"position", "height"}, check: checkHosts},
	Ports:  {required: portRequired, optional: portOptional, numeric: []string{"speed_mbps", "mtu", "vlan"}, check: checkPorts},
	Cables: {required: cableRequired, optional: cableOptional, numeric: []string{"length_m"}, check: checkCables},
}

// parse reads the header and the data rows. Column names are matched without regard to case
// or surrounding spaces; a UTF-8 byte-order mark (spreadsheets write one) is ignored.
func parse(data string, s spec) ([]record, error) {
	r := csv.NewReader(strings.NewReader(strings.TrimPrefix(data, "\uFEFF")))
	r.FieldsPerRecord = -1
	r.TrimLeadingSpace = true
	header, err := r.Read()
	if errors.Is(err, io.EOF) {
		return nil, apierr.Validation("csv", "the file is empty: the first line names the columns (%s)", strings.Join(s.columns(), ","))
	}
	if err != nil {
		return nil, csvError(err)
	}
	known := s.columns()
	cols := make([]string, len(header))
	for i, h := range header {
		h = strings.ToLower(strings.TrimSpace(h))
		if !slices.Contains(known, h) {
			return nil, apierr.Validation("csv", "row 1: unknown column %q; the columns are %s", header[i], strings.Join(known, ","))
		}
		if slices.Contains(cols, h) {
			return nil, apierr.Validation("csv", "row 1: column %q appears twice", h)
		}
		cols[i] = h
	}
	for _, req := range s.required {
		if !slices.Contains(cols, req) {
			return nil, apierr.Validation("csv", "row 1: missing column %q; required are %s", req, strings.Join(s.required, ","))
		}
	}
	var recs []record
	for {
		fields, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, csvError(err)
		}
		line, _ := r.FieldPos(0)
		if len(recs) == MaxRows {
			return nil, apierr.Validation("csv", "more than %d rows; split the file", MaxRows)
		}
		rec := record{line: line, values: map[string]string{}}
		for i, f := range fields {
			if i >= len(cols) {
				if strings.TrimSpace(f) != "" {
					rec.values[""] = fmt.Sprintf("%d fields, the header has %d", len(fields), len(cols))
				}
				continue
			}
			v := strings.TrimSpace(f)
			if !contains(s.numeric, cols[i]) {
				v = unescapeCell(v)
			}
			rec.values[cols[i]] = v
		}
		recs = append(recs, rec)
	}
	return recs, nil
}

// csvError reports a malformed file (an unterminated quote) at its line.
func csvError(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return apierr.Validation("csv", "row %d: %v", pe.Line, pe.Err)
	}
	return apierr.Validation("csv", "%v", err)
}

// rowChecker gathers the errors of one row.
type rowChecker struct {
	rec record
	row *Row
}

func newRow(rec record, name string) *rowChecker {
	rc := &rowChecker{rec: rec, row: &Row{Row: rec.line, Name: name}}
	if msg := rec.values[""]; msg != "" {
		rc.fail("", "%s", msg)
	}
	return rc
}

func (rc *rowChecker) fail(col, format string, args ...any) {
	rc.row.Errors = append(rc.row.Errors, FieldError{Column: col, Message: fmt.Sprintf(format, args...)})
}

func (rc *rowChecker) ok() bool { return len(rc.row.Errors) == 0 }

// required returns the column's value, failing the row when it is empty.
func (rc *rowChecker) required(col string) string {
	v := rc.rec.get(col)
	if v == "" {
		rc.fail(col, "required")
	}
	return v
}

// str checks an optional text value with the schema's validator.
func (rc *rowChecker) str(col string, validate func(string) error) *string {
	v := rc.rec.get(col)
	if v == "" {
		return nil
	}
	if validate != nil {
		if err := validate(v); err != nil {
			rc.fail(col, "%v", err)
			return nil
		}
	}
	return &v
}

// integer parses an optional whole number and checks it with the schema's validator.
func (rc *rowChecker) integer(col string, validate func(int) error) *int {
	v := rc.rec.get(col)
	if v == "" {
		return nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		rc.fail(col, "%q is not a whole number", v)
		return nil
	}
	if validate != nil {
		if err := validate(n); err != nil {
			rc.fail(col, "%v", err)
			return nil
		}
	}
	return &n
}

// boolean parses an optional true/false (also yes/no, 1/0).
func (rc *rowChecker) boolean(col string) *bool {
	v := strings.ToLower(rc.rec.get(col))
	var b bool
	switch v {
	case "":
		return nil
	case "yes", "y":
		b = true
	case "no", "n":
		b = false
	default:
		var err error
		if b, err = strconv.ParseBool(v); err != nil {
			rc.fail(col, "%q is not true or false", rc.rec.get(col))
			return nil
		}
	}
	return &b
}

// enum parses an optional enum value (case-insensitive; NetBox's "Rack leaf" spelling too)
// into T with the schema's validator, listing the values when it is none of them.
func enum[T ~string](rc *rowChecker, col string, validate func(T) error, values []T) *T {
	v := rc.rec.get(col)
	if v == "" {
		return nil
	}
	t := T(strings.ToUpper(strings.NewReplacer(" ", "_", "-", "_").Replace(v)))
	if validate(t) != nil {
		names := make([]string, len(values))
		for i, x := range values {
			names[i] = string(x)
		}
		rc.fail(col, "%q is none of %s", v, strings.Join(names, ", "))
		return nil
	}
	return &t
}

// MarshalGQL writes the kind as its GraphQL enum value.
func (k FileKind) MarshalGQL(w io.Writer) { _, _ = io.WriteString(w, strconv.Quote(string(k))) }

// UnmarshalGQL reads a GraphQL enum value.
func (k *FileKind) UnmarshalGQL(v any) error {
	s, ok := v.(string)
	if !ok || !slices.Contains(Kinds, FileKind(s)) {
		return fmt.Errorf("%v is not a DCIMImportKind", v)
	}
	*k = FileKind(s)
	return nil
}
