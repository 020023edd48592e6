package graph_test

import (
	"strings"
	"testing"

	"github.com/virtflow/virtflow/authz"
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
