package frontend

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestHandler(t *testing.T) {
	h := Handler()
	get := func(method, p string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(method, p, nil))
		return rec
	}
	for _, p := range []string{"/", "/racks/42", "/vms/new", "/index.html"} {
		rec := get(http.MethodGet, p)
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `<div id="root">`) {
			t.Errorf("GET %s = %d, want the app's index.html", p, rec.Code)
		}
		if cc := rec.Header().Get("Cache-Control"); cc != "no-cache" {
			t.Errorf("GET %s Cache-Control = %q, want no-cache", p, cc)
		}
	}
	if rec := get(http.MethodGet, "/missing.js"); rec.Code != http.StatusNotFound {
		t.Errorf("GET /missing.js = %d, want 404", rec.Code)
	}
	if rec := get(http.MethodPost, "/racks/1"); rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST /racks/1 = %d, want 405", rec.Code)
	}
	entries, err := dist.ReadDir("dist/assets")
	if err != nil || len(entries) == 0 {
		t.Fatalf("dist/assets is empty (%v): run make frontend", err)
	}
	rec := get(http.MethodGet, "/assets/"+entries[0].Name())
	if rec.Code != http.StatusOK || !strings.Contains(rec.Header().Get("Cache-Control"), "immutable") {
		t.Errorf("GET an asset = %d %q, want 200 and an immutable cache", rec.Code, rec.Header().Get("Cache-Control"))
	}
}
