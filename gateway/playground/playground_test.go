package playground

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
)

// newServer mounts the playground the way the API server does.
func newServer(t *testing.T, title, endpoint string) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	h := http.StripPrefix("/playground", Handler(title, endpoint))
	mux.Handle("/playground", h)
	mux.Handle("/playground/", h)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// get sends a GET without the transparent gzip handling of net/http's
// client, so the test sees exactly what the server sent.
func get(t *testing.T, rawURL string, header map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, rawURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

var assetRef = regexp.MustCompile(`(?:src|href)="([^"]+)"`)

// The vendored files the page must load, in order, then ours.
var pageAssets = []string{
	"graphiql.min.css",
	"react.production.min.js",
	"react-dom.production.min.js",
	"graphiql.min.js",
	"playground.js",
}

func TestPageLoadsEmbeddedAssets(t *testing.T) {
	srv := newServer(t, "VirtFlow GraphQL", "/query")
	for _, pagePath := range []string{"/playground", "/playground/"} {
		t.Run(pagePath, func(t *testing.T) {
			pageURL, _ := url.Parse(srv.URL + pagePath)
			resp, body := get(t, pageURL.String(), nil)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d", resp.StatusCode)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
				t.Errorf("Content-Type %q", ct)
			}
			page := string(body)
			for _, want := range []string{
				`<title>VirtFlow GraphQL</title>`,
				`data-endpoint="/query"`,
				`id="graphiql"`,
			} {
				if !strings.Contains(page, want) {
					t.Errorf("page lacks %s", want)
				}
			}
			if strings.Contains(page, "http://") || strings.Contains(page, "https://") || strings.Contains(page, `="//`) {
				t.Errorf("page refers to another host:\n%s", page)
			}
			if strings.Contains(page, "<script>") {
				t.Errorf("page has an inline script")
			}

			var refs []string
			for _, m := range assetRef.FindAllStringSubmatch(page, -1) {
				refs = append(refs, m[1])
			}
			if len(refs) != len(pageAssets) {
				t.Fatalf("page refers to %q, want the %d files %q", refs, len(pageAssets), pageAssets)
			}
			for i, ref := range refs {
				u, err := pageURL.Parse(ref)
				if err != nil {
					t.Fatal(err)
				}
				// Relative URLs must land under /playground/assets/ whether
				// or not the page URL ends in a slash.
				if want := "/playground/assets/" + pageAssets[i]; u.Path != want {
					t.Errorf("%q resolves to %s, want %s", ref, u.Path, want)
					continue
				}
				resp, body := get(t, u.String(), nil)
				if resp.StatusCode != http.StatusOK || len(body) == 0 {
					t.Errorf("%s: status %d, %d bytes", u.Path, resp.StatusCode, len(body))
				}
			}
		})
	}
}

func TestAssetsContentTypesAndEncoding(t *testing.T) {
	srv := newServer(t, "", "/query")
	sums := checksums(t)
	for name, ct := range map[string]string{
		"graphiql.min.js":             "text/javascript; charset=utf-8",
		"graphiql.min.css":            "text/css; charset=utf-8",
		"react.production.min.js":     "text/javascript; charset=utf-8",
		"react-dom.production.min.js": "text/javascript; charset=utf-8",
		"playground.js":               "text/javascript; charset=utf-8",
		"THIRD_PARTY_LICENSES.txt":    "text/plain; charset=utf-8",
		"LICENSE.graphiql":            "text/plain; charset=utf-8",
	} {
		t.Run(name, func(t *testing.T) {
			u := srv.URL + "/playground/assets/" + name

			plain, plainBody := get(t, u, nil)
			if plain.StatusCode != http.StatusOK || len(plainBody) == 0 {
				t.Fatalf("status %d, %d bytes", plain.StatusCode, len(plainBody))
			}
			if got := plain.Header.Get("Content-Type"); got != ct {
				t.Errorf("Content-Type %q, want %q", got, ct)
			}
			if enc := plain.Header.Get("Content-Encoding"); enc != "" {
				t.Errorf("Content-Encoding %q without Accept-Encoding", enc)
			}
			if plain.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("no X-Content-Type-Options: nosniff")
			}
			if want, ok := sums[name]; ok {
				if got := sha256hex(plainBody); got != want {
					t.Errorf("served body sha256 %s, SHA256SUMS says %s", got, want)
				}
			}

			gz, gzBody := get(t, u, map[string]string{"Accept-Encoding": "gzip, deflate, br"})
			if gz.StatusCode != http.StatusOK {
				t.Fatalf("gzip: status %d", gz.StatusCode)
			}
			if got := gz.Header.Get("Content-Type"); got != ct {
				t.Errorf("gzip: Content-Type %q, want %q", got, ct)
			}
			body := gzBody
			if gz.Header.Get("Content-Encoding") == "gzip" {
				zr, err := gzip.NewReader(bytes.NewReader(gzBody))
				if err != nil {
					t.Fatal(err)
				}
				if body, err = io.ReadAll(zr); err != nil {
					t.Fatal(err)
				}
				if gz.Header.Get("ETag") == plain.Header.Get("ETag") {
					t.Errorf("gzip and identity responses share ETag %s", gz.Header.Get("ETag"))
				}
			} else if _, vendored := sums[name]; vendored {
				t.Errorf("vendored asset not sent gzip-encoded")
			}
			if !bytes.Equal(body, plainBody) {
				t.Errorf("gzip and identity bodies differ")
			}

			// Revalidation with the ETag gives 304.
			notMod, _ := get(t, u, map[string]string{"If-None-Match": plain.Header.Get("ETag")})
			if notMod.StatusCode != http.StatusNotModified {
				t.Errorf("If-None-Match: status %d, want 304", notMod.StatusCode)
			}
		})
	}
}

func TestStartupScriptPresetsEndpointAndSubscriptions(t *testing.T) {
	srv := newServer(t, "", "/query")
	_, js := get(t, srv.URL+"/playground/assets/playground.js", nil)
	for _, want := range []string{
		`getAttribute('data-endpoint')`,
		`GraphiQL.createFetcher(`,
		`subscriptionUrl: wsURL.href`,
		`'wss:' : 'ws:'`,
		`isHeadersEditorEnabled: true`,
	} {
		if !bytes.Contains(js, []byte(want)) {
			t.Errorf("playground.js lacks %s", want)
		}
	}
	// The bundle must carry the pieces playground.js relies on.
	_, bundle := get(t, srv.URL+"/playground/assets/graphiql.min.js", nil)
	for _, want := range []string{"window.GraphiQL", "createFetcher", "subscriptionUrl", "graphql-transport-ws"} {
		if !bytes.Contains(bundle, []byte(want)) {
			t.Errorf("graphiql.min.js lacks %s", want)
		}
	}
}

func TestEndpointAndTitleAreEscaped(t *testing.T) {
	srv := newServer(t, `<b>"x"</b>`, `/q?a="1"&b=<2>`)
	_, body := get(t, srv.URL+"/playground/", nil)
	page := string(body)
	if strings.Contains(page, `<b>`) || strings.Contains(page, `"1"`) || strings.Contains(page, `<2>`) {
		t.Errorf("unescaped input in page:\n%s", page)
	}
	if !strings.Contains(page, `data-endpoint="/q?a=&#34;1&#34;&amp;b=&lt;2&gt;"`) {
		t.Errorf("endpoint not preset as expected:\n%s", page)
	}
}

func TestErrors(t *testing.T) {
	srv := newServer(t, "", "/query")
	for _, p := range []string{"/playground/nope", "/playground/assets/", "/playground/assets/nope.js", "/playground/assets/SHA256SUMS", "/playground/assets/README.md"} {
		if resp, _ := get(t, srv.URL+p, nil); resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: status %d, want 404", p, resp.StatusCode)
		}
	}
	resp, err := http.Post(srv.URL+"/playground/", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST: status %d, Allow %q", resp.StatusCode, resp.Header.Get("Allow"))
	}
	resp, err = http.Head(srv.URL + "/playground/assets/graphiql.min.js")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("HEAD: status %d", resp.StatusCode)
	}
}

func TestEmptyEndpointPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic")
		}
	}()
	Handler("x", "")
}

func TestAssetBase(t *testing.T) {
	for _, tc := range []struct{ requestURI, stripped, want string }{
		{"/playground", "", "./playground/assets/"},
		{"/playground?x=1", "", "./playground/assets/"},
		{"/playground/", "/", "assets/"},
		{"/admin/gql/playground", "", "./playground/assets/"},
		{"/ide", "", "./ide/assets/"},
		{"", "/", "assets/"}, // no RequestURI (handler called directly)
	} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RequestURI = tc.requestURI
		r.URL.Path = tc.stripped
		if got := assetBase(r); got != tc.want {
			t.Errorf("assetBase(%q) = %q, want %q", tc.requestURI, got, tc.want)
		}
	}
}

func TestAcceptsGzip(t *testing.T) {
	for _, tc := range []struct {
		header string
		want   bool
	}{
		{"", false},
		{"gzip", true},
		{"gzip, deflate, br, zstd", true},
		{"br;q=1.0, gzip;q=0.8", true},
		{"GZIP", true},
		{"deflate", false},
		{"gzip;q=0", false},
		{"gzip; q=0.000", false},
		{"*", true},
		{"*;q=0", false},
		{"gzip;q=0, *", false},
		{"identity", false},
	} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		if tc.header != "" {
			r.Header.Set("Accept-Encoding", tc.header)
		}
		if got := acceptsGzip(r); got != tc.want {
			t.Errorf("acceptsGzip(%q) = %v, want %v", tc.header, got, tc.want)
		}
	}
}

// The embedded .gz files decompress to exactly the upstream npm files listed
// in assets/SHA256SUMS, and every vendored file is listed there.
func TestEmbeddedAssetsMatchChecksums(t *testing.T) {
	sums := checksums(t)
	if len(sums) == 0 {
		t.Fatal("assets/SHA256SUMS is empty")
	}
	assets := loadAssets()
	for name, want := range sums {
		a, ok := assets[name]
		if !ok || !a.gzipped {
			t.Errorf("%s listed in SHA256SUMS but not embedded as %s.gz", name, name)
			continue
		}
		data, err := a.plain()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := sha256hex(data); got != want {
			t.Errorf("%s: sha256 %s, SHA256SUMS says %s", name, got, want)
		}
	}
	for name, a := range assets {
		if _, ok := sums[name]; a.gzipped && !ok {
			t.Errorf("%s.gz is embedded but not listed in SHA256SUMS", name)
		}
	}
}

func checksums(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open("assets/SHA256SUMS")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			t.Fatalf("bad SHA256SUMS line %q", sc.Text())
		}
		m[name] = sum
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return m
}

func sha256hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
