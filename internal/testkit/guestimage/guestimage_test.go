package guestimage

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestWriteInitramfs checks the initramfs with GNU cpio, the reference reader of the format:
// every file is there with its mode, and /init names every module.
func TestWriteInitramfs(t *testing.T) {
	k, err := FindKernel()
	if err != nil {
		t.Skipf("no kernel: %v", err)
	}
	const busybox = "/bin/busybox"
	if _, err := os.Stat(busybox); err != nil {
		t.Skip("no /bin/busybox (apt-get install busybox-static)")
	}
	cpio, err := exec.LookPath("cpio")
	if err != nil {
		t.Skip("cpio not installed (apt-get install cpio)")
	}
	var buf bytes.Buffer
	if err := WriteInitramfs(&buf, k, busybox); err != nil {
		t.Fatal(err)
	}
	t.Logf("initramfs for %s: %d bytes gzip'd", k.Version, buf.Len())
	zr, err := gzip.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(cpio, "-itv", "--quiet")
	cmd.Stdin = bytes.NewReader(raw)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("cpio -it: %v\n%s", err, out)
	}
	listing := string(out)
	want := map[string]string{"init": "-rwxr-xr-x", "bin/busybox": "-rwxr-xr-x", "bin/sh": "lrwxrwxrwx",
		"dev/console": "crw-------", "mnt": "drwxr-xr-x"}
	for _, m := range CDROMModules {
		want["lib/modules/"+m+".ko"] = "-rw-r--r--"
	}
	for name, mode := range want {
		found := false
		for _, line := range strings.Split(listing, "\n") {
			f := strings.Fields(line)
			if len(f) > 0 && strings.HasPrefix(line, mode) && (f[len(f)-1] == name || (len(f) > 2 && f[len(f)-3] == name)) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s (%s) missing from the initramfs:\n%s", name, mode, listing)
		}
	}
}
