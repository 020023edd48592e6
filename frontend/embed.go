// Package frontend embeds the dashboard's built assets (frontend/dist) and serves them at /.
// The single-page dashboard (rack and network diagrams, live status) is built by a later
// issue; until then dist holds a start page that links to the GraphQL playground.
package frontend

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed dist
var dist embed.FS

// Handler serves the built dashboard.
func Handler() http.Handler {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		panic(err) // the embedded tree always has dist
	}
	return http.FileServerFS(sub)
}
