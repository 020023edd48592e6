// Package telemetry sets up a process's OpenTelemetry tracing: an SDK TracerProvider that
// exports spans by OTLP when the standard OTEL_EXPORTER_OTLP_ENDPOINT (or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) environment variable is set, and otel's no-op provider
// otherwise, so that tracing off costs no more than calls into a no-op tracer.
//
// Nothing here is global: internal/app builds one Tracing per process and passes its
// Provider to the HTTP handler, the SQL driver, the outbox relay, the worker and the node
// agent. Context crosses processes in W3C trace-context form (Propagator): HTTP headers, the
// outbox row's headers, Asynq task headers.
package telemetry

import (
	"context"
	"fmt"
	"net/http"
	"os"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Propagator is the format trace context travels in between VirtFlow's processes: W3C
// traceparent/tracestate.
func Propagator() propagation.TextMapPropagator { return propagation.TraceContext{} }

// Tracing is a process's tracer provider and how to flush it at exit.
type Tracing struct {
	// Provider makes the process's tracers: otel's no-op provider when tracing is off.
	Provider trace.TracerProvider
	shutdown func(context.Context) error
}

// Enabled reports whether spans are recorded and exported (the provider is not a no-op).
func (t *Tracing) Enabled() bool {
	_, noopProvider := t.Provider.(noop.TracerProvider)
	return !noopProvider
}

// Shutdown flushes the spans not yet exported and stops the exporter.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if t.shutdown == nil {
		return nil
	}
	return t.shutdown(ctx)
}

// Off is tracing turned off: a no-op provider.
func Off() *Tracing { return &Tracing{Provider: noop.NewTracerProvider()} }

// Configured reports whether the environment asks for OTLP export.
func Configured() bool {
	return os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// FromEnv returns tracing as the standard OpenTelemetry environment asks: off (Off) unless
// OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set, else an OTLP/HTTP
// exporter (the exporter reads the other OTEL_EXPORTER_OTLP_* variables itself: headers,
// timeout, insecure) behind a batching SDK provider. The service is named service unless
// OTEL_SERVICE_NAME says otherwise; OTEL_TRACES_SAMPLER and its argument are honoured by the
// SDK (parent-based always-on by default).
func FromEnv(ctx context.Context, service, version string) (*Tracing, error) {
	if !Configured() {
		return Off(), nil
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("telemetry: OTLP exporter: %w", err)
	}
	return WithExporter(service, version, exp), nil
}

// WithExporter is tracing through an SDK provider that batches spans to exp (tests pass an
// in-memory exporter, or use NewProvider with a SpanRecorder).
func WithExporter(service, version string, exp sdktrace.SpanExporter) *Tracing {
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(Resource(service, version)))
	return &Tracing{Provider: tp, shutdown: tp.Shutdown}
}

// WithProvider wraps an SDK provider built elsewhere (tests: one with a SpanRecorder).
func WithProvider(tp *sdktrace.TracerProvider) *Tracing {
	return &Tracing{Provider: tp, shutdown: tp.Shutdown}
}

// Resource describes the process in its spans: service name and version, and whatever
// OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME add.
func Resource(service, version string) *resource.Resource {
	base := resource.NewWithAttributes(semconv.SchemaURL, semconv.ServiceName(service), semconv.ServiceVersion(version))
	r, err := resource.Merge(base, resource.Environment())
	if err != nil {
		return base
	}
	return r
}

// HTTPHandler traces the requests h serves (otelhttp: one server span per request, continuing
// the caller's traceparent). With tracing off it returns h itself: no cost at all.
func HTTPHandler(t *Tracing, h http.Handler) http.Handler {
	if !t.Enabled() {
		return h
	}
	return otelhttp.NewHandler(h, "http",
		otelhttp.WithTracerProvider(t.Provider),
		otelhttp.WithPropagators(Propagator()),
		otelhttp.WithMeterProvider(metricnoop.NewMeterProvider()),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return r.Method + " " + r.URL.Path }))
}
