package playground

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The vendored files are stored gzip-compressed (NAME.gz is served as
// /assets/NAME); playground.js is ours. The license texts are served too, so
// the notices ship with the binary.
//
//go:embed assets/*.gz assets/playground.js assets/LICENSE.* assets/THIRD_PARTY_LICENSES.txt
var assetFS embed.FS

// The page. Asset URLs are relative to the page (see assetBase); the
// endpoint goes into a data attribute that assets/playground.js reads, so
// the page has no inline script.
var page = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>{{.Title}}</title>
<link rel="stylesheet" href="{{.Assets}}graphiql.min.css">
<style>html, body { height: 100%; margin: 0; } #graphiql { height: 100vh; }</style>
</head>
<body>
<div id="graphiql" data-endpoint="{{.Endpoint}}">Loading…</div>
<noscript>GraphiQL needs JavaScript.</noscript>
<script src="{{.Assets}}react.production.min.js"></script>
<script src="{{.Assets}}react-dom.production.min.js"></script>
<script src="{{.Assets}}graphiql.min.js"></script>
<script src="{{.Assets}}playground.js"></script>
</body>
</html>
`))

// Handler returns the GraphiQL playground for the GraphQL endpoint (e.g.
// "/query"; relative to the page's origin, or an absolute URL). title is the
// page title ("GraphiQL" if empty). It must be mounted behind
// http.StripPrefix; see the package documentation. It panics if endpoint is
// empty.
func Handler(title, endpoint string) http.Handler {
	if endpoint == "" {
		panic("playground: empty endpoint")
	}
	if title == "" {
		title = "GraphiQL"
	}
	return &handler{title: title, endpoint: endpoint, assets: loadAssets()}
}

type handler struct {
	title, endpoint string
	assets          map[string]*asset
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, http.StatusText(http.StatusMethodNotAllowed), http.StatusMethodNotAllowed)
		return
	}
	// Accept both StripPrefix("/playground") ("", "/", "/assets/x") and
	// StripPrefix("/playground/") ("", "assets/x").
	p := strings.TrimPrefix(r.URL.Path, "/")
	switch {
	case p == "":
		h.serveIndex(w, r)
	case strings.HasPrefix(p, "assets/"):
		a, ok := h.assets[strings.TrimPrefix(p, "assets/")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		a.serve(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (h *handler) serveIndex(w http.ResponseWriter, r *http.Request) {
	var buf bytes.Buffer
	err := page.Execute(&buf, struct{ Title, Endpoint, Assets string }{h.title, h.endpoint, assetBase(r)})
	if err != nil {
		http.Error(w, "playground: "+err.Error(), http.StatusInternalServerError)
		return
	}
	hdr := w.Header()
	hdr.Set("Content-Type", "text/html; charset=utf-8")
	hdr.Set("Cache-Control", "no-cache")
	hdr.Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(buf.Bytes())
}

// assetBase returns the URL of the assets directory relative to the page the
// browser asked for. It uses the request URI, which http.StripPrefix does
// not change: for ".../playground/" it is "assets/", for ".../playground"
// (no trailing slash, so the browser resolves relative URLs against the
// parent) it is "./playground/assets/".
func assetBase(r *http.Request) string {
	p := r.URL.EscapedPath()
	if r.RequestURI != "" {
		if u, err := url.ParseRequestURI(r.RequestURI); err == nil {
			p = u.EscapedPath()
		}
	}
	if p == "" || strings.HasSuffix(p, "/") {
		return "assets/"
	}
	return "./" + p[strings.LastIndex(p, "/")+1:] + "/assets/"
}

// asset is one embedded file, as stored (possibly gzip-compressed).
type asset struct {
	contentType string
	data        []byte
	gzipped     bool
	etag        string                 // of data; the gzip-encoded response gets a different one
	plain       func() ([]byte, error) // data decompressed, computed once
}

var contentTypes = map[string]string{
	".js":  "text/javascript; charset=utf-8",
	".css": "text/css; charset=utf-8",
	".txt": "text/plain; charset=utf-8",
}

var loadAssets = sync.OnceValue(func() map[string]*asset {
	m := map[string]*asset{}
	err := fs.WalkDir(assetFS, "assets", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := assetFS.ReadFile(name)
		if err != nil {
			return err
		}
		base := path.Base(name)
		a := &asset{data: data}
		if strings.HasSuffix(base, ".gz") {
			base = strings.TrimSuffix(base, ".gz")
			a.gzipped = true
			a.plain = sync.OnceValues(func() ([]byte, error) {
				zr, err := gzip.NewReader(bytes.NewReader(data))
				if err != nil {
					return nil, err
				}
				return io.ReadAll(zr)
			})
		} else {
			a.plain = func() ([]byte, error) { return data, nil }
		}
		ct, ok := contentTypes[path.Ext(base)]
		if !ok && strings.HasPrefix(base, "LICENSE.") {
			ct, ok = contentTypes[".txt"], true
		}
		if !ok {
			return fmt.Errorf("playground: no content type for embedded %s", name)
		}
		a.contentType = ct
		sum := sha256.Sum256(data)
		a.etag = hex.EncodeToString(sum[:16])
		m[base] = a
		return nil
	})
	if err != nil {
		panic(err)
	}
	return m
})

func (a *asset) serve(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	body, etag := a.data, a.etag
	if a.gzipped {
		hdr.Add("Vary", "Accept-Encoding")
		if acceptsGzip(r) {
			hdr.Set("Content-Encoding", "gzip")
			etag += "-gzip"
		} else {
			var err error
			if body, err = a.plain(); err != nil {
				http.Error(w, "playground: corrupt embedded asset", http.StatusInternalServerError)
				return
			}
		}
	}
	hdr.Set("Content-Type", a.contentType)
	hdr.Set("ETag", `"`+etag+`"`)
	hdr.Set("Cache-Control", "no-cache")
	hdr.Set("X-Content-Type-Options", "nosniff")
	// Zero modtime: no Last-Modified, the ETag is the validator.
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body))
}

// acceptsGzip reports whether the Accept-Encoding header allows gzip: a
// "gzip" coding with q > 0, or, when gzip is not listed, a "*" with q > 0.
func acceptsGzip(r *http.Request) bool {
	gz, star := -1, -1 // -1: not listed, 0: refused, 1: accepted
	for _, v := range r.Header.Values("Accept-Encoding") {
		for _, part := range strings.Split(v, ",") {
			coding, params, _ := strings.Cut(part, ";")
			ok := 1
			if q, found := strings.CutPrefix(strings.ReplaceAll(strings.ToLower(params), " ", ""), "q="); found {
				if f, err := strconv.ParseFloat(q, 64); err != nil || f <= 0 {
					ok = 0
				}
			}
			switch strings.ToLower(strings.TrimSpace(coding)) {
			case "gzip", "x-gzip":
				gz = ok
			case "*":
				star = ok
			}
		}
	}
	if gz >= 0 {
		return gz == 1
	}
	return star == 1
}
