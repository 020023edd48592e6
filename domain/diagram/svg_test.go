package diagram_test

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/virtflow/virtflow/domain/diagram"
	"github.com/virtflow/virtflow/ent/alert"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/host"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
)

// svgDoc is what the tests read back from a rendered elevation.
type svgDoc struct {
	rects  []map[string]string // attributes of every rect
	texts  []string            // character data of every text element
	titles []string            // tooltips
}

// parseSVG checks that b is well-formed XML with an svg root and collects its shapes and texts.
func parseSVG(t *testing.T, b []byte) svgDoc {
	t.Helper()
	var doc svgDoc
	dec := xml.NewDecoder(bytes.NewReader(b))
	var stack []string
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, b)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			if len(stack) == 0 && (el.Name.Local != "svg" || el.Name.Space != "http://www.w3.org/2000/svg") {
				t.Fatalf("root element %v, want svg", el.Name)
			}
			if el.Name.Local == "script" || el.Name.Local == "foreignObject" {
				t.Fatalf("the document contains a %s element", el.Name.Local)
			}
			stack = append(stack, el.Name.Local)
			if el.Name.Local == "rect" {
				attrs := map[string]string{}
				for _, a := range el.Attr {
					attrs[a.Name.Local] = a.Value
				}
				doc.rects = append(doc.rects, attrs)
			}
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) == 0 {
				continue
			}
			switch stack[len(stack)-1] {
			case "text":
				doc.texts = append(doc.texts, string(el))
			case "title":
				doc.titles = append(doc.titles, string(el))
			}
		}
	}
	return doc
}

func (d svgDoc) countText(s string) int {
	n := 0
	for _, t := range d.texts {
		if t == s {
			n++
		}
	}
	return n
}

func (d svgDoc) countFill(fill string) int {
	n := 0
	for _, r := range d.rects {
		if r["fill"] == fill {
			n++
		}
	}
	return n
}

func TestWriteSVG(t *testing.T) {
	ptr := func(v int) *int { return &v }
	sev := alert.SeverityCritical
	role := host.RoleRackLeaf
	evil := `<script>alert("x")</script> & "co"`
	el := &diagram.RackElevation{
		Rack: diagram.RackSummary{ID: 1, Name: "rack-1-1", Height: 6, Status: "ACTIVE", FloorName: "floor-1-1-1", DatacenterName: "dc<1>"},
		Units: []diagram.RackUnit{
			{Unit: 6}, {Unit: 5, FrontDeviceID: ptr(4)}, {Unit: 4, FrontDeviceID: ptr(3), RearDeviceID: ptr(3)},
			{Unit: 3, FrontDeviceID: ptr(2), RearDeviceID: ptr(2)}, {Unit: 2, FrontDeviceID: ptr(1), RearDeviceID: ptr(1)},
			{Unit: 1, FrontDeviceID: ptr(1), RearDeviceID: ptr(1)},
		},
		Devices: []diagram.ElevationDevice{
			{ID: 4, Name: "leaf", Kind: host.KindSwitch, Role: &role, Position: 5, Height: 1, Face: host.FaceFront},
			{ID: 3, Name: "down", Kind: host.KindServer, Position: 4, Height: 1, Face: host.FaceFront, FullDepth: true,
				Node: &diagram.NodeSummary{Status: computenode.StatusDown}},
			{ID: 2, Name: "cordoned", Kind: host.KindServer, Position: 3, Height: 1, Face: host.FaceFront, FullDepth: true,
				Node: &diagram.NodeSummary{Status: computenode.StatusReady, Cordoned: true}},
			{ID: 1, Name: evil, Kind: host.KindServer, Position: 1, Height: 2, Face: host.FaceFront, FullDepth: true,
				Node:        &diagram.NodeSummary{Status: computenode.StatusReady, CPUCapacity: 64, CPUAllocated: 8, VMCount: 3},
				Alerts:      diagram.AlertCounts{Critical: 2, Worst: &sev},
				Maintainers: []diagram.Responsible{{Name: "Alice & Bob"}}},
		},
		UsedUnits: 5, FreeUnits: 1,
	}
	var b bytes.Buffer
	if err := diagram.WriteSVG(&b, el); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Contains(out, "<script") || strings.Contains(out, `"co"`) {
		t.Fatalf("a device name reached the document unescaped:\n%s", out)
	}
	doc := parseSVG(t, b.Bytes())

	for _, face := range []string{"Front", "Rear"} {
		if doc.countText(face) != 1 {
			t.Errorf("heading %q appears %d times, want once", face, doc.countText(face))
		}
	}
	for _, u := range []string{"1", "6"} {
		if doc.countText(u) != 2 {
			t.Errorf("unit number %s appears %d times, want once per face", u, doc.countText(u))
		}
	}
	// Full-depth devices on both faces, the half-depth switch on the front only.
	if n := doc.countText(evil); n != 2 {
		t.Errorf("the (escaped) name %q is drawn %d times, want 2 (both faces)", evil, n)
	}
	if n := doc.countText("leaf"); n != 1 {
		t.Errorf("the half-depth switch is drawn %d times, want 1", n)
	}
	// Every colour once per face a device shows on, plus once in the legend; the cordoned
	// server keeps its Ready green under the stripes.
	for _, c := range []struct {
		fill string
		want int
	}{{"#66bb6a", 2 + 2 + 1}, {"#ef5350", 2 + 1}, {"url(#cordoned)", 2 + 1}, {"#90a4ae", 1 + 1}} {
		if got := doc.countFill(c.fill); got != c.want {
			t.Errorf("%d rects filled %s, want %d", got, c.fill, c.want)
		}
	}
	if !strings.Contains(strings.Join(doc.texts, "\n"), "dc<1> / floor-1-1-1 / rack-1-1") {
		t.Errorf("no title with the rack's path in %q", doc.texts)
	}
	if !strings.Contains(strings.Join(doc.titles, "\n"), "maintainers: Alice & Bob") {
		t.Errorf("tooltips %q do not name the maintainers", doc.titles)
	}
	if doc.countText("2") != 4 { // unit 2 and the badge with 2 open alerts, on each face
		t.Errorf("no alert badge: texts %q", doc.texts)
	}
}

func TestElevationSVGEndpoint(t *testing.T) {
	env := newEnv(t)
	r := buildSmallRack(t, env.Client)
	get := func(path, token string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		rec := httptest.NewRecorder()
		env.Handler.ServeHTTP(rec, req)
		return rec
	}
	path := func(id int) string { return fmt.Sprintf("/api/racks/%d/elevation.svg", id) }

	rec := get(path(r.rack.ID), gqltest.AdminToken)
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "image/svg+xml" {
		t.Fatalf("admin: HTTP %d %s: %s", rec.Code, rec.Header().Get("Content-Type"), rec.Body.String())
	}
	doc := parseSVG(t, rec.Body.Bytes())
	for _, name := range []string{r.p + "srv1", r.p + "srv2", r.p + "sw", r.p + "pdu"} {
		if doc.countText(name) == 0 {
			t.Errorf("device %s is not drawn", name)
		}
	}

	member := tenantToken(t, env, r.tenant)
	for _, tt := range []struct {
		name, path, token string
		status            int
		code              string
	}{
		{"no token", path(r.rack.ID), "", http.StatusUnauthorized, "UNAUTHENTICATED"},
		{"invalid token", path(r.rack.ID), "vf_not-a-real-token-at-all", http.StatusUnauthorized, "UNAUTHENTICATED"},
		{"unknown rack", path(r.rack.ID + 100000), gqltest.AdminToken, http.StatusNotFound, "NOT_FOUND"},
		{"not a rack", path(r.floor.ID), gqltest.AdminToken, http.StatusNotFound, "NOT_FOUND"},
		{"not a number", "/api/racks/rack-3-7/elevation.svg", gqltest.AdminToken, http.StatusBadRequest, "VALIDATION"},
		{"a rack the viewer may not see", path(r.rack.ID), member, http.StatusNotFound, "NOT_FOUND"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := get(tt.path, tt.token)
			if rec.Code != tt.status || !strings.Contains(rec.Body.String(), `"code":"`+tt.code+`"`) {
				t.Errorf("HTTP %d %s, want %d with code %s", rec.Code, rec.Body.String(), tt.status, tt.code)
			}
			if strings.Contains(rec.Body.String(), "<svg") {
				t.Errorf("an error answer carries the drawing")
			}
		})
	}
}
