package alerting

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/virtflow/virtflow/apierr"
	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/alert"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/host"
	"github.com/virtflow/virtflow/ent/powerzone"
	"github.com/virtflow/virtflow/ent/rack"
	"github.com/virtflow/virtflow/internal/dbtx"
	"github.com/virtflow/virtflow/internal/truncate"
)

// AlertmanagerPath is where the server receives Prometheus Alertmanager's webhooks.
const AlertmanagerPath = "/hooks/alertmanager"

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
}

// Receive applies an Alertmanager webhook in one transaction: a firing alert is raised (or
// repeated) with fingerprint alertmanager:<Alertmanager's fingerprint>, a resolved one
// resolves it. Labels name the object: host, node and instance (without its port) are
// looked up as a host or a node name, pdu as a host, rack as a rack and power_zone as a
// power zone (a name that is not unique is ignored); severity fatal/page, critical and
// anything else map to FATAL, CRITICAL and WARNING; the summary (or description)
// annotation is the message. The viewer of ctx must be allowed to write alerts.
func Receive(ctx context.Context, client *ent.Client, w AMWebhook) (AMResult, error) {
	var res AMResult
	if v := authz.FromContext(ctx); v == nil || !v.Can("Alert", authz.ActWrite) {
		return res, apierr.Forbidden("only operators may post Alertmanager alerts")
	}
	if w.Version != "4" {
		return res, apierr.Validation("version", "Alertmanager webhook version %q is not supported (want \"4\")", w.Version)
	}
	_, err := dbtx.Run(ctx, client, func(c *ent.Client) error {
		res = AMResult{}
		sys := system(ctx)
		sup, err := LoadSuppressors(sys, c)
		if err != nil {
			return err
		}
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
				n, id, err := Resolve(ctx, c, fp, "alertmanager", time.Now())
				if err != nil {
					return err
				}
				res.Resolved += n
				res.Alerts = append(res.Alerts, id)
				if n > 0 {
					if _, err := Route(sys, c, id, true); err != nil {
						return err
					}
					if err := AfterChange(sys, c, id); err != nil {
						return err
					}
				}
				continue
			}
			if a.Status != "firing" {
				return apierr.Validation(fmt.Sprintf("alerts[%d].status", i), "want firing or resolved, got %q", a.Status)
			}
			t, err := amLocate(sys, c, a.Labels)
			if err != nil {
				return err
			}
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
			res.Alerts = append(res.Alerts, al.ID)
			if !created {
				res.Repeated++
				continue
			}
			res.Raised++
			if err := AfterChange(sys, c, al.ID); err != nil {
				return err
			}
			if _, err := Route(sys, c, al.ID, false); err != nil {
				return err
			}
			if sup, err = LoadSuppressors(sys, c); err != nil {
				return err
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

// amLocate finds the object the labels name (see Receive).
func amLocate(ctx context.Context, c *ent.Client, l map[string]string) (amTarget, error) {
	var t amTarget
	names := []string{l["host"], l["node"], l["pdu"], stripPort(l["instance"])}
	for _, n := range names {
		if n == "" {
			continue
		}
		if h, err := c.Host.Query().Where(host.Name(n)).WithNode(func(q *ent.ComputeNodeQuery) { q.Select("id") }).Only(ctx); err == nil {
			t.name, t.host = h.Name, h.ID
			if h.Edges.Node != nil {
				t.node = h.Edges.Node.ID
			}
			return t, nil
		} else if !ent.IsNotFound(err) && !ent.IsNotSingular(err) {
			return t, err
		}
		if nd, err := c.ComputeNode.Query().Where(computenode.Name(n)).WithHost(func(q *ent.HostQuery) { q.Select("id") }).Only(ctx); err == nil {
			t.name, t.node = nd.Name, nd.ID
			if nd.Edges.Host != nil {
				t.host = nd.Edges.Host.ID
			}
			return t, nil
		} else if !ent.IsNotFound(err) && !ent.IsNotSingular(err) {
			return t, err
		}
	}
	if n := l["rack"]; n != "" {
		if id, err := c.Rack.Query().Where(rack.Name(n)).OnlyID(ctx); err == nil {
			t.name, t.rack = n, id
			return t, nil
		} else if !ent.IsNotFound(err) && !ent.IsNotSingular(err) {
			return t, err
		}
	}
	if n := l["power_zone"]; n != "" {
		if id, err := c.PowerZone.Query().Where(powerzone.Name(n)).OnlyID(ctx); err == nil {
			t.name, t.powerZone = n, id
			return t, nil
		} else if !ent.IsNotFound(err) && !ent.IsNotSingular(err) {
			return t, err
		}
	}
	return t, nil
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
		var body AMWebhook
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4<<20))
		if err := dec.Decode(&body); err != nil {
			writeJSONError(w, http.StatusBadRequest, "BAD_REQUEST", "body is not an Alertmanager webhook: "+err.Error())
			return
		}
		res, err := Receive(r.Context(), client, body)
		if err != nil {
			ae, ok := apierr.As(err)
			switch {
			case ok && ae.Code == apierr.CodeForbidden:
				writeJSONError(w, http.StatusForbidden, string(ae.Code), ae.Message)
			case ok:
				writeJSONError(w, http.StatusBadRequest, string(ae.Code), ae.Message)
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
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": msg, "code": code})
}
