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

// Reporter is a Checker that tells more than up or down, such as a connection pool's use
// (infra.Database.Report): /readyz shows it under "pools".
type Reporter interface {
	Report() map[string]any
}

// healthz answers 200 while the process serves HTTP at all.
func healthz(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// readyz answers 200 when every named dependency answers within two seconds, 503 otherwise,
// with each dependency's state in the body, and the report of each Reporter (a saturated
// connection pool says "saturated": true there; it is not ready once a ping waits out the
// two seconds for a connection).
func readyz(checks map[string]Checker) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		status, code := map[string]string{}, http.StatusOK
		pools := map[string]any{}
		for name, c := range checks {
			if r, ok := c.(Reporter); ok {
				pools[name] = r.Report()
			}
			if err := c.Ping(ctx); err != nil {
				status[name] = "unavailable"
				code = http.StatusServiceUnavailable
				continue
			}
			status[name] = "ok"
		}
		body := map[string]any{"ready": code == http.StatusOK, "checks": status}
		if len(pools) > 0 {
			body["pools"] = pools
		}
		writeJSON(w, code, body)
	}
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
