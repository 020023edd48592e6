package dcimimport_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/domain/dcimimport"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/auditlog"
	"github.com/virtflow/virtflow/ent/host"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

// TestMain gives the package its own PostgreSQL database; tests share it with names of their own.
func TestMain(m *testing.M) { testdb.Main(m) }

var seq atomic.Int64

// world is a rack to import into, and who imports.
type world struct {
	c        *ent.Client
	p        string // prefix of every name
	rack     *ent.Rack
	operator context.Context
}

func newWorld(t *testing.T) *world {
	t.Helper()
	env := gqltest.Postgres(t, testdb.DSN(t))
	c, sys := env.Client, gqltest.System()
	p := fmt.Sprintf("t%d-", seq.Add(1))
	reg := c.Region.Create().SetName(p + "region").SaveX(sys)
	dc := c.Datacenter.Create().SetName(p + "dc").SetRegion(reg).SaveX(sys)
	fl := c.Floor.Create().SetName("floor-1").SetDatacenter(dc).SaveX(sys)
	r := c.Rack.Create().SetName(p + "r1").SetHeight(42).SetFloor(fl).SaveX(sys)
	c.Host.Create().SetName(p + "old").SetRack(r).SetPosition(10).SetHeight(2).SaveX(sys)
	return &world{c: c, p: p, rack: r, operator: as(authz.RoleOperator)}
}

func as(role authz.Role) context.Context {
	return authz.NewContext(context.Background(), &authz.Viewer{UserID: 1, Name: "op-" + string(role),
		Bindings: []authz.Binding{{Role: role, Domain: authz.Platform}}})
}

// csv writes lines with the test's prefix in place of "P-".
func (w *world) csv(lines ...string) string {
	return strings.ReplaceAll(strings.Join(lines, "\n")+"\n", "P-", w.p)
}

func (w *world) hostCount(t *testing.T) int {
	t.Helper()
	n, err := w.c.Host.Query().Where(host.NameHasPrefix(w.p)).Count(gqltest.System())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// errorsOf lists "row N column: message" for every failed row.
func errorsOf(res *dcimimport.Result) []string {
	var out []string
	for _, r := range res.Rows {
		for _, e := range r.Errors {
			out = append(out, fmt.Sprintf("row %d %s: %s", r.Row, e.Column, e.Message))
		}
	}
	return out
}

func TestImportHostsOneBadRowAppliesNothing(t *testing.T) {
	w := newWorld(t)
	bad := w.csv(
		"name,kind,rack,position,height,face,full_depth,model,serial_number",
		"P-a,server,P-r1,1,2,,,R650,SN-P-a",
		"P-b,server,P-r1,11,1,,,R650,SN-P-b", // U11 is the old device's
		"P-c,switch,P-r9,20,1,front,false,,", // no such rack
		"P-d,toaster,P-r1,30,1,,,,",          // no such kind
	)
	res, err := dcimimport.Import(w.operator, w.c, dcimimport.Hosts, bad, false, dcimimport.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Applied || res.ErrorCount() != 3 || len(res.Rows) != 4 {
		t.Fatalf("applied=%v errors=%d rows=%d, want not applied, 3 errors of 4 rows: %v", res.Applied, res.ErrorCount(), len(res.Rows), errorsOf(res))
	}
	got := strings.Join(errorsOf(res), "\n")
	for _, want := range []string{
		"row 3 position: U11, full depth overlaps " + w.p + "old",
		"row 4 rack: no rack " + w.p + "r9",
		`row 5 kind: "toaster" is none of SERVER`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("errors lack %q:\n%s", want, got)
		}
	}
	if n := w.hostCount(t); n != 1 {
		t.Fatalf("%d devices after a failed import, want only the old one", n)
	}

	good := w.csv(
		"name,kind,rack,position,height,face,full_depth,model,serial_number",
		"P-a,server,P-r1,1,2,,,R650,SN-P-a",
		"P-b,server,P-r1,12,1,,,R650,SN-P-b",
		"P-c,switch,P-r1,20,1,front,false,,",
		"P-d,pdu,P-r1,20,1,rear,false,,",
	)
	res, err = dcimimport.Import(w.operator, w.c, dcimimport.Hosts, good, true, dcimimport.Options{})
	if err != nil || res.Applied || res.ErrorCount() != 0 {
		t.Fatalf("dry run: %v applied=%v %v", err, res != nil && res.Applied, errorsOf(res))
	}
	if n := w.hostCount(t); n != 1 {
		t.Fatalf("a dry run wrote %d devices", n-1)
	}
	res, err = dcimimport.Import(w.operator, w.c, dcimimport.Hosts, good, false, dcimimport.Options{RequestID: "req-1"})
	if err != nil || !res.Applied {
		t.Fatalf("apply: %v %v", err, errorsOf(res))
	}
	b := w.c.Host.Query().Where(host.Name(w.p + "b")).WithRack().OnlyX(gqltest.System())
	if b.Position != 12 || b.Edges.Rack.ID != w.rack.ID || b.SerialNumber != "SN-"+w.p+"b" || *res.Rows[1].ID != b.ID {
		t.Errorf("imported %+v in rack %v, want U12 of %s", b, b.Edges.Rack, w.rack.Name)
	}
	audits := w.c.AuditLog.Query().Where(auditlog.RequestID("req-1"), auditlog.Action("importDCIM"), auditlog.ObjectType("Host")).CountX(gqltest.System())
	if audits != 4 {
		t.Errorf("%d audit rows, want one per device (4)", audits)
	}
}

func TestImportPortsAndCablesRoundTrip(t *testing.T) {
	w := newWorld(t)
	if _, err := dcimimport.Import(w.operator, w.c, dcimimport.Hosts, w.csv("name,kind", "P-srv,server", "P-sw,switch"), false, dcimimport.Options{}); err != nil {
		t.Fatal(err)
	}
	ports := w.csv(
		"host,name,mac,speed_mbps,mtu",
		"P-srv,eth0,AA:BB:CC:00:00:01,25000,9000",
		"P-srv,eth1,,25000,",
		"P-sw,swp1,,,",
		"P-sw,swp2,,,",
		"P-sw,swp2,,,",      // twice
		"P-nope,eth0,,,",    // no such device
		"P-srv,eth2,zz,,80", // bad MAC and MTU
	)
	res, err := dcimimport.Import(w.operator, w.c, dcimimport.Ports, ports, false, dcimimport.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(errorsOf(res), "\n")
	for _, want := range []string{"row 6 name: " + w.p + "sw:swp2 is also on row 5", "row 7 host: no device " + w.p + "nope", "row 8 mac:", "row 8 mtu:"} {
		if !strings.Contains(got, want) {
			t.Errorf("errors lack %q:\n%s", want, got)
		}
	}
	if res.Applied {
		t.Fatal("applied with errors")
	}
	lines := strings.Split(strings.TrimSpace(ports), "\n")
	if res, err = dcimimport.Import(w.operator, w.c, dcimimport.Ports, strings.Join(lines[:5], "\n"), false, dcimimport.Options{}); err != nil || !res.Applied {
		t.Fatalf("ports: %v %v", err, errorsOf(res))
	}
	cables := w.csv(
		"a_host,a_port,b_host,b_port,kind,length_m",
		"P-srv,eth0,P-sw,swp1,dac,1.5",
		"P-srv,eth1,P-sw,swp1,,", // swp1 taken by row 2
	)
	res, err = dcimimport.Import(w.operator, w.c, dcimimport.Cables, cables, false, dcimimport.Options{})
	if err != nil || res.Applied || !strings.Contains(strings.Join(errorsOf(res), "\n"), "row 3 b_port: "+w.p+"sw:swp1 is also cabled on row 2") {
		t.Fatalf("%v applied=%v %v", err, res.Applied, errorsOf(res))
	}
	cables = w.csv("a_host,a_port,b_host,b_port,kind,length_m", "P-srv,eth0,P-sw,swp1,dac,1.5", "P-srv,eth1,P-sw,swp2,,")
	if res, err = dcimimport.Import(w.operator, w.c, dcimimport.Cables, cables, false, dcimimport.Options{}); err != nil || !res.Applied {
		t.Fatalf("cables: %v %v", err, errorsOf(res))
	}

	// Export, then import the export: every row is read, and refused only because it exists.
	for _, kind := range dcimimport.Kinds {
		out, err := dcimimport.Export(w.operator, w.c, kind)
		if err != nil {
			t.Fatal(err)
		}
		var mine []string
		for i, line := range strings.Split(strings.TrimSpace(out), "\n") {
			if i == 0 || strings.HasPrefix(line, w.p) {
				mine = append(mine, line)
			}
		}
		res, err := dcimimport.Import(w.operator, w.c, kind, strings.Join(mine, "\n"), true, dcimimport.Options{})
		if err != nil {
			t.Fatalf("%s: re-import of the export: %v", kind, err)
		}
		exists := map[dcimimport.FileKind][]string{
			dcimimport.Hosts:  {"exists"},
			dcimimport.Ports:  {"already has a port", "is the MAC of"},
			dcimimport.Cables: {"already cabled"},
		}[kind]
		for _, r := range res.Rows {
			if len(r.Errors) == 0 {
				t.Errorf("%s row %d (%s) imports twice", kind, r.Row, r.Name)
			}
			for _, e := range r.Errors {
				if !slices.ContainsFunc(exists, func(s string) bool { return strings.Contains(e.Message, s) }) {
					t.Errorf("%s row %d (%s): %s: %s, want only that it exists", kind, r.Row, r.Name, e.Column, e.Message)
				}
			}
		}
		if kind == dcimimport.Cables && !strings.Contains(out, w.p+"srv,eth0,"+w.p+"sw,swp1,DAC,CONNECTED,,1.5") {
			t.Errorf("cable export lacks the DAC cable:\n%s", out)
		}
	}
}

func TestImportRefusals(t *testing.T) {
	w := newWorld(t)
	for _, tc := range []struct {
		name       string
		ctx        context.Context
		kind       dcimimport.FileKind
		csv        string
		code, want string
	}{
		{"a viewer may not import", as(authz.RoleViewer), dcimimport.Hosts, "name\nx\n", "FORBIDDEN", "you may not import hosts"},
		{"nobody signed in", context.Background(), dcimimport.Hosts, "name\nx\n", "UNAUTHENTICATED", "sign in"},
		{"unknown column", w.operator, dcimimport.Hosts, "name,colour\nx,red\n", "VALIDATION", `row 1: unknown column "colour"`},
		{"missing column", w.operator, dcimimport.Cables, "a_host,a_port,b_host\n", "VALIDATION", `missing column "b_port"`},
		{"empty file", w.operator, dcimimport.Ports, "", "VALIDATION", "the file is empty"},
		{"broken quote", w.operator, dcimimport.Hosts, "name\n\"x\n", "VALIDATION", "row 2:"},
		{"too big", w.operator, dcimimport.Hosts, "name\n" + strings.Repeat("x\n", dcimimport.MaxBytes/2+1), "VALIDATION", "the limit is"},
		{"too many rows", w.operator, dcimimport.Hosts, "name\n" + strings.Repeat("x\n", dcimimport.MaxRows+1), "VALIDATION", "more than 5000 rows"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := dcimimport.Import(tc.ctx, w.c, tc.kind, tc.csv, true, dcimimport.Options{})
			e, ok := apierr.As(err)
			if !ok || string(e.Code) != tc.code || !strings.Contains(e.Error(), tc.want) {
				t.Fatalf("got %v, want %s %q", err, tc.code, tc.want)
			}
		})
	}
	if _, err := dcimimport.Export(context.Background(), w.c, dcimimport.Hosts); err == nil {
		t.Error("export without a viewer succeeded")
	}
}
