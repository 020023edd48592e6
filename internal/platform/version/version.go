// Package version tells which build of VirtFlow is running. A release build stamps it with
// -ldflags (the Makefile and the Dockerfile do, from `git describe` and the commit, because a
// container build has no .git to read):
//
//	go build -ldflags "-X github.com/virtflow/virtflow/internal/platform/version.stampedVersion=v1.2.3 \
//	  -X github.com/virtflow/virtflow/internal/platform/version.stampedRevision=$(git rev-parse HEAD)"
//
// Without stamps it falls back on the Go build information: the module version for a tagged
// build (go install …@v1.2.3), otherwise the VCS revision the binary was built from, with
// "+dirty" for uncommitted changes.
package version

import (
	"runtime/debug"
)

// stampedVersion and stampedRevision are set only by the linker (-ldflags -X), never by code.
var (
	stampedVersion  string
	stampedRevision string
)

// Info is what --version prints and /version serves.
type Info struct {
	Version   string `json:"version"`
	Revision  string `json:"revision,omitempty"`
	Time      string `json:"time,omitempty"`
	Modified  bool   `json:"modified,omitempty"`
	GoVersion string `json:"goVersion"`
}

// Get reads the running binary's build information.
func Get() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return stamped(Info{Version: "unknown"}, stampedVersion, stampedRevision)
	}
	i := Info{Version: bi.Main.Version, GoVersion: bi.GoVersion}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			i.Revision = s.Value
		case "vcs.time":
			i.Time = s.Value
		case "vcs.modified":
			i.Modified = s.Value == "true"
		}
	}
	if i.Version == "" || i.Version == "(devel)" {
		i.Version = "devel"
	}
	return stamped(i, stampedVersion, stampedRevision)
}

// stamped is i with the build's stamps, where there are some, in place of what the Go build
// information says.
func stamped(i Info, version, revision string) Info {
	if version != "" {
		i.Version = version
	}
	if revision != "" {
		i.Revision, i.Modified = revision, false
	}
	return i
}

// String is a one-line description, e.g. "devel 7a3be5c1d2e3+dirty (go1.26.8)".
func (i Info) String() string {
	s := i.Version
	if i.Revision != "" {
		r := i.Revision
		if len(r) > 12 {
			r = r[:12]
		}
		s += " " + r
		if i.Modified {
			s += "+dirty"
		}
	}
	if i.GoVersion != "" {
		s += " (" + i.GoVersion + ")"
	}
	return s
}
