// Package frontend embeds the dashboard (a TypeScript single-page app built by Vite from
// frontend/src into frontend/dist) and serves it at /.
//
// The build output is committed, so `go run ./cmd/server` shows the dashboard on a machine
// with Go alone; `make frontend` (npm ci, codegen, type check, vite build) rebuilds it and CI
// fails when the committed dist differs from a fresh build of the sources.
package frontend

import (
	"embed"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

//go:embed dist
var dist embed.FS

// Handler serves the built dashboard: files under dist as they are (hashed /assets/* files
// cached for a year), and index.html for every other path without a file extension, so the
// app's own routes (/racks/42, /vms?status=ACTIVE) load the app on a reload or a shared link.
// index.html itself is never cached, so a new build is picked up at once.
func Handler() http.Handler {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		panic(err) // the embedded tree always has dist
	}
	files := http.FileServerFS(sub)
	index, err := fs.ReadFile(sub, "index.html")
	if err != nil {
		panic(err) // the embedded tree always has dist/index.html
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(path.Clean(r.URL.Path), "/")
		switch {
		case strings.HasPrefix(name, "assets/"):
			w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
			files.ServeHTTP(w, r)
		case name != "" && name != "index.html" && path.Ext(name) != "":
			files.ServeHTTP(w, r) // favicon.ico and other top-level files; 404 when missing
		default:
			if r.Method != http.MethodGet && r.Method != http.MethodHead {
				w.Header().Set("Allow", "GET, HEAD")
				http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
				return
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("Cache-Control", "no-cache")
			w.Header().Set("X-Content-Type-Options", "nosniff")
			_, _ = w.Write(index)
		}
	})
}
