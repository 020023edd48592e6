package dberr

import (
	"errors"
	"regexp"
	"strings"

	"github.com/lib/pq"

	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/ent"
)

// Classify turns any error from the ent layer or a domain package into an *apierr.Error, or returns
// nil when the error is not something the client caused (then it is INTERNAL).
func Classify(err error) *apierr.Error {
	if e, ok := apierr.As(err); ok {
		return e
	}
	var ve *ent.ValidationError
	if errors.As(err, &ve) {
		return &apierr.Error{Code: apierr.CodeValidation, Field: graphQLName(ve.Name), Message: innermost(ve).Error()}
	}
	var de *ent.DependentsError
	if errors.As(err, &de) {
		return &apierr.Error{Code: apierr.CodeConflict, Message: de.Error(), Extra: map[string]any{"dependents": de.Dependents}}
	}
	var nf *ent.NotFoundError
	if errors.As(err, &nf) {
		return &apierr.Error{Code: apierr.CodeNotFound, Message: strings.TrimPrefix(nf.Error(), "ent: ")}
	}
	var ce *ent.ConstraintError
	if errors.As(err, &ce) {
		return constraint(ce)
	}
	var pe *pq.Error
	if errors.As(err, &pe) && (pe.Code == "40P01" || pe.Code == "40001") {
		// A deadlock or serialization failure aborted the whole transaction: nothing of the
		// request was written, and the same request may simply be sent again.
		return &apierr.Error{Code: apierr.CodeConflict, Message: "a concurrent change collided with this one; try again"}
	}
	return nil
}

var (
	// PostgreSQL: Key (name, floor_racks)=(r1, 5) already exists.
	pgKeyColumns = regexp.MustCompile(`Key \(([^)]*)\)=`)
	// SQLite: UNIQUE constraint failed: racks.name, racks.floor_racks (2067)
	sqliteUnique = regexp.MustCompile(`UNIQUE constraint failed: (.*?)(\s*\(\d+\))?$`)
)

// constraint maps a unique or foreign-key violation to CONFLICT or VALIDATION naming the
// fields involved, without the driver's message.
func constraint(ce *ent.ConstraintError) *apierr.Error {
	var pqErr *pq.Error
	if errors.As(ce, &pqErr) {
		cols := columnsOf(pgKeyColumns, pqErr.Detail)
		switch pqErr.Code {
		case "23505":
			return uniqueConflict(fieldsOf(pqErr.Table, cols))
		case "23503":
			field := ""
			if fs := fieldsOf(pqErr.Table, cols); len(fs) > 0 {
				field = fs[0]
			}
			return &apierr.Error{Code: apierr.CodeValidation, Field: field, Message: "the referenced record does not exist"}
		}
		return &apierr.Error{Code: apierr.CodeConflict, Message: "the change violates a database constraint"}
	}
	msg := ce.Error()
	if m := sqliteUnique.FindStringSubmatch(msg); m != nil {
		var table string
		var cols []string
		for _, tc := range strings.Split(m[1], ",") {
			tc = strings.TrimSpace(tc)
			if i := strings.IndexByte(tc, '.'); i >= 0 {
				table, tc = tc[:i], tc[i+1:]
			}
			cols = append(cols, tc)
		}
		return uniqueConflict(fieldsOf(table, cols))
	}
	if strings.Contains(msg, "FOREIGN KEY constraint failed") {
		return &apierr.Error{Code: apierr.CodeValidation, Message: "a referenced record does not exist"}
	}
	return &apierr.Error{Code: apierr.CodeConflict, Message: "the change violates a database constraint"}
}

func uniqueConflict(fields []string) *apierr.Error {
	e := &apierr.Error{Code: apierr.CodeConflict, Message: "a record with the same " + strings.Join(fields, " and ") + " already exists"}
	if len(fields) > 0 {
		e.Field = fields[0]
		e.Extra = map[string]any{"fields": fields}
	}
	return e
}

func columnsOf(re *regexp.Regexp, s string) []string {
	m := re.FindStringSubmatch(s)
	if m == nil {
		return nil
	}
	var cols []string
	for _, c := range strings.Split(m[1], ",") {
		cols = append(cols, strings.Trim(strings.TrimSpace(c), `"`))
	}
	return cols
}

// fieldsOf turns table columns into GraphQL field names: foreign keys become the edge's
// input field (floorID), other columns their camelCase name.
func fieldsOf(table string, cols []string) []string {
	out := make([]string, 0, len(cols))
	for _, c := range cols {
		if f, ok := ent.ForeignKeyFields[table+"."+c]; ok {
			out = append(out, f)
			continue
		}
		out = append(out, graphQLName(c))
	}
	return out
}

// graphQLName turns an ent field name (memory_mb) into its GraphQL name (memoryMB).
func graphQLName(field string) string {
	if n := ent.GraphQLFieldName(field); n != "" {
		return n
	}
	return camel(field)
}

// innermost returns the error at the bottom of err's chain: for an ent validation error, the
// validator's own message (e.g. "value out of range") without ent's wrapping.
func innermost(err error) error {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
}

// camel turns an ent field name (serial_number) into its GraphQL name (serialNumber).
func camel(s string) string {
	parts := strings.Split(s, "_")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}
