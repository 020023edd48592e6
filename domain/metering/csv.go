package metering

import (
	"encoding/csv"
	"io"
	"strconv"

	"github.com/virtflow/virtflow/domain/dcimimport"
)

// CSVColumns are the columns WriteCSV writes.
var CSVColumns = []string{"kind", "key", "resource_id", "seconds", "quantity", "amount", "currency"}

// WriteCSV writes the report's lines and a total line as CSV (RFC 4180), text cells escaped
// against spreadsheet formula injection as every VirtFlow export is (dcimimport.EscapeCell):
// a resource name is chosen by the tenant.
func WriteCSV(w io.Writer, r *Report) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVColumns); err != nil {
		return err
	}
	for _, l := range r.Lines {
		id := ""
		if l.Resource != 0 {
			id = strconv.Itoa(l.Resource)
		}
		if err := cw.Write([]string{string(l.Kind), dcimimport.EscapeCell(l.Key), id, strconv.FormatInt(l.Seconds, 10),
			FormatUnitHours(l.UnitSeconds), FormatMicro(l.AmountMicro), l.Currency}); err != nil {
			return err
		}
	}
	if err := cw.Write([]string{"TOTAL", "", "", "", "", FormatMicro(r.TotalMicro), r.Currency}); err != nil {
		return err
	}
	cw.Flush()
	return cw.Error()
}
