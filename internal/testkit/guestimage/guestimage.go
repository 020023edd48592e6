// Package guestimage builds the smallest Linux guest that proves a VM really boots: the
// host's Debian kernel (linux-image-amd64) with an initramfs made of a static busybox
// (busybox-static) and the kernel modules a CD-ROM (IDE or SATA) and a NIC (virtio-net or
// e1000) need. Its /init mounts the CD-ROM (a VM's config drive) and prints the instance-id
// from its meta-data to the serial console. A drive without a readiness URL (see package
// configdrive) ends there: the guest powers off. A drive with one makes it a VM's guest: it
// finds or writes the marker on its root disk (DiskMarkerOffset), sets its host name,
// applies the addresses and default routes of the network-config to
// the NICs with their MACs, calls the readiness URL with busybox wget and the credential
// (the one-line call the README documents) and stays up.
//
// The guest boots directly (QEMU's -kernel/-initrd; WriteInitramfs) or from a disk image
// (WriteBootableImage: an ISO 9660 image with ISOLINUX that BIOSes boot from a CD-ROM or,
// isohybrid, from a hard disk: what a VM created through the API from an image boots).
//
// It serves tests (hypervisor's guest boot test, nodeagent's guest readiness test) and
// needs no network and no download: everything comes from the host's packages.
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
	"slices"
	"sort"
	"strings"

	"github.com/virtflow/virtflow/agent/configdrive"
)

// The meta-data keys /init reads the readiness call from.
const (
	readyURLKey   = configdrive.MetaReadyURL
	credentialKey = configdrive.MetaGuestCredential
)

// CDROMModules are the kernel modules, in load order, that let the guest mount an ISO 9660
// CD-ROM on the PIIX IDE controller of QEMU's pc machine or on an AHCI (SATA) controller.
var CDROMModules = []string{"scsi_common", "scsi_mod", "cdrom", "libata", "ata_piix", "libahci", "ahci", "sr_mod", "isofs"}

// NICModules are the kernel modules, in load order, of the NIC models a VM's domain has:
// virtio-net (the default) and e1000. Modules the kernel has built in are left out when
// the initramfs is written.
var NICModules = []string{"virtio_ring", "virtio", "virtio_pci_modern_dev", "virtio_pci_legacy_dev", "virtio_pci",
	"failover", "net_failover", "virtio_net", "e1000"}

// DiskModules are the kernel modules, in load order after NICModules (virtio_pci), that
// show the guest a VM's root disk on its default bus, virtio-blk (/dev/vda). Modules the
// kernel has built in are left out when the initramfs is written.
var DiskModules = []string{"virtio_blk"}

// DiskMarkerOffset is where on its root disk (/dev/vda) the guest keeps its disk marker: a
// line "virtflow-disk-marker: <instance-id>" of the instance that first booted from the
// disk, written (and flushed) when the disk has none, printed as DiskMarkerFound when it
// has one. Beyond the bootable image's own bytes, so that a copy of the disk (a backup
// restored into a new VM) shows which instance wrote it. Disks smaller than the offset plus
// one sector get no marker.
const DiskMarkerOffset = 256 << 20

// What the guest prints on its console about its disk marker (see DiskMarkerOffset),
// followed by the instance-id in the marker.
const (
	DiskMarkerWritten = ConsolePrefix + "disk marker written: "
	DiskMarkerFound   = ConsolePrefix + "disk marker found: "
)

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

// builtIn reports whether module name is built into k (listed in modules.builtin).
func (k Kernel) builtIn(name string) bool {
	b, err := os.ReadFile(filepath.Join(k.ModulesDir, "modules.builtin"))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		base := filepath.Base(line)
		if base == name+".ko" || strings.ReplaceAll(base, "-", "_") == name+".ko" {
			return true
		}
	}
	return false
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

// initScript is the guest's /init (see the package comment). Every step says when it
// fails, so the console tells what went wrong. %s is the list of modules to load, %d the
// sector of the disk marker (DiskMarkerOffset).
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
if ! mount -t iso9660 -o ro /dev/sr0 /mnt; then
	say "cannot mount /dev/sr0"
	say "powering off"
	poweroff -f
fi
say "mounted /dev/sr0 ($(cat /sys/block/sr0/size 2>/dev/null) sectors)"
grep '^instance-id:' /mnt/meta-data || say "no instance-id in meta-data"
meta() { sed -n "s/^$1: *//p" /mnt/meta-data | tr -d "\"'"; }
url=$(meta ` + readyURLKey + `)
if [ -z "$url" ]; then
	say "powering off"
	poweroff -f
fi
iid=$(meta instance-id)
# The root disk's marker (see DiskMarkerOffset): found, or written and flushed.
sector=%d
if [ -b /dev/vda ] && [ "$(cat /sys/block/vda/size)" -gt $sector ]; then
	m=$(dd if=/dev/vda bs=512 skip=$sector count=1 2>/dev/null | tr -d '\000' | head -n 1)
	case $m in
	virtflow-disk-marker:*) echo "` + DiskMarkerFound + `${m#virtflow-disk-marker: }" ;;
	*) printf 'virtflow-disk-marker: %%s\n' "$iid" | dd of=/dev/vda bs=512 seek=$sector conv=sync,fsync 2>/dev/null &&
		echo "` + DiskMarkerWritten + `$iid" || say "cannot write the disk marker" ;;
	esac
fi
host=$(meta local-hostname)
[ -n "$host" ] && hostname "$host"
ip link set lo up
# network-config (version 2, as package configdrive writes it): each ethernet's MAC, its
# addresses (list items with a prefix length) and its default route (via).
addrs=""
awk '/macaddress:/ { mac = $2; gsub(/"/, "", mac) }
	/^ *- / && $2 ~ /\// && mac != "" { print "addr", mac, $2 }
	/via:/ && mac != "" { v = $2; gsub(/"/, "", v); print "gw", mac, v }' /mnt/network-config > /tmp/net
while read kind mac arg; do
	dev=""
	for n in /sys/class/net/*; do
		[ "$(cat $n/address)" = "$mac" ] && dev=${n##*/}
	done
	if [ -z "$dev" ]; then say "no NIC with MAC $mac"; continue; fi
	ip link set "$dev" up
	case $kind in
	addr) ip addr add "$arg" dev "$dev" && addrs="$addrs${addrs:+,}$arg" && say "$dev ($mac): $arg" ;;
	gw) ip route add default via "$arg" dev "$dev" 2>/dev/null || say "route via $arg on $dev failed" ;;
	esac
done < /tmp/net
tok=$(meta ` + credentialKey + `)
umount /mnt
# The readiness call: the one-liner of the README, with busybox wget.
i=0
while [ $i -lt 60 ]; do
	if wget -q -O /tmp/ready --header "Authorization: Bearer $tok" \
		--post-data "instance_id=$iid&hostname=$(hostname)&addresses=$addrs" "$url"; then
		say "ready: $(cat /tmp/ready)"
		break
	fi
	i=$((i+1))
	sleep 2
done
[ $i -lt 60 ] || say "the readiness call failed"
while :; do sleep 3600; done
`

// WriteInitramfs writes a gzip'd newc cpio initramfs to w: busybox (a static binary, e.g.
// /bin/busybox from busybox-static), the CDROMModules and NICModules of k (uncompressed),
// /dev/console and the /init described in the package comment.
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
	for _, d := range []string{"bin", "dev", "lib", "lib/modules", "mnt", "proc", "sys", "tmp"} {
		cw.dir(d)
	}
	cw.charDev("dev/console", 5, 1)
	cw.file("bin/busybox", 0o755, bb)
	cw.symlink("bin/sh", "busybox")
	var load []string
	for _, m := range slices.Concat(CDROMModules, NICModules, DiskModules) {
		p, err := k.FindModule(m)
		if err != nil {
			if !slices.Contains(CDROMModules, m) && k.builtIn(m) {
				continue // part of the kernel: nothing to load
			}
			return err
		}
		b, err := readModule(p)
		if err != nil {
			return err
		}
		cw.file("lib/modules/"+m+".ko", 0o644, b)
		load = append(load, m)
	}
	cw.file("init", 0o755, []byte(fmt.Sprintf(initScript, strings.Join(load, " "), DiskMarkerOffset/512)))
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

// The ISOLINUX files of Debian's isolinux and syslinux-common packages.
const (
	isolinuxBin  = "/usr/lib/ISOLINUX/isolinux.bin"
	isohybridMBR = "/usr/lib/ISOLINUX/isohdpfx.bin"
	ldlinux      = "/usr/lib/syslinux/modules/bios/ldlinux.c32"
)

// BootableImageTools returns an error naming what WriteBootableImage needs and the host
// lacks: xorriso (package xorriso) and ISOLINUX (packages isolinux and syslinux-common).
func BootableImageTools() error {
	if _, err := exec.LookPath("xorriso"); err != nil {
		return errors.New("no xorriso (apt-get install xorriso)")
	}
	for _, f := range []string{isolinuxBin, isohybridMBR, ldlinux} {
		if _, err := os.Stat(f); err != nil {
			return fmt.Errorf("no %s (apt-get install isolinux syslinux-common)", f)
		}
	}
	return nil
}

// WriteBootableImage writes to path a disk image that boots the guest of the package
// comment: an isohybrid ISO 9660 image holding k's kernel, the initramfs of WriteInitramfs
// and ISOLINUX, which starts the kernel with the serial console on ttyS0. BIOSes (QEMU's
// SeaBIOS) boot it from a hard disk (its MBR) or a CD-ROM; as a VM image it is RAW.
func WriteBootableImage(path string, k Kernel, busybox string) error {
	if err := BootableImageTools(); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "virtflow-guestimage-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	root := filepath.Join(dir, "root")
	if err := os.MkdirAll(filepath.Join(root, "isolinux"), 0o755); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(root, "initrd.gz"))
	if err != nil {
		return err
	}
	if err := WriteInitramfs(f, k, busybox); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	copies := map[string]string{k.Image: "vmlinuz", isolinuxBin: "isolinux/isolinux.bin", ldlinux: "isolinux/ldlinux.c32"}
	for from, to := range copies {
		b, err := os.ReadFile(from)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(root, to), b, 0o644); err != nil {
			return err
		}
	}
	cfg := "SERIAL 0 115200\nDEFAULT guest\nPROMPT 0\nTIMEOUT 0\nLABEL guest\n  KERNEL /vmlinuz\n" +
		"  APPEND initrd=/initrd.gz console=ttyS0 panic=-1 loglevel=4\n"
	if err := os.WriteFile(filepath.Join(root, "isolinux", "isolinux.cfg"), []byte(cfg), 0o644); err != nil {
		return err
	}
	out, err := exec.Command("xorriso", "-as", "mkisofs", "-quiet", "-o", path, "-isohybrid-mbr", isohybridMBR,
		"-b", "isolinux/isolinux.bin", "-c", "isolinux/boot.cat", "-no-emul-boot", "-boot-load-size", "4",
		"-boot-info-table", "-V", "VFGUEST", "-J", "-r", root).CombinedOutput()
	if err != nil {
		return fmt.Errorf("xorriso: %v: %s", err, out)
	}
	return nil
}

// ShellReady is what the guest of WriteShellInitramfs prints on its console before its
// shell starts reading it.
const ShellReady = ConsolePrefix + "console shell ready"

// shellInitScript is the /init of WriteShellInitramfs: a shell on the serial console.
const shellInitScript = `#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
echo "` + ShellReady + `"
while :; do setsid cttyhack sh -i; done
`

// WriteShellInitramfs writes a gzip'd newc cpio initramfs to w whose /init runs an
// interactive busybox shell on the console (console=ttyS0: the serial port), again whenever
// it exits: the smallest guest to type into, for console tests. It needs no kernel modules.
func WriteShellInitramfs(w io.Writer, busybox string) error {
	bb, err := os.ReadFile(busybox)
	if err != nil {
		return fmt.Errorf("read busybox: %w", err)
	}
	if len(bb) < 4 || string(bb[:4]) != "\x7fELF" {
		return fmt.Errorf("%s is not an ELF binary", busybox)
	}
	zw := gzip.NewWriter(w)
	cw := &cpioWriter{w: zw}
	for _, d := range []string{"bin", "dev", "proc", "sys", "tmp"} {
		cw.dir(d)
	}
	cw.charDev("dev/console", 5, 1)
	cw.file("bin/busybox", 0o755, bb)
	cw.symlink("bin/sh", "busybox")
	cw.file("init", 0o755, []byte(shellInitScript))
	cw.trailer()
	if cw.err != nil {
		return fmt.Errorf("write initramfs: %w", cw.err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("write initramfs: %w", err)
	}
	return nil
}
