// Package guestimage builds the smallest Linux guest that proves a VM really boots: the
// host's Debian kernel (linux-image-amd64) started directly by QEMU, with an initramfs made
// of a static busybox (busybox-static) and the kernel modules a CD-ROM needs. Its /init
// mounts the CD-ROM (a VM's config drive), prints the instance-id from its meta-data to
// the serial console and powers the machine off.
//
// It serves tests (hypervisor's guest boot test) and needs no network and no disk image:
// everything comes from the host's packages.
package guestimage

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// CDROMModules are the kernel modules, in load order, that let the guest mount an ISO 9660
// CD-ROM on the PIIX IDE controller of QEMU's pc machine.
var CDROMModules = []string{"scsi_common", "scsi_mod", "cdrom", "libata", "ata_piix", "sr_mod", "isofs"}

// ConsolePrefix starts every line /init prints, so a reader of the console can tell them
// from the kernel's.
const ConsolePrefix = "virtflow-guest: "

// Kernel is a kernel of the host and its modules.
type Kernel struct {
	// Version is the kernel release, e.g. 6.1.0-26-amd64.
	Version string
	// Image is the path of the kernel image (/boot/vmlinuz-<version>).
	Image string
	// ModulesDir is /lib/modules/<version>.
	ModulesDir string
}

// FindKernel returns the newest /boot/vmlinuz-* of the host that has its modules in
// /lib/modules, or an error naming what is missing.
func FindKernel() (Kernel, error) {
	images, _ := filepath.Glob("/boot/vmlinuz-*")
	if len(images) == 0 {
		return Kernel{}, errors.New("no /boot/vmlinuz-* (apt-get install linux-image-amd64)")
	}
	sort.Sort(sort.Reverse(sort.StringSlice(images)))
	for _, img := range images {
		v := strings.TrimPrefix(filepath.Base(img), "vmlinuz-")
		dir := filepath.Join("/lib/modules", v)
		if st, err := os.Stat(filepath.Join(dir, "kernel")); err == nil && st.IsDir() {
			if f, err := os.Open(img); err == nil { // readable, not only present
				f.Close()
				return Kernel{Version: v, Image: img, ModulesDir: dir}, nil
			}
		}
	}
	return Kernel{}, fmt.Errorf("none of %v is readable with its modules in /lib/modules/<version>/kernel", images)
}

// FindModule returns the path of a module under k.ModulesDir/kernel: <name>.ko, or a
// compressed .ko.xz, .ko.zst or .ko.gz.
func (k Kernel) FindModule(name string) (string, error) {
	var found string
	stop := errors.New("found")
	err := filepath.WalkDir(filepath.Join(k.ModulesDir, "kernel"), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		base := d.Name()
		for _, ext := range []string{".ko", ".ko.xz", ".ko.zst", ".ko.gz"} {
			if base == name+ext {
				found = p
				return stop
			}
		}
		return nil
	})
	if found != "" {
		return found, nil
	}
	if err != nil && !errors.Is(err, stop) {
		return "", fmt.Errorf("look for module %s: %w", name, err)
	}
	return "", fmt.Errorf("module %s not found under %s/kernel", name, k.ModulesDir)
}

// readModule returns a module's uncompressed contents (busybox's insmod loads plain .ko).
func readModule(path string) ([]byte, error) {
	var tool string
	switch {
	case strings.HasSuffix(path, ".ko"):
		return os.ReadFile(path)
	case strings.HasSuffix(path, ".xz"):
		tool = "xz"
	case strings.HasSuffix(path, ".zst"):
		tool = "zstd"
	case strings.HasSuffix(path, ".gz"):
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		zr, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return io.ReadAll(zr)
	default:
		return nil, fmt.Errorf("%s: not a kernel module", path)
	}
	out, err := exec.Command(tool, "-dc", path).Output()
	if err != nil {
		return nil, fmt.Errorf("decompress %s with %s: %w", path, tool, err)
	}
	return out, nil
}

// initScript is the guest's /init. It loads the modules, waits for /dev/sr0, mounts it,
// prints the meta-data's instance-id line and powers off. Every step says when it fails,
// so the console tells what went wrong.
const initScript = `#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
say() { echo "` + ConsolePrefix + `$*"; }
for m in %s; do
	insmod /lib/modules/$m.ko || say "insmod $m failed"
done
i=0
while [ ! -b /dev/sr0 ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
if mount -t iso9660 -o ro /dev/sr0 /mnt; then
	say "mounted /dev/sr0 ($(cat /sys/block/sr0/size 2>/dev/null) sectors)"
	grep '^instance-id:' /mnt/meta-data || say "no instance-id in meta-data"
else
	say "cannot mount /dev/sr0"
fi
say "powering off"
poweroff -f
`

// WriteInitramfs writes a gzip'd newc cpio initramfs to w: busybox (a static binary, e.g.
// /bin/busybox from busybox-static), the CDROMModules of k (uncompressed), /dev/console
// and the /init described in the package comment.
func WriteInitramfs(w io.Writer, k Kernel, busybox string) error {
	bb, err := os.ReadFile(busybox)
	if err != nil {
		return fmt.Errorf("read busybox: %w", err)
	}
	if len(bb) < 4 || string(bb[:4]) != "\x7fELF" {
		return fmt.Errorf("%s is not an ELF binary", busybox)
	}
	zw := gzip.NewWriter(w)
	cw := &cpioWriter{w: zw}
	for _, d := range []string{"bin", "dev", "lib", "lib/modules", "mnt", "proc", "sys"} {
		cw.dir(d)
	}
	cw.charDev("dev/console", 5, 1)
	cw.file("bin/busybox", 0o755, bb)
	cw.symlink("bin/sh", "busybox")
	for _, m := range CDROMModules {
		p, err := k.FindModule(m)
		if err != nil {
			return err
		}
		b, err := readModule(p)
		if err != nil {
			return err
		}
		cw.file("lib/modules/"+m+".ko", 0o644, b)
	}
	cw.file("init", 0o755, []byte(fmt.Sprintf(initScript, strings.Join(CDROMModules, " "))))
	cw.trailer()
	if cw.err != nil {
		return fmt.Errorf("write initramfs: %w", cw.err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("write initramfs: %w", err)
	}
	return nil
}

// File mode bits of cpio entries (the st_mode file types).
const (
	modeDir     = 0o040000
	modeRegular = 0o100000
	modeSymlink = 0o120000
	modeCharDev = 0o020000
)

// cpioWriter writes the "newc" cpio format the kernel unpacks initramfs from. The first
// error sticks in err.
type cpioWriter struct {
	w    io.Writer
	ino  uint32
	off  int64
	err  error
	pad4 [3]byte
}

func (c *cpioWriter) write(b []byte) {
	if c.err != nil {
		return
	}
	n, err := c.w.Write(b)
	c.off += int64(n)
	c.err = err
}

func (c *cpioWriter) align() {
	if r := c.off % 4; r != 0 {
		c.write(c.pad4[:4-r])
	}
}

func (c *cpioWriter) entry(name string, mode uint32, data []byte, rdevMajor, rdevMinor uint32) {
	c.ino++
	nlink := uint32(1)
	if mode&0o170000 == modeDir {
		nlink = 2
	}
	var hdr bytes.Buffer
	fmt.Fprintf(&hdr, "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		c.ino, mode, 0, 0, nlink, 0, len(data), 0, 0, rdevMajor, rdevMinor, len(name)+1, 0)
	hdr.WriteString(name)
	hdr.WriteByte(0)
	c.write(hdr.Bytes())
	c.align()
	c.write(data)
	c.align()
}

func (c *cpioWriter) dir(name string) { c.entry(name, modeDir|0o755, nil, 0, 0) }
func (c *cpioWriter) file(name string, perm uint32, b []byte) {
	c.entry(name, modeRegular|perm, b, 0, 0)
}
func (c *cpioWriter) symlink(name, target string) {
	c.entry(name, modeSymlink|0o777, []byte(target), 0, 0)
}
func (c *cpioWriter) charDev(name string, major, minor uint32) {
	c.entry(name, modeCharDev|0o600, nil, major, minor)
}
func (c *cpioWriter) trailer() { c.entry("TRAILER!!!", 0, nil, 0, 0) }
