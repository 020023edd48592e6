package dcimimport

import (
	"errors"
	"strings"
	"testing"

	"github.com/virtflow/virtflow/domain/apierr"
)

// A write the database refuses at apply (a concurrent change took the units) fails the whole
// import as a VALIDATION error naming the row and, when the refusal named one, the column.
func TestRowError(t *testing.T) {
	row := &Row{Row: 7, Name: "srv-7"}
	e, ok := apierr.As(rowError(row, apierr.Validation("position", "U3, full depth overlaps srv-1")))
	if !ok || e.Code != apierr.CodeValidation || e.Field != "csv" || e.Extra["row"] != 7 || e.Extra["column"] != "position" ||
		!strings.Contains(e.Message, "row 7 (srv-7): position: U3, full depth overlaps srv-1; nothing was imported") {
		t.Fatalf("got %#v", e)
	}
	// an error the client did not cause stays internal, with the row for the log
	err := rowError(row, errors.New("connection reset"))
	if _, ok := apierr.As(err); ok || !strings.Contains(err.Error(), "import row 7") {
		t.Fatalf("got %v", err)
	}
}
