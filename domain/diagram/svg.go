package diagram

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/virtflow/virtflow/ent/alert"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/host"
)

// Geometry of the SVG elevation, in pixels.
const (
	svgUnit    = 18  // height of one rack unit
	svgFaceW   = 260 // width of one face
	svgNumW    = 30  // unit-number column left of each face
	svgGap     = 36  // between the two faces
	svgMargin  = 16
	svgTitleH  = 66 // title and face headings above the rack
	svgLegendH = 44
	svgMaxName = 34 // characters of a device name shown before it is cut
)

// Fill colours of devices, by node state; other devices are neutral.
var (
	colorReady    = "#66bb6a"
	colorNotReady = "#ffca28"
	colorDown     = "#ef5350"
	colorUnknown  = "#bdbdbd"
	colorNoNode   = "#cfd8dc"
	colorNeutral  = "#90a4ae"
	colorSeverity = map[alert.Severity]string{
		alert.SeverityFatal:    "#7b1fa2",
		alert.SeverityCritical: "#c62828",
		alert.SeverityWarning:  "#ef6c00",
	}
)

// WriteSVG renders el as a standalone SVG document: the front and rear faces side by side with
// unit numbers; every device as a labelled box coloured by its node's state (Ready green,
// NotReady amber, Down red, Unknown grey, striped when cordoned; servers without a node light
// grey, other devices neutral), names too long for the box losing their start; a badge with
// the number of open alerts coloured by the worst severity; a tooltip with the details; and a
// legend. Every name is XML-escaped, so a device named "<script>" is drawn as text.
func WriteSVG(w io.Writer, el *RackElevation) error {
	var s svgWriter
	height := max(el.Rack.Height, 1)
	rackH := height * svgUnit
	width := 2*(svgNumW+svgFaceW) + svgGap + 2*svgMargin
	total := svgTitleH + rackH + svgLegendH + svgMargin

	s.f(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="Helvetica, Arial, sans-serif" font-size="11">`,
		width, total, width, total)
	// Cordoned devices keep their state's colour under white stripes.
	s.raw(`<defs><pattern id="cordoned" patternUnits="userSpaceOnUse" width="8" height="8" patternTransform="rotate(45)">` +
		`<rect width="4" height="8" fill="#ffffff" fill-opacity="0.6"/></pattern></defs>`)
	s.f(`<rect width="%d" height="%d" fill="#ffffff"/>`, width, total)

	title := el.Rack.Name
	if el.Rack.FloorName != "" {
		title = el.Rack.DatacenterName + " / " + el.Rack.FloorName + " / " + el.Rack.Name
	}
	s.f(`<text x="%d" y="%d" font-size="15" font-weight="bold">`, svgMargin, svgMargin+8)
	s.text(title)
	s.raw(`</text>`)
	s.f(`<text x="%d" y="%d" fill="#555555">`, svgMargin, svgMargin+24)
	s.text(fmt.Sprintf("%dU, %d used, %d free, %s", el.Rack.Height, el.UsedUnits, el.FreeUnits, el.Rack.Status))
	s.raw(`</text>`)

	devices := make(map[int]*ElevationDevice, len(el.Devices))
	for i := range el.Devices {
		devices[el.Devices[i].ID] = &el.Devices[i]
	}
	for i, face := range []host.Face{host.FaceFront, host.FaceRear} {
		x0 := svgMargin + i*(svgNumW+svgFaceW+svgGap)
		s.face(el, face, x0, svgTitleH, height)
	}
	s.legend(svgMargin, svgTitleH+rackH+22)
	s.raw(`</svg>`)
	_, err := w.Write(s.b.Bytes())
	return err
}

// face draws one face of the rack with its left edge (unit numbers) at x0 and top at y0.
func (s *svgWriter) face(el *RackElevation, face host.Face, x0, y0, height int) {
	rx := x0 + svgNumW
	name := "Front"
	if face == host.FaceRear {
		name = "Rear"
	}
	s.f(`<text x="%d" y="%d" font-weight="bold" text-anchor="middle">%s</text>`, rx+svgFaceW/2, y0-6, name)
	s.f(`<rect x="%d" y="%d" width="%d" height="%d" fill="#fafafa" stroke="#37474f" stroke-width="2"/>`,
		rx, y0, svgFaceW, height*svgUnit)
	for i := range height {
		unit := height - i
		y := y0 + i*svgUnit
		if i > 0 {
			s.f(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#e0e0e0"/>`, rx, y, rx+svgFaceW, y)
		}
		s.f(`<text x="%d" y="%d" text-anchor="end" fill="#757575" font-size="10">%d</text>`, rx-5, y+svgUnit-5, unit)
	}
	for i := range el.Devices {
		d := &el.Devices[i]
		if !d.FullDepth && d.Face != face {
			continue
		}
		top := min(d.Position+max(d.Height, 1)-1, height)
		if d.Position < 1 || d.Position > height {
			continue
		}
		y := y0 + (height-top)*svgUnit
		h := (top - d.Position + 1) * svgUnit
		s.device(d, rx+2, y+1, svgFaceW-4, h-2)
	}
}

// device draws one device box with its label, alert badge and tooltip.
func (s *svgWriter) device(d *ElevationDevice, x, y, w, h int) {
	fill, state := deviceFill(d)
	s.raw(`<g>`)
	s.raw(`<title>`)
	s.text(tooltip(d))
	s.raw(`</title>`)
	s.f(`<rect x="%d" y="%d" width="%d" height="%d" rx="2" fill="%s" stroke="#263238" stroke-width="1"/>`, x, y, w, h, fill)
	if d.Node != nil && d.Node.Cordoned {
		s.f(`<rect x="%d" y="%d" width="%d" height="%d" rx="2" fill="url(#cordoned)"/>`, x, y, w, h)
	}
	label := cut(d.Name, svgMaxName)
	s.f(`<text x="%d" y="%d" fill="#212121">`, x+6, y+min(h, svgUnit)/2+4)
	s.text(label)
	s.raw(`</text>`)
	if h >= 2*svgUnit-2 && state != "" {
		s.f(`<text x="%d" y="%d" fill="#37474f" font-size="10">`, x+6, y+svgUnit+12)
		s.text(state)
		s.raw(`</text>`)
	}
	if a := d.Alerts; a.Worst != nil {
		n := a.Fatal + a.Critical + a.Warning
		cx, cy := x+w-12, y+min(h, svgUnit)/2
		s.f(`<circle cx="%d" cy="%d" r="7" fill="%s"/>`, cx, cy, colorSeverity[*a.Worst])
		s.f(`<text x="%d" y="%d" fill="#ffffff" font-size="9" text-anchor="middle">%d</text>`, cx, cy+3, n)
	}
	s.raw(`</g>`)
}

// deviceFill is the fill of a device and the state line shown on devices of 2U and more.
func deviceFill(d *ElevationDevice) (fill, state string) {
	n := d.Node
	if n == nil {
		if d.Kind == host.KindServer {
			return colorNoNode, "no compute node"
		}
		if d.Role != nil {
			return colorNeutral, strings.ToLower(strings.ReplaceAll(string(*d.Role), "_", "-"))
		}
		return colorNeutral, strings.ToLower(string(d.Kind))
	}
	state = fmt.Sprintf("%s · %d/%d vCPU · %d VMs", n.Status, n.CPUAllocated, n.CPUCapacity, n.VMCount)
	if n.Cordoned {
		state = "cordoned · " + state
	}
	switch n.Status {
	case computenode.StatusReady:
		return colorReady, state
	case computenode.StatusNotReady:
		return colorNotReady, state
	case computenode.StatusDown:
		return colorDown, state
	}
	return colorUnknown, state
}

// tooltip is the full description of a device, shown on hover.
func tooltip(d *ElevationDevice) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s", d.Name, d.Kind)
	if d.Role != nil {
		fmt.Fprintf(&b, ", %s", *d.Role)
	}
	fmt.Fprintf(&b, ")\nU%d", d.Position)
	if d.Height > 1 {
		fmt.Fprintf(&b, "-U%d", d.Position+d.Height-1)
	}
	fmt.Fprintf(&b, ", %s", d.Face)
	if d.FullDepth {
		b.WriteString(", full depth")
	}
	if d.Model != "" {
		fmt.Fprintf(&b, "\nmodel %s", d.Model)
	}
	fmt.Fprintf(&b, "\nlifecycle %s", d.Lifecycle)
	if n := d.Node; n != nil {
		fmt.Fprintf(&b, "\nnode %s: %s", n.Name, n.Status)
		if n.Cordoned {
			b.WriteString(", cordoned")
		}
		fmt.Fprintf(&b, "\nvCPU %d/%d, memory %d/%d MB, %d VMs", n.CPUAllocated, n.CPUCapacity,
			n.MemoryAllocatedMB, n.MemoryCapacityMB, n.VMCount)
	}
	if a := d.Alerts; a.Worst != nil {
		fmt.Fprintf(&b, "\nopen alerts: %d fatal, %d critical, %d warning", a.Fatal, a.Critical, a.Warning)
	}
	if len(d.Maintainers) > 0 {
		names := make([]string, len(d.Maintainers))
		for i, m := range d.Maintainers {
			names[i] = m.Name
		}
		fmt.Fprintf(&b, "\nmaintainers: %s", strings.Join(names, ", "))
	}
	return b.String()
}

// legend explains the colours at x, y.
func (s *svgWriter) legend(x, y int) {
	items := []struct{ fill, label string }{
		{colorReady, "Ready"}, {colorNotReady, "NotReady"}, {colorDown, "Down"}, {colorUnknown, "Unknown"},
		{"url(#cordoned)", "cordoned"}, {colorNoNode, "no node"}, {colorNeutral, "network/other"},
	}
	for _, it := range items {
		if it.fill == "url(#cordoned)" {
			s.f(`<rect x="%d" y="%d" width="12" height="12" fill="%s"/>`, x, y-10, colorUnknown)
		}
		s.f(`<rect x="%d" y="%d" width="12" height="12" fill="%s" stroke="#263238"/>`, x, y-10, it.fill)
		s.f(`<text x="%d" y="%d">%s</text>`, x+16, y, it.label)
		x += 22 + 7*len(it.label)
	}
}

// cut shortens s to at most n characters by dropping its start, marking the cut with an
// ellipsis: device names begin with their floor and rack, which the title already shows, and
// end with what tells them apart (…rack-1-1-rack-leaf-router01).
func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return "…" + string(r[len(r)-n+1:])
}

// svgWriter accumulates the document. Only f (with trusted formats and numbers) and raw (with
// constant markup) write markup; every string that comes from the data goes through text.
type svgWriter struct{ b bytes.Buffer }

func (s *svgWriter) f(format string, args ...any) { fmt.Fprintf(&s.b, format, args...) }
func (s *svgWriter) raw(markup string)            { s.b.WriteString(markup) }
func (s *svgWriter) text(t string)                { _ = xml.EscapeText(&s.b, []byte(t)) }
