package egress_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/domain/egress"
)

// TestCheckURL: every spelling of a denied address is refused when the URL is stored;
// public addresses, host names and allowed ranges pass.
func TestCheckURL(t *testing.T) {
	def := egress.MustParse("")
	allow := egress.MustParse("10.0.0.0/8, 127.0.0.1, images.internal,*.corp.example")
	for _, tc := range []struct {
		url        string
		def, allow bool // allowed by the default policy, by the allow list
	}{
		{"https://images.example.com/debian.qcow2", true, true},
		{"http://93.184.215.14/x", true, true},
		{"http://[2606:4700::1111]/x", true, true},
		{"http://127.0.0.1:8080/", false, true},
		{"http://127.0.0.2/", false, false},
		{"http://localhost./", true, true}, // a name: judged when dialled
		{"http://2130706433/", false, true},
		{"http://0x7f000001/", false, true},
		{"http://0x7f.1/", false, true},
		{"http://0177.0.0.1/", false, true},
		{"http://127.1/", false, true},
		{"http://127.0.1/", false, true},
		{"http://017700000001/", false, true},
		{"http://[::ffff:127.0.0.1]/", false, true},
		{"http://[::ffff:7f00:1]/", false, true},
		{"http://[::1]/", false, false},
		{"http://[::]/", false, false},
		{"http://0.0.0.0/", false, false},
		{"http://0/", false, false},
		{"http://169.254.169.254/latest/meta-data/", false, false},
		{"http://[fe80::1%25eth0]/", false, false},
		{"http://[fd00::1]/", false, false},
		{"http://[64:ff9b::a9fe:a9fe]/", false, false}, // NAT64 of 169.254.169.254
		{"http://[2002:7f00:1::]/", false, false},      // 6to4 of 127.0.0.1
		{"http://10.1.2.3/", false, true},
		{"http://172.16.0.1/", false, false},
		{"http://192.168.1.1/", false, false},
		{"http://100.64.0.1/", false, false},
		{"http://224.0.0.1/", false, false},
		{"http://255.255.255.255/", false, false},
		{"http://256.1.1.1/", false, false},
		{"http://1.2.3.4.5/", false, false},
		{"http://images.internal/x", true, true},
		{"http://a.corp.example/x", true, true},
		{"ftp://images.example.com/x", false, false},
		{"file:///etc/passwd", false, false},
		{"http:///nohost", false, false},
		{"http://user:pw@images.example.com/", false, false},
		{"http://images.example.com:99999/", false, false},
	} {
		t.Run(tc.url, func(t *testing.T) {
			if err := def.CheckURL(tc.url); (err == nil) != tc.def {
				t.Errorf("default policy: %v, want allowed=%v", err, tc.def)
			}
			if err := allow.CheckURL(tc.url); (err == nil) != tc.allow {
				t.Errorf("allow list: %v, want allowed=%v", err, tc.allow)
			}
		})
	}
}

// TestValidateNamesField: a refused URL is VALIDATION naming the field.
func TestValidateNamesField(t *testing.T) {
	err := egress.MustParse("").Validate("hookURL", "http://0x7f.1/")
	ae, ok := apierr.As(err)
	if !ok || ae.Code != apierr.CodeValidation || ae.Field != "hookURL" || !strings.Contains(ae.Message, "loopback") {
		t.Fatalf("got %#v", err)
	}
}

// TestParseRefusesGarbage: the operator's list is checked when read.
func TestParseRefusesGarbage(t *testing.T) {
	for _, s := range []string{"10.0.0.0/33", "not a host!", "http://x"} {
		if _, err := egress.Parse(s); err == nil {
			t.Errorf("Parse(%q) accepted", s)
		}
	}
}

// TestDialTimeCheck: a name that resolves to a denied address is refused when dialled,
// with ErrDenied, and nothing reaches the server; the same name allowed by the list, or
// its address allowed, connects.
func TestDialTimeCheck(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	rebind := func(context.Context, string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	url := "http://rebind.test:" + port + "/"
	for _, tc := range []struct {
		name  string
		allow string
		ok    bool
	}{
		{"default", "", false},
		{"address allowed", "127.0.0.0/8", true},
		{"name allowed", "rebind.test", false}, // an allowed name resolves for real: rebind.test does not exist
		{"other name allowed", "other.test", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := hits.Load()
			p := egress.MustParse(tc.allow).WithLookup(rebind)
			if err := p.CheckURL(url); err != nil {
				t.Fatalf("a host name is judged when dialled, not stored: %v", err)
			}
			resp, err := p.Client(5 * time.Second).Get(url)
			if err == nil {
				resp.Body.Close()
			}
			if (err == nil) != tc.ok {
				t.Fatalf("GET: %v, want ok=%v", err, tc.ok)
			}
			if !tc.ok && tc.allow == "" && !errors.Is(err, egress.ErrDenied) {
				t.Fatalf("GET: %v, want ErrDenied", err)
			}
			if !tc.ok && hits.Load() != before {
				t.Fatal("a refused request reached the server")
			}
		})
	}
}

// TestRedirects: a redirect to a denied address is not followed, a redirect to another
// host drops the signature header, and redirects stop after MaxRedirects.
func TestRedirects(t *testing.T) {
	var internalHits atomic.Int32
	internal := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { internalHits.Add(1) }))
	t.Cleanup(internal.Close)
	var gotSig atomic.Value
	gotSig.Store("")
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotSig.Store(r.Header.Get("X-Sig"))
	}))
	t.Cleanup(other.Close)
	hops := 0
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/internal":
			http.Redirect(w, r, strings.Replace(internal.URL, "127.0.0.1", "[::ffff:127.0.0.1]", 1)+"/secret", http.StatusFound)
		case "/other":
			// Another host name for the same machine: "localhost" is allowed below.
			http.Redirect(w, r, strings.Replace(other.URL, "127.0.0.1", "localhost", 1), http.StatusTemporaryRedirect)
		case "/loop":
			hops++
			http.Redirect(w, r, "/loop", http.StatusFound)
		}
	}))
	t.Cleanup(front.Close)
	// The front and the other server are reached by the allowed name localhost; the
	// internal one only by a literal loopback address, which the policy denies.
	p := egress.MustParse("localhost").WithLookup(func(context.Context, string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	})
	c := p.Client(5*time.Second, "X-Sig")
	frontURL := strings.Replace(front.URL, "127.0.0.1", "localhost", 1)

	_, err := c.Get(frontURL + "/internal")
	if !errors.Is(err, egress.ErrDenied) || internalHits.Load() != 0 {
		t.Fatalf("redirect to loopback: %v, %d hits, want ErrDenied and none", err, internalHits.Load())
	}
	req, _ := http.NewRequest(http.MethodPost, frontURL+"/other", strings.NewReader("{}"))
	req.Header.Set("X-Sig", "sha256=abc")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if s := gotSig.Load().(string); s != "" {
		t.Fatalf("the signature followed a redirect to another host: %q", s)
	}
	if _, err := c.Get(frontURL + "/loop"); err == nil || !strings.Contains(err.Error(), "redirects") || hops != egress.MaxRedirects {
		t.Fatalf("redirect loop: %v after %d hops, want a stop after %d", err, hops, egress.MaxRedirects)
	}
}
