package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/virtflow/virtflow/internal/app"
	"github.com/virtflow/virtflow/internal/platform/config"
	"github.com/virtflow/virtflow/internal/platform/telemetry"
	"github.com/virtflow/virtflow/internal/testkit/poll"
)

// TestTraceFollowsCreateToTask: a createVirtualMachine sent with a traceparent yields one
// trace holding the HTTP server span, the SQL the mutation ran, the outbox relay's span (a
// child of the request's) and the worker's span of the vm:create task (a child of the
// relay's) with the SQL the handler ran under it.
func TestTraceFollowsCreateToTask(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	cfg := loadConfig(t, []string{"--addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--demo"}, nil)
	srv := startWith(t, cfg, app.Options{Tracing: telemetry.WithProvider(tp)})

	var ref struct {
		VirtualMachines struct {
			Edges []struct {
				Node struct{ Tenant, Region, Flavor struct{ ID string } }
			}
		}
	}
	srv.mustQuery(t, `{ virtualMachines(first: 1) { edges { node { tenant { id } region { id } flavor { id } } } } }`, nil, &ref)
	if len(ref.VirtualMachines.Edges) == 0 {
		t.Fatal("the demo has no VM to copy tenant, region and flavor from")
	}
	vm := ref.VirtualMachines.Edges[0].Node

	traceID := trace.TraceID{0x7e, 0x57, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}
	body, _ := json.Marshal(map[string]any{
		"query": `mutation($in: CreateVirtualMachineInput!) { createVirtualMachine(input: $in) { id } }`,
		"variables": map[string]any{"in": map[string]any{"name": "traced-vm", "tenantID": vm.Tenant.ID,
			"regionID": vm.Region.ID, "flavorID": vm.Flavor.ID}}})
	req, _ := http.NewRequest(http.MethodPost, srv.url("/query"), bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+testAdminToken)
	req.Header.Set("traceparent", "00-"+traceID.String()+"-0102030405060708-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || strings.Contains(string(raw), `"errors"`) {
		t.Fatalf("createVirtualMachine: %d %s", resp.StatusCode, raw)
	}

	inTrace := func() []sdktrace.ReadOnlySpan {
		var out []sdktrace.ReadOnlySpan
		for _, s := range rec.Ended() {
			if s.SpanContext().TraceID() == traceID {
				out = append(out, s)
			}
		}
		return out
	}
	byName := func(spans []sdktrace.ReadOnlySpan, prefix string) []sdktrace.ReadOnlySpan {
		var out []sdktrace.ReadOnlySpan
		for _, s := range spans {
			if strings.HasPrefix(s.Name(), prefix) {
				out = append(out, s)
			}
		}
		return out
	}
	var spans []sdktrace.ReadOnlySpan
	poll.Until(t, 30*time.Second, func() error {
		spans = inTrace()
		if len(byName(spans, "asynq task vm:create")) == 0 {
			names := []string{}
			for _, s := range spans {
				names = append(names, s.Name())
			}
			return fmt.Errorf("no vm:create task span in the trace yet; spans: %v", names)
		}
		return nil
	})
	httpSpans := byName(spans, "POST /query")
	relays := byName(spans, "outbox relay vm:create")
	tasks := byName(spans, "asynq task vm:create")
	if len(httpSpans) != 1 || len(relays) != 1 || len(tasks) != 1 {
		t.Fatalf("spans: %d HTTP, %d relay, %d task; want one each", len(httpSpans), len(relays), len(tasks))
	}
	if relays[0].Parent().SpanID() != httpSpans[0].SpanContext().SpanID() {
		t.Errorf("the relay span's parent is %v, want the request's span %v", relays[0].Parent().SpanID(), httpSpans[0].SpanContext().SpanID())
	}
	if tasks[0].Parent().SpanID() != relays[0].SpanContext().SpanID() {
		t.Errorf("the task span's parent is %v, want the relay's span", tasks[0].Parent().SpanID())
	}
	sqlUnder := func(parent sdktrace.ReadOnlySpan) int {
		n := 0
		for _, s := range byName(spans, "sql.") {
			if s.Parent().SpanID() == parent.SpanContext().SpanID() {
				n++
			}
		}
		return n
	}
	if sqlUnder(httpSpans[0]) == 0 || sqlUnder(tasks[0]) == 0 {
		t.Errorf("SQL spans: %d under the request, %d under the task; want some under each", sqlUnder(httpSpans[0]), sqlUnder(tasks[0]))
	}
	t.Logf("%d spans in the trace of one create", len(spans))
}

// discardSpans is an exporter that drops what it is given: the cost measured is recording
// and batching spans, not shipping them.
type discardSpans struct{}

func (discardSpans) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discardSpans) Shutdown(context.Context) error                             { return nil }

// BenchmarkRequestTracing measures one GraphQL query over HTTP (a page of regions) against the
// embedded server with tracing off (no wrapper installed) and on (otelhttp and otelsql spans,
// batched to an exporter that drops them):
//
//	go test ./internal/app -run XXX -bench RequestTracing -benchtime 3000x
func BenchmarkRequestTracing(b *testing.B) {
	for _, mode := range []string{"off", "on"} {
		b.Run(mode, func(b *testing.B) {
			tr := telemetry.Off()
			if mode == "on" {
				tr = telemetry.WithExporter("bench", "0", discardSpans{})
			}
			cfg, err := config.Load("server", []string{"--addr", "127.0.0.1:0", "--data-dir", b.TempDir()},
				func(k string) string { return map[string]string{"VIRTFLOW_ADMIN_TOKEN": testAdminToken}[k] }, io.Discard)
			if err != nil {
				b.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			ready := make(chan string, 1)
			done := make(chan error, 1)
			go func() {
				done <- app.RunServerWith(ctx, cfg, slog.New(slog.DiscardHandler), app.Options{Tracing: tr,
					Ready: func(a string) { ready <- a }})
			}()
			defer func() { cancel(); <-done; _ = tr.Shutdown(context.Background()) }()
			addr := <-ready
			body := []byte(`{"query":"{ regions(first: 10) { edges { node { id name } } } }"}`)
			do := func() {
				req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/query", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+testAdminToken)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			do()
			// Allocations (server and client share the process) are steadier than time on a
			// busy machine.
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				do()
			}
		})
	}
}
