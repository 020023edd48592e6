package nodeagent_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/virtflow/virtflow/agent/nodeagent"
)

// TestReadHostFacts reads os-release's NAME and VERSION (quoted or not, VERSION_ID when
// VERSION is missing) and the running kernel's release.
func TestReadHostFacts(t *testing.T) {
	for _, tc := range []struct{ file, name, version string }{
		{file: "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nNAME=\"Debian GNU/Linux\"\nVERSION_ID=\"12\"\nVERSION=\"12 (bookworm)\"\n",
			name: "Debian GNU/Linux", version: "12 (bookworm)"},
		{file: "# comment\nNAME=Alpine\nVERSION_ID=3.20.1\n", name: "Alpine", version: "3.20.1"},
		{file: "NAME='Say \"hi\"'\n", name: `Say "hi"`},
	} {
		p := filepath.Join(t.TempDir(), "os-release")
		if err := os.WriteFile(p, []byte(tc.file), 0o600); err != nil {
			t.Fatal(err)
		}
		f := nodeagent.ReadHostFacts(p)
		if f.OSName != tc.name || f.OSVersion != tc.version {
			t.Errorf("facts of %q: %q %q, want %q %q", tc.file, f.OSName, f.OSVersion, tc.name, tc.version)
		}
		if f.KernelVersion == "" {
			t.Error("no kernel release from uname")
		}
	}
	if f := nodeagent.ReadHostFacts(filepath.Join(t.TempDir(), "missing")); f.OSName != "" || f.KernelVersion == "" {
		t.Errorf("without os-release: %+v, want no OS and the kernel", f)
	}
}
