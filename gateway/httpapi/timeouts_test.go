package httpapi_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/virtflow/virtflow/gateway/httpapi"
)

// TestBodyDeadlineLiftedAfterBody: the body deadline bounds the body only: a handler that
// works longer than it after reading the whole body is neither cut nor cancelled.
func TestBodyDeadlineLiftedAfterBody(t *testing.T) {
	srv := httptest.NewServer(httpapi.BodyDeadline(200*time.Millisecond, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		time.Sleep(600 * time.Millisecond) // a slow mutation
		if err := r.Context().Err(); err != nil {
			http.Error(w, "cancelled: "+err.Error(), http.StatusInternalServerError)
			return
		}
		_, _ = io.WriteString(w, "done")
	})))
	defer srv.Close()
	for range 2 { // twice on one keep-alive connection
		resp, err := http.Post(srv.URL, "application/json", strings.NewReader(`{"query":"{ x }"}`))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || string(body) != "done" {
			t.Fatalf("slow handler after a quick body: %s %s", resp.Status, body)
		}
	}
}
