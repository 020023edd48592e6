package vmnet

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
)

func TestMetadataIdentifiesByAddress(t *testing.T) {
	var got *http.Request
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r
		w.WriteHeader(http.StatusNoContent)
	}))
	defer api.Close()
	vm := netip.MustParseAddr("172.16.0.10")
	h := NewMetadataHandler(MetadataConfig{ReadyURL: api.URL + ReadyPath, Lookup: func(a netip.Addr) (Instance, bool) {
		return Instance{VMID: "42", Name: "web-1", Node: "node-a", Addresses: []netip.Addr{vm}}, a == vm
	}})
	do := func(method, path, from string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, path, strings.NewReader("hostname=web-1"))
		r.RemoteAddr = from + ":40000"
		r.Header.Set("Authorization", "Bearer tok")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	w := do("GET", "/latest/meta-data", "172.16.0.10")
	var inst Instance
	if w.Code != 200 || json.Unmarshal(w.Body.Bytes(), &inst) != nil || inst.VMID != "42" {
		t.Fatalf("meta-data: %d %s", w.Code, w.Body)
	}
	if w := do("GET", "/latest/meta-data/local-ipv4", "172.16.0.10"); strings.TrimSpace(w.Body.String()) != "172.16.0.10" {
		t.Fatalf("local-ipv4: %q", w.Body)
	}
	if w := do("GET", "/latest/meta-data", "172.16.0.99"); w.Code != http.StatusForbidden {
		t.Fatalf("a stranger got %d", w.Code)
	}
	if w := do("POST", ReadyPath, "172.16.0.99"); w.Code != http.StatusForbidden || got != nil {
		t.Fatalf("a stranger's readiness call: %d, passed on: %v", w.Code, got != nil)
	}
	if w := do("POST", ReadyPath, "172.16.0.10"); w.Code != http.StatusNoContent || got == nil || got.Header.Get("Authorization") != "Bearer tok" {
		t.Fatalf("readiness call: %d %v", w.Code, got)
	}
	b, _ := io.ReadAll(got.Body)
	_ = b
}
