package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"time"
)

// Checker is a dependency /readyz checks: the database, Redis.
type Checker interface {
	Ping(ctx context.Context) error
}

// healthz answers 200 while the process serves HTTP at all.
func healthz(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// readyz answers 200 when every named dependency answers within two seconds, 503 otherwise,
// with each dependency's state in the body.
func readyz(checks map[string]Checker) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		status, code := map[string]string{}, http.StatusOK
		for name, c := range checks {
			if err := c.Ping(ctx); err != nil {
				status[name] = "unavailable"
				code = http.StatusServiceUnavailable
				continue
			}
			status[name] = "ok"
		}
		writeJSON(w, code, map[string]any{"ready": code == http.StatusOK, "checks": status})
	}
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
