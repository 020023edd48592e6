// Package version tells which build of VirtFlow is running, from the Go build information:
// the module version for a tagged build (go install …@v1.2.3), otherwise the VCS revision the
// binary was built from, with "+dirty" for uncommitted changes.
package version

import (
	"runtime/debug"
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
		return Info{Version: "unknown"}
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
