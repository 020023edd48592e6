package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/virtflow/virtflow/gateway/httpapi"
)

func TestRealIP(t *testing.T) {
	trusted, err := httpapi.ParseTrustedProxies("10.0.0.0/8, 192.0.2.7")
	if err != nil {
		t.Fatal(err)
	}
	var got string
	h := httpapi.RealIP(trusted, http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { got = r.RemoteAddr }))
	for _, c := range []struct {
		name, peer string
		xff        []string
		want       string
	}{
		{"through the load balancer", "10.1.2.3:5000", []string{"203.0.113.9"}, "203.0.113.9:0"},
		{"two trusted hops", "10.1.2.3:5000", []string{"203.0.113.9, 192.0.2.7"}, "203.0.113.9:0"},
		{"a client's forged left part is ignored", "10.1.2.3:5000", []string{"1.1.1.1, 203.0.113.9"}, "203.0.113.9:0"},
		{"several headers", "10.1.2.3:5000", []string{"1.1.1.1", "203.0.113.9"}, "203.0.113.9:0"},
		{"an untrusted peer's header is ignored", "198.51.100.1:5000", []string{"203.0.113.9"}, "198.51.100.1:5000"},
		{"no header", "10.1.2.3:5000", nil, "10.1.2.3:5000"},
		{"garbage stops the walk", "10.1.2.3:5000", []string{"203.0.113.9, nonsense"}, "10.1.2.3:5000"},
		{"IPv6 client", "10.1.2.3:5000", []string{"2001:db8::1"}, "[2001:db8::1]:0"},
	} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = c.peer
		for _, v := range c.xff {
			r.Header.Add("X-Forwarded-For", v)
		}
		h.ServeHTTP(httptest.NewRecorder(), r)
		if got != c.want {
			t.Errorf("%s: RemoteAddr %q, want %q", c.name, got, c.want)
		}
	}
	if _, err := httpapi.ParseTrustedProxies("10.0.0.0/33"); err == nil {
		t.Error("a bad prefix was accepted")
	}
}
