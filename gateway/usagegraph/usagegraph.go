// Package usagegraph serves the dashboard's usage graphs and Prometheus's discovery of the
// node agents.
//
// The agents expose per-VM and per-node usage in Prometheus format (nodeagent's
// MetricsHandler, --metrics-addr); [SDHandler] lists them for Prometheus's HTTP service
// discovery (http_sd_configs, deploy/prometheus/prometheus.yml), and [Service] answers
// GET /api/usage?vm=<id>|node=<id>&range=hour|day|week|month with the CPU, memory, disk
// and network series of one VM or node, read from Prometheus's query_range.
//
// The viewer never sends PromQL: the server reads the VM or node with the viewer's
// permissions (a VM of another tenant, or a node for a tenant, is not found) and builds
// each query from a fixed template and that record's integer id, so a tenant only ever gets
// its own VMs' series. Prometheus (VIRTFLOW_PROMETHEUS_URL) is reached through the egress
// policy like every outbound call: the operator allows its address.
package usagegraph

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/virtualmachine"
)

// Range is a graph's time span and resolution.
type Range struct {
	Name string
	Span time.Duration
	Step time.Duration
}

// Ranges are the spans the dashboard offers, each about 240 points.
var Ranges = map[string]Range{
	"hour":  {"hour", time.Hour, 15 * time.Second},
	"day":   {"day", 24 * time.Hour, 5 * time.Minute},
	"week":  {"week", 7 * 24 * time.Hour, 30 * time.Minute},
	"month": {"month", 30 * 24 * time.Hour, 2 * time.Hour},
}

// Series is one graph's line.
type Series struct {
	// Name is cpu, memory, disk_read, disk_write, net_rx or net_tx.
	Name string `json:"name"`
	// Unit is cores, bytes or bytes/s.
	Unit   string       `json:"unit"`
	Points [][2]float64 `json:"points"` // [unix seconds, value]
}

// Graph is the answer of GET /api/usage.
type Graph struct {
	Kind   string   `json:"kind"` // vm or node
	ID     int      `json:"id"`
	Range  string   `json:"range"`
	Step   float64  `json:"step"` // seconds
	Series []Series `json:"series"`
}

// query is a series' PromQL template; %[1]s is the label matcher (vm_id="12") and %[2]s the
// rate window.
type query struct {
	name, unit, expr string
}

var queries = []query{
	{"cpu", "cores", `sum(rate(virtflow_vm_cpu_seconds_total{%[1]s}[%[2]s]))`},
	{"memory", "bytes", `sum(virtflow_vm_memory_bytes{%[1]s})`},
	{"disk_read", "bytes/s", `sum(rate(virtflow_vm_disk_read_bytes_total{%[1]s}[%[2]s]))`},
	{"disk_write", "bytes/s", `sum(rate(virtflow_vm_disk_write_bytes_total{%[1]s}[%[2]s]))`},
	{"net_rx", "bytes/s", `sum(rate(virtflow_vm_network_receive_bytes_total{%[1]s}[%[2]s]))`},
	{"net_tx", "bytes/s", `sum(rate(virtflow_vm_network_transmit_bytes_total{%[1]s}[%[2]s]))`},
}

// Service answers graph requests.
type Service struct {
	Client *ent.Client
	// PrometheusURL is Prometheus's base URL; empty answers UNAVAILABLE.
	PrometheusURL string
	// HTTP reaches Prometheus (the egress policy's client).
	HTTP *http.Client
	Log  *slog.Logger
	Now  func() time.Time
}

// Error is a refusal with the API's error code.
type Error struct {
	Code, Field, Message string
	Status               int
}

func (e *Error) Error() string { return e.Message }

// Graph returns the series of VM vmID (or node nodeID, when vmID is 0) over rng, for the
// viewer of ctx.
func (s *Service) Graph(ctx context.Context, vmID, nodeID int, rng string) (*Graph, error) {
	r, ok := Ranges[rng]
	if !ok {
		return nil, &Error{Code: "VALIDATION", Field: "range", Message: "range must be hour, day, week or month", Status: http.StatusBadRequest}
	}
	g := &Graph{Range: r.Name, Step: r.Step.Seconds()}
	var matcher string
	switch {
	case vmID > 0 && nodeID == 0:
		// The viewer's read scope decides: another tenant's VM is not found.
		ok, err := s.Client.VirtualMachine.Query().Where(virtualmachine.ID(vmID)).Exist(ctx)
		if err != nil && !refused(err) {
			return nil, err
		}
		if !ok {
			return nil, &Error{Code: "NOT_FOUND", Field: "vm", Message: "virtual machine not found", Status: http.StatusNotFound}
		}
		g.Kind, g.ID, matcher = "vm", vmID, `vm_id="`+strconv.Itoa(vmID)+`"`
	case nodeID > 0 && vmID == 0:
		// Tenants may not read nodes at all: the policy's refusal reads as not found too.
		ok, err := s.Client.ComputeNode.Query().Where(computenode.ID(nodeID)).Exist(ctx)
		if err != nil && !refused(err) {
			return nil, err
		}
		if !ok {
			return nil, &Error{Code: "NOT_FOUND", Field: "node", Message: "compute node not found", Status: http.StatusNotFound}
		}
		g.Kind, g.ID, matcher = "node", nodeID, `node="`+strconv.Itoa(nodeID)+`"`
	default:
		return nil, &Error{Code: "VALIDATION", Field: "vm", Message: "give one of vm or node: a VM's or a compute node's id", Status: http.StatusBadRequest}
	}
	if s.PrometheusURL == "" {
		return nil, &Error{Code: "UNAVAILABLE", Message: "no Prometheus is configured (VIRTFLOW_PROMETHEUS_URL)", Status: http.StatusServiceUnavailable}
	}
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	end := now().Truncate(r.Step)
	start := end.Add(-r.Span)
	window := promDuration(max(4*r.Step, time.Minute))
	for _, q := range queries {
		pts, err := s.queryRange(ctx, fmt.Sprintf(q.expr, matcher, window), start, end, r.Step)
		if err != nil {
			return nil, err
		}
		g.Series = append(g.Series, Series{Name: q.name, Unit: q.unit, Points: pts})
	}
	return g, nil
}

// refused reports whether err is the read policy refusing the type (FORBIDDEN): to the
// viewer the record is then not found, like a record out of their scope.
func refused(err error) bool {
	e, ok := apierr.As(err)
	return ok && e.Code == apierr.CodeForbidden
}

// promDuration writes d as a PromQL duration in seconds.
func promDuration(d time.Duration) string { return strconv.Itoa(int(d.Seconds())) + "s" }

// queryRange runs one query_range and returns its single series' points (none when the
// result is empty).
func (s *Service) queryRange(ctx context.Context, expr string, start, end time.Time, step time.Duration) ([][2]float64, error) {
	form := url.Values{"query": {expr}, "start": {strconv.FormatInt(start.Unix(), 10)},
		"end": {strconv.FormatInt(end.Unix(), 10)}, "step": {promDuration(step)}}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(s.PrometheusURL, "/")+"/api/v1/query_range",
		strings.NewReader(form.Encode()))
	if err != nil {
		return nil, fmt.Errorf("prometheus query: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := s.HTTP.Do(req)
	if err != nil {
		return nil, &Error{Code: "UNAVAILABLE", Message: "Prometheus cannot be reached: " + err.Error(), Status: http.StatusBadGateway}
	}
	defer resp.Body.Close()
	var out struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []struct {
				Values [][2]any `json:"values"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 8<<20)).Decode(&out); err != nil {
		return nil, &Error{Code: "UNAVAILABLE", Message: fmt.Sprintf("Prometheus answered %s with no JSON", resp.Status), Status: http.StatusBadGateway}
	}
	if out.Status != "success" {
		return nil, &Error{Code: "UNAVAILABLE", Message: "Prometheus: " + out.Error, Status: http.StatusBadGateway}
	}
	pts := [][2]float64{}
	for _, r := range out.Data.Result {
		for _, v := range r.Values {
			t, _ := v[0].(float64)
			str, _ := v[1].(string)
			f, err := strconv.ParseFloat(str, 64)
			if err != nil {
				continue
			}
			pts = append(pts, [2]float64{t, f})
		}
	}
	return pts, nil
}

// Handler serves GET /api/usage behind the identity middleware.
func (s *Service) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		if authz.FromContext(ctx) == nil {
			writeError(w, &Error{Code: "UNAUTHENTICATED", Message: "sign in: send Authorization: Bearer <token>", Status: http.StatusUnauthorized})
			return
		}
		q := r.URL.Query()
		id := func(name string) (int, bool) {
			v := q.Get(name)
			if v == "" {
				return 0, true
			}
			n, err := strconv.Atoi(v)
			return n, err == nil && n > 0
		}
		vm, ok1 := id("vm")
		node, ok2 := id("node")
		if !ok1 || !ok2 {
			writeError(w, &Error{Code: "VALIDATION", Field: "vm", Message: "vm and node are positive integer ids", Status: http.StatusBadRequest})
			return
		}
		rng := q.Get("range")
		if rng == "" {
			rng = "hour"
		}
		g, err := s.Graph(ctx, vm, node, rng)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				if s.Log != nil {
					s.Log.ErrorContext(ctx, "usage graph", "err", err)
				}
				e = &Error{Code: "INTERNAL", Message: "internal error", Status: http.StatusInternalServerError}
			}
			writeError(w, e)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "private, no-store")
		_ = json.NewEncoder(w).Encode(g)
	})
}

// writeError writes e in the GraphQL error shape the API uses everywhere.
func writeError(w http.ResponseWriter, e *Error) {
	ext := map[string]any{"code": e.Code}
	if e.Field != "" {
		ext["field"] = e.Field
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.Status)
	_ = json.NewEncoder(w).Encode(map[string]any{"errors": []any{map[string]any{"message": e.Message, "extensions": ext}}})
}

// Target is an agent's metrics endpoint (console.Broker knows them: agents tell their
// --metrics-addr on their control connection).
type Target struct {
	Node int
	Addr string // host:port
}

// SDHandler serves Prometheus's HTTP service discovery (GET /api/prometheus/targets) behind
// the identity middleware: one target group per agent, labelled with its node. Only a
// platform role that reads compute nodes (admin, operator, viewer) gets it.
func SDHandler(targets func() []Target) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v := authz.FromContext(r.Context())
		if v == nil {
			writeError(w, &Error{Code: "UNAUTHENTICATED", Message: "send Authorization: Bearer <token> (prometheus.yml: authorization.credentials)", Status: http.StatusUnauthorized})
			return
		}
		if !v.IsSystem() && !v.Can("ComputeNode", authz.ActRead) {
			writeError(w, &Error{Code: "FORBIDDEN", Message: "service discovery needs a platform role that reads compute nodes", Status: http.StatusForbidden})
			return
		}
		type group struct {
			Targets []string          `json:"targets"`
			Labels  map[string]string `json:"labels"`
		}
		out := []group{}
		for _, t := range targets() {
			out = append(out, group{Targets: []string{t.Addr}, Labels: map[string]string{"__meta_virtflow_node": strconv.Itoa(t.Node)}})
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	})
}
