package dcimimport

import (
	"cmp"
	"context"
	"encoding/csv"
	"slices"
	"strings"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/ent"
)

// Export writes kind's records that the viewer of ctx may read as CSV, with the columns Import
// reads (all of them, required first), so the file imports again as it is. Text cells a
// spreadsheet would read as a formula get a leading quote (escape.go), which Import removes.
func Export(ctx context.Context, client *ent.Client, kind FileKind) (string, error) {
	s, ok := specs[kind]
	if !ok {
		return "", apierr.Validation("kind", "unknown kind %q: one of HOSTS, PORTS, CABLES", kind)
	}
	if v := authz.FromContext(ctx); v == nil || !v.Can(kind.entity(), authz.ActRead) {
		return "", apierr.Forbidden("you may not export %s: it needs a platform role that reads %s records", strings.ToLower(string(kind)), kind.entity())
	}
	var (
		rows [][]string
		err  error
	)
	switch kind {
	case Hosts:
		rows, err = exportHosts(ctx, client)
	case Ports:
		rows, err = exportPorts(ctx, client)
	case Cables:
		rows, err = exportCables(ctx, client)
	}
	if err != nil {
		return "", err
	}
	escapeRows(s.columns(), s.numeric, rows)
	var b strings.Builder
	w := csv.NewWriter(&b)
	_ = w.Write(s.columns())
	_ = w.WriteAll(rows) // a strings.Builder does not fail
	return b.String(), w.Error()
}

// sortPorts orders ports by device, then by name.
func sortPorts(ports []*ent.Port) {
	slices.SortFunc(ports, func(a, b *ent.Port) int {
		return cmp.Or(strings.Compare(a.Edges.Host.Name, b.Edges.Host.Name), strings.Compare(a.Name, b.Name))
	})
}
