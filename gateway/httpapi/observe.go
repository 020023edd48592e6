package httpapi

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// httpMetrics are the Prometheus series of the HTTP surface.
type httpMetrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

func newHTTPMetrics(reg prometheus.Registerer) *httpMetrics {
	m := &httpMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "virtflow_http_requests_total", Help: "HTTP requests by route, method and status code.",
		}, []string{"route", "method", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "virtflow_http_request_duration_seconds", Help: "HTTP request latency by route.",
			Buckets: prometheus.DefBuckets,
		}, []string{"route"}),
	}
	reg.MustRegister(m.requests, m.duration)
	return m
}

// statusRecorder remembers the status code written; it keeps websocket hijacking working.
type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.code == 0 {
		s.code = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.code == 0 {
		s.code = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

func (s *statusRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	h, ok := s.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, errors.New("response writer cannot be hijacked")
	}
	if s.code == 0 {
		s.code = http.StatusSwitchingProtocols
	}
	return h.Hijack()
}

func (s *statusRecorder) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// observe logs each request and counts it under route.
func observe(route string, log *slog.Logger, m *httpMetrics, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		elapsed := time.Since(start)
		if rec.code == 0 {
			rec.code = http.StatusOK
		}
		m.requests.WithLabelValues(route, r.Method, strconv.Itoa(rec.code)).Inc()
		m.duration.WithLabelValues(route).Observe(elapsed.Seconds())
		// Requests log at debug: at info a fleet's heartbeats alone would drown the log.
		// Server errors stay visible.
		level := slog.LevelDebug
		if rec.code >= 500 {
			level = slog.LevelError
		}
		log.Log(r.Context(), level, "http request", "method", r.Method, "path", r.URL.Path, "status", rec.code,
			"duration_ms", elapsed.Milliseconds(), "request_id", RequestID(r.Context()), "remote", r.RemoteAddr)
	})
}

// limitBody refuses request bodies larger than max bytes with 413, whether or not the client
// announced the length: the body is read (at most max+1 bytes) before the handler runs.
func limitBody(max int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > max {
			tooLarge(w)
			return
		}
		if r.Body != nil && r.Body != http.NoBody {
			body, err := io.ReadAll(io.LimitReader(r.Body, max+1))
			if err != nil {
				http.Error(w, `{"errors":[{"message":"could not read the request body","extensions":{"code":"VALIDATION"}}]}`, http.StatusBadRequest)
				return
			}
			if int64(len(body)) > max {
				tooLarge(w)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		next.ServeHTTP(w, r)
	})
}

func tooLarge(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusRequestEntityTooLarge)
	_, _ = io.WriteString(w, `{"errors":[{"message":"request body too large: the limit is 1 MiB","extensions":{"code":"VALIDATION"}}]}`)
}
