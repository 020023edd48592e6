package alerting

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/alert"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/host"
	"github.com/virtflow/virtflow/ent/maintainergroup"
	"github.com/virtflow/virtflow/ent/powerzone"
	"github.com/virtflow/virtflow/ent/rack"
	"github.com/virtflow/virtflow/store/dbtx"
	"github.com/virtflow/virtflow/store/truncate"
)

// AlertmanagerPath is where the server receives Prometheus Alertmanager's webhooks.
const AlertmanagerPath = "/hooks/alertmanager"

// Limits of the Alertmanager receiver. A webhook over MaxAMBody or with more than
// MaxAMAlerts alerts is refused with 413 (in Alertmanager's webhook_config, max_alerts:
// 1000 keeps every POST under the count; the alerts beyond it are counted in
// truncatedAlerts); a label or annotation over its limit, or a string holding NUL (which
// PostgreSQL text cannot store) with 400 VALIDATION naming the field. The body must be
// UTF-8.
const (
	MaxAMBody            = 4 << 20
	MaxAMAlerts          = 1000
	MaxAMLabels          = 64 // per alert, common labels included
	MaxAMLabelName       = 128
	MaxAMLabelValue      = 1024
	MaxAMAnnotations     = 32
	MaxAMAnnotationValue = 16 << 10
	maxAMShort           = 1024 // status, fingerprint, receiver, groupKey, URLs
)

// CodePayloadTooLarge is the code of a webhook refused for its size or its alert count.
const CodePayloadTooLarge = "PAYLOAD_TOO_LARGE"

// errTooManyAlerts refuses a webhook over MaxAMAlerts (413).
type errTooManyAlerts struct{ n int }

func (e errTooManyAlerts) Error() string {
	return fmt.Sprintf("%d alerts in one webhook: at most %d are accepted (set max_alerts: %d in Alertmanager's webhook_config)",
		e.n, MaxAMAlerts, MaxAMAlerts)
}

// ValidateAMWebhook checks w against the receiver's limits before anything is stored: an
// errTooManyAlerts, or VALIDATION naming the first field out of bounds.
func ValidateAMWebhook(w AMWebhook) error {
	if len(w.Alerts) > MaxAMAlerts {
		return errTooManyAlerts{len(w.Alerts)}
	}
	if err := checkAMStrings("", map[string]string{"version": w.Version, "groupKey": w.GroupKey, "status": w.Status,
		"receiver": w.Receiver, "externalURL": w.ExternalURL}, maxAMShort, maxAMShort); err != nil {
		return err
	}
	for name, m := range map[string]map[string]string{"groupLabels": w.GroupLabels, "commonLabels": w.CommonLabels} {
		if err := checkAMLabels(name, m); err != nil {
			return err
		}
	}
	if err := checkAMAnnotations("commonAnnotations", w.CommonAnnotations); err != nil {
		return err
	}
	for i, a := range w.Alerts {
		f := fmt.Sprintf("alerts[%d]", i)
		if err := checkAMStrings(f+".", map[string]string{"status": a.Status, "fingerprint": a.Fingerprint,
			"generatorURL": a.GeneratorURL}, maxAMShort, maxAMShort); err != nil {
			return err
		}
		if err := checkAMLabels(f+".labels", a.Labels); err != nil {
			return err
		}
		if n := len(a.Labels) + len(w.CommonLabels); n > MaxAMLabels {
			return apierr.Validation(f+".labels", "%d labels (common labels included): at most %d", n, MaxAMLabels)
		}
		if err := checkAMAnnotations(f+".annotations", a.Annotations); err != nil {
			return err
		}
	}
	return nil
}

func checkAMLabels(field string, m map[string]string) error {
	if len(m) > MaxAMLabels {
		return apierr.Validation(field, "%d labels: at most %d", len(m), MaxAMLabels)
	}
	return checkAMStrings(field+".", m, MaxAMLabelName, MaxAMLabelValue)
}

func checkAMAnnotations(field string, m map[string]string) error {
	if len(m) > MaxAMAnnotations {
		return apierr.Validation(field, "%d annotations: at most %d", len(m), MaxAMAnnotations)
	}
	return checkAMStrings(field+".", m, MaxAMLabelName, MaxAMAnnotationValue)
}

// checkAMStrings refuses a key or value of m over its limit, or holding NUL or invalid
// UTF-8; field prefixes the key in the error.
func checkAMStrings(prefix string, m map[string]string, maxKey, maxValue int) error {
	for k, v := range m {
		name := prefix + truncate.String(k, 64)
		switch {
		case len(k) > maxKey:
			return apierr.Validation(name, "name of %d bytes: at most %d", len(k), maxKey)
		case len(v) > maxValue:
			return apierr.Validation(name, "%d bytes: at most %d", len(v), maxValue)
		case strings.ContainsRune(k, 0) || strings.ContainsRune(v, 0):
			return apierr.Validation(strings.ReplaceAll(name, "\x00", "\\0"), "holds a NUL character, which cannot be stored")
		case !utf8.ValidString(k) || !utf8.ValidString(v):
			return apierr.Validation(name, "is not valid UTF-8")
		}
	}
	return nil
}

// AMWebhook is the body Prometheus Alertmanager POSTs to a webhook receiver (version "4";
// https://prometheus.io/docs/alerting/latest/configuration/#webhook_config).
type AMWebhook struct {
	Version           string            `json:"version"`
	GroupKey          string            `json:"groupKey"`
	TruncatedAlerts   int               `json:"truncatedAlerts"`
	Status            string            `json:"status"`
	Receiver          string            `json:"receiver"`
	GroupLabels       map[string]string `json:"groupLabels"`
	CommonLabels      map[string]string `json:"commonLabels"`
	CommonAnnotations map[string]string `json:"commonAnnotations"`
	ExternalURL       string            `json:"externalURL"`
	Alerts            []AMAlert         `json:"alerts"`
}

// AMAlert is one alert of an AMWebhook.
type AMAlert struct {
	Status       string            `json:"status"` // firing or resolved
	Labels       map[string]string `json:"labels"`
	Annotations  map[string]string `json:"annotations"`
	StartsAt     time.Time         `json:"startsAt"`
	EndsAt       time.Time         `json:"endsAt"`
	GeneratorURL string            `json:"generatorURL"`
	Fingerprint  string            `json:"fingerprint"`
}

// AMResult is what Receive did with a webhook.
type AMResult struct {
	Raised, Repeated, Resolved int
	// Alerts are the VirtFlow alerts the webhook's alerts became, in order (0 for a
	// resolved alert that was not open).
	Alerts []int
}

// amTarget is the VirtFlow object an Alertmanager alert is about.
type amTarget struct {
	name                        string
	node, host, rack, powerZone int
	// cause: an alert on it is a cause of suppression (isCause, known without a query).
	cause bool
}

// hostIsCause reports whether an alert on h is a cause (isCause): a PDU, a switch or
// router, or a host with a fabric role.
func hostIsCause(h *ent.Host) bool {
	return h != nil && (h.Kind == host.KindPdu || h.Kind == host.KindSwitch || h.Kind == host.KindRouter || h.Role != nil)
}

// Receive applies an Alertmanager webhook in one transaction: a firing alert is raised (or
// repeated) with fingerprint alertmanager:<Alertmanager's fingerprint>, a resolved one
// resolves it. Labels name the object: host, node and instance (without its port) are
// looked up as a host or a node name, pdu as a host, rack as a rack and power_zone as a
// power zone; rack and power zone names repeat across floors and datacenters, so the labels
// datacenter and floor (names) choose among them (a name still naming several, or none,
// is ignored); severity fatal/page, critical and
// anything else map to FATAL, CRITICAL and WARNING; the summary (or description)
// annotation is the message. The viewer of ctx must be allowed to write alerts.
func Receive(ctx context.Context, client *ent.Client, w AMWebhook) (AMResult, error) {
	var res AMResult
	if v := authz.FromContext(ctx); v == nil || !v.Can("Alert", authz.ActWrite) {
		return res, apierr.Forbidden("only operators may post Alertmanager alerts")
	}
	if w.Version != "4" {
		return res, apierr.Validation("version", "Alertmanager webhook version %q is not supported (want \"4\")", truncate.String(w.Version, 32))
	}
	if err := ValidateAMWebhook(w); err != nil {
		return res, err
	}
	_, err := dbtx.Run(ctx, client, func(c *ent.Client) error {
		res = AMResult{}
		sys := system(ctx)
		sup, err := LoadSuppressors(sys, c)
		if err != nil {
			return err
		}
		// What the batch needs from the database is read once for all its alerts: the
		// objects its labels name, and whether any group would be routed to at all.
		idx, err := loadAMIndex(sys, c, w)
		if err != nil {
			return err
		}
		routes, err := c.MaintainerGroup.Query().Where(maintainergroup.StatusEQ(maintainergroup.StatusActive),
			maintainergroup.WebhookURLNEQ("")).Exist(sys)
		if err != nil {
			return err
		}
		// The open alerts the batch resolves, read at once with what says whether each is
		// a cause. Valid until the batch itself changes them: an alert raised or a cause
		// reconciled earlier in the batch sends the resolves after it the one-by-one way.
		open, err := loadAMOpen(sys, c, w)
		if err != nil {
			return err
		}
		touched, reconciled := map[string]bool{}, false
		actx, actor := auditActor(ctx)
		for i, a := range w.Alerts {
			if a.Labels == nil {
				a.Labels = map[string]string{}
			}
			for k, v := range w.CommonLabels {
				if _, ok := a.Labels[k]; !ok {
					a.Labels[k] = v
				}
			}
			fp := "alertmanager:" + amFingerprint(a)
			if a.Status == "resolved" {
				var n, id int
				var err error
				fresh := !touched[fp] && !reconciled
				if als := open[fp]; fresh && len(als) > 0 {
					n, id, err = closeOpen(actx, actor, c, als, "alertmanager", time.Now())
				} else if !fresh {
					n, id, err = Resolve(ctx, c, fp, "alertmanager", time.Now())
				}
				if err != nil {
					return err
				}
				touched[fp] = true
				res.Resolved += n
				res.Alerts = append(res.Alerts, id)
				if n > 0 {
					if routes {
						if _, err := Route(sys, c, id, true); err != nil {
							return err
						}
					}
					if fresh {
						if amIsCause(open[fp][0]) {
							reconciled = true
							if _, err := Reconcile(sys, c); err != nil {
								return err
							}
						}
					} else if err := AfterChange(sys, c, id); err != nil {
						return err
					}
				}
				continue
			}
			if a.Status != "firing" {
				return apierr.Validation(fmt.Sprintf("alerts[%d].status", i), "want firing or resolved, got %q", truncate.String(a.Status, 32))
			}
			t := idx.locate(a.Labels)
			name := a.Labels["alertname"]
			if name == "" {
				name = "alertmanager"
			}
			if t.name != "" {
				name += " on " + t.name
			}
			msg := a.Annotations["summary"]
			if msg == "" {
				msg = a.Annotations["description"]
			}
			labels := map[string]string{}
			for k, v := range a.Labels {
				labels[truncate.String(k, 63)] = truncate.String(v, 256)
			}
			at := time.Now()
			al, created, err := Raise(ctx, c, AlertSpec{Name: name, Severity: amSeverity(a.Labels["severity"]), Message: msg,
				Fingerprint: fp, NodeID: t.node, HostID: t.host, RackID: t.rack, PowerZoneID: t.powerZone,
				Labels: labels, Source: "alertmanager", SuppressedBy: sup[t.host], At: at})
			if err != nil {
				return err
			}
			touched[fp] = true
			res.Alerts = append(res.Alerts, al.ID)
			if !created {
				res.Repeated++
				continue
			}
			res.Raised++
			// Only a cause (an alert on a failure domain; a new alert suppresses nothing
			// yet) changes suppression: then reconcile, and read the suppressors again for
			// the alerts after it.
			cause := t.cause
			if cause {
				reconciled = true
				if _, err := Reconcile(sys, c); err != nil {
					return err
				}
			}
			if routes {
				if _, err := Route(sys, c, al.ID, false); err != nil {
					return err
				}
			}
			if cause {
				if sup, err = LoadSuppressors(sys, c); err != nil {
					return err
				}
			}
		}
		return nil
	})
	return res, err
}

// amFingerprint is Alertmanager's fingerprint of the alert, or a hash of its labels when
// the sender left it out.
func amFingerprint(a AMAlert) string {
	if a.Fingerprint != "" {
		return truncate.String(a.Fingerprint, 64)
	}
	keys := make([]string, 0, len(a.Labels))
	for k := range a.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	h := sha256.New()
	for _, k := range keys {
		fmt.Fprintf(h, "%s=%s\x00", k, a.Labels[k])
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

func amSeverity(s string) alert.Severity {
	switch strings.ToLower(s) {
	case "fatal", "page", "emergency":
		return alert.SeverityFatal
	case "critical", "error":
		return alert.SeverityCritical
	}
	return alert.SeverityWarning
}

// amIndex holds the objects a webhook's labels may name, read in a few statements for the
// whole batch: name → host, node, rack, power zone (a name held by two objects of one kind
// maps to nothing: it is ignored, as it is not unique).
type amIndex struct {
	hosts map[string]*ent.Host
	nodes map[string]*ent.ComputeNode
	// racks and zones hold every rack and power zone of a name, with where it is: names
	// repeat across floors and datacenters, and the datacenter and floor labels choose.
	racks map[string][]placed
	zones map[string][]placed
}

// placed is a rack or power zone and the names of its datacenter and floor ("" for a
// power zone's floor).
type placed struct {
	id        int
	dc, floor string
}

// pick returns the one of cands in the datacenter and floor the labels name (labels
// datacenter and floor; an absent label matches any), or 0 when none or several are.
func pick(cands []placed, l map[string]string) int {
	id, n := 0, 0
	for _, c := range cands {
		if dc := l["datacenter"]; dc != "" && dc != c.dc {
			continue
		}
		if fl := l["floor"]; fl != "" && c.floor != "" && fl != c.floor {
			continue
		}
		id, n = c.id, n+1
	}
	if n != 1 {
		return 0
	}
	return id
}

// loadAMOpen reads the open alerts the resolved alerts of w close, by fingerprint, with
// the edges amIsCause reads.
func loadAMOpen(ctx context.Context, c *ent.Client, w AMWebhook) (map[string][]*ent.Alert, error) {
	var fps []string
	for _, a := range w.Alerts {
		if a.Status == "resolved" {
			if a.Labels == nil {
				a.Labels = map[string]string{}
			}
			merged := make(map[string]string, len(a.Labels)+len(w.CommonLabels))
			for k, v := range w.CommonLabels {
				merged[k] = v
			}
			for k, v := range a.Labels {
				merged[k] = v
			}
			a.Labels = merged
			fps = append(fps, "alertmanager:"+amFingerprint(a))
		}
	}
	out := map[string][]*ent.Alert{}
	if len(fps) == 0 {
		return out, nil
	}
	als, err := c.Alert.Query().Where(alert.FingerprintIn(fps...), alert.StatusEQ(alert.StatusOpen)).
		WithHost().WithRack(func(q *ent.RackQuery) { q.Select("id") }).WithPowerZone(func(q *ent.PowerZoneQuery) { q.Select("id") }).
		WithSuppresses(func(q *ent.AlertQuery) { q.Select("id") }).Order(ent.Asc(alert.FieldID)).All(ctx)
	if err != nil {
		return nil, err
	}
	for _, a := range als {
		out[a.Fingerprint] = append(out[a.Fingerprint], a)
	}
	return out, nil
}

// amIsCause is isCause of an alert read by loadAMOpen, without a query.
func amIsCause(a *ent.Alert) bool {
	return a.Edges.Rack != nil || a.Edges.PowerZone != nil || len(a.Edges.Suppresses) > 0 || hostIsCause(a.Edges.Host)
}

// loadAMIndex reads the objects the labels of w's alerts name (see Receive).
func loadAMIndex(ctx context.Context, c *ent.Client, w AMWebhook) (*amIndex, error) {
	idx := &amIndex{hosts: map[string]*ent.Host{}, nodes: map[string]*ent.ComputeNode{}, racks: map[string][]placed{}, zones: map[string][]placed{}}
	machines, racks, zones := map[string]bool{}, map[string]bool{}, map[string]bool{}
	label := func(a AMAlert, k string) string {
		if v, ok := a.Labels[k]; ok {
			return v
		}
		return w.CommonLabels[k]
	}
	for _, a := range w.Alerts {
		for _, n := range []string{label(a, "host"), label(a, "node"), label(a, "pdu"), stripPort(label(a, "instance"))} {
			if n != "" {
				machines[n] = true
			}
		}
		if n := label(a, "rack"); n != "" {
			racks[n] = true
		}
		if n := label(a, "power_zone"); n != "" {
			zones[n] = true
		}
	}
	keys := func(m map[string]bool) []string {
		out := make([]string, 0, len(m))
		for k := range m {
			out = append(out, k)
		}
		return out
	}
	if len(machines) > 0 {
		names := keys(machines)
		hs, err := c.Host.Query().Where(host.NameIn(names...)).WithNode(func(q *ent.ComputeNodeQuery) { q.Select("id") }).All(ctx)
		if err != nil {
			return nil, err
		}
		for _, h := range hs {
			if _, dup := idx.hosts[h.Name]; dup {
				idx.hosts[h.Name] = nil
			} else {
				idx.hosts[h.Name] = h
			}
		}
		ns, err := c.ComputeNode.Query().Where(computenode.NameIn(names...)).WithHost().All(ctx)
		if err != nil {
			return nil, err
		}
		for _, n := range ns {
			if _, dup := idx.nodes[n.Name]; dup {
				idx.nodes[n.Name] = nil
			} else {
				idx.nodes[n.Name] = n
			}
		}
	}
	if len(racks) > 0 {
		rs, err := c.Rack.Query().Where(rack.NameIn(keys(racks)...)).
			WithFloor(func(q *ent.FloorQuery) { q.WithDatacenter() }).All(ctx)
		if err != nil {
			return nil, err
		}
		for _, r := range rs {
			p := placed{id: r.ID}
			if f := r.Edges.Floor; f != nil {
				p.floor = f.Name
				if f.Edges.Datacenter != nil {
					p.dc = f.Edges.Datacenter.Name
				}
			}
			idx.racks[r.Name] = append(idx.racks[r.Name], p)
		}
	}
	if len(zones) > 0 {
		zs, err := c.PowerZone.Query().Where(powerzone.NameIn(keys(zones)...)).
			WithDatacenter().All(ctx)
		if err != nil {
			return nil, err
		}
		for _, z := range zs {
			p := placed{id: z.ID}
			if z.Edges.Datacenter != nil {
				p.dc = z.Edges.Datacenter.Name
			}
			idx.zones[z.Name] = append(idx.zones[z.Name], p)
		}
	}
	return idx, nil
}

// locate finds the object the labels name (see Receive): host, node, pdu and instance as
// a host or a node, then rack, then power_zone.
func (idx *amIndex) locate(l map[string]string) amTarget {
	var t amTarget
	for _, n := range []string{l["host"], l["node"], l["pdu"], stripPort(l["instance"])} {
		if n == "" {
			continue
		}
		if h := idx.hosts[n]; h != nil {
			t.name, t.host, t.cause = h.Name, h.ID, hostIsCause(h)
			if h.Edges.Node != nil {
				t.node = h.Edges.Node.ID
			}
			return t
		}
		if nd := idx.nodes[n]; nd != nil {
			t.name, t.node = nd.Name, nd.ID
			if h := nd.Edges.Host; h != nil {
				t.host, t.cause = h.ID, hostIsCause(h)
			}
			return t
		}
	}
	if n := l["rack"]; n != "" {
		if id := pick(idx.racks[n], l); id != 0 {
			t.name, t.rack, t.cause = n, id, true
			return t
		}
	}
	if n := l["power_zone"]; n != "" {
		if id := pick(idx.zones[n], l); id != 0 {
			t.name, t.powerZone, t.cause = n, id, true
			return t
		}
	}
	return t
}

// stripPort drops a :port from an instance label (host:9100, [::1]:9100).
func stripPort(s string) string {
	if h, _, err := net.SplitHostPort(s); err == nil {
		return h
	}
	return s
}

// AlertmanagerHandler serves POST AlertmanagerPath: the body is an AMWebhook, the caller
// authenticated by the server's bearer-token middleware (an API token of an operator; in
// Alertmanager's webhook_config, http_config.authorization.credentials). It answers 200
// with what it did, 400 for a body that is not a version 4 webhook, 401/403 without a
// token allowed to write alerts.
func AlertmanagerHandler(client *ent.Client, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if authz.FromContext(r.Context()) == nil {
			writeJSONError(w, http.StatusUnauthorized, "UNAUTHENTICATED", "a bearer token is required")
			return
		}
		raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxAMBody))
		var tooBig *http.MaxBytesError
		switch {
		case errors.As(err, &tooBig):
			writeJSONError(w, http.StatusRequestEntityTooLarge, CodePayloadTooLarge,
				fmt.Sprintf("the body is over %d bytes: send fewer alerts per webhook (max_alerts in Alertmanager's webhook_config)", MaxAMBody))
			return
		case err != nil:
			writeJSONError(w, http.StatusBadRequest, string(apierr.CodeBadRequest), "reading the body: "+err.Error())
			return
		case !utf8.Valid(raw):
			writeJSONError(w, http.StatusBadRequest, string(apierr.CodeBadRequest), "the body is not UTF-8")
			return
		}
		var body AMWebhook
		if err := json.Unmarshal(raw, &body); err != nil {
			writeJSONError(w, http.StatusBadRequest, string(apierr.CodeBadRequest), "body is not an Alertmanager webhook: "+truncate.String(err.Error(), 200))
			return
		}
		res, err := Receive(r.Context(), client, body)
		if err != nil {
			ae, ok := apierr.As(err)
			var many errTooManyAlerts
			switch {
			case errors.As(err, &many):
				writeJSONError(w, http.StatusRequestEntityTooLarge, CodePayloadTooLarge, many.Error())
			case ok && ae.Code == apierr.CodeForbidden:
				writeJSONError(w, http.StatusForbidden, string(ae.Code), ae.Message)
			case ok:
				writeJSONErrorField(w, http.StatusBadRequest, string(ae.Code), ae.Field, ae.Message)
			default:
				if log != nil {
					log.Error("alertmanager webhook", "err", err)
				}
				writeJSONError(w, http.StatusInternalServerError, "INTERNAL", "could not store the alerts")
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"raised": res.Raised, "repeated": res.Repeated, "resolved": res.Resolved, "alerts": res.Alerts})
	})
}

func writeJSONError(w http.ResponseWriter, status int, code, msg string) {
	writeJSONErrorField(w, status, code, "", msg)
}

// writeJSONErrorField answers {"error", "code", "field"} (field only when not empty).
func writeJSONErrorField(w http.ResponseWriter, status int, code, field, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	body := map[string]any{"error": msg, "code": code}
	if field != "" {
		body["field"] = field
	}
	_ = json.NewEncoder(w).Encode(body)
}
