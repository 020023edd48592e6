package nodeagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/virtflow/virtflow/agent/configdrive"
	"github.com/virtflow/virtflow/agent/hypervisor"
	"github.com/virtflow/virtflow/agent/vmnet"
	"github.com/virtflow/virtflow/domain/guest/credential"
)

// configDriveDir is where the agent keeps the VMs' config drives: ConfigDriveDir, else
// DiskDir, else a directory under the system's temporary directory.
func (ag *Agent) configDriveDir() string {
	switch {
	case ag.cfg.ConfigDriveDir != "":
		return ag.cfg.ConfigDriveDir
	case ag.cfg.DiskDir != "":
		return ag.cfg.DiskDir
	}
	return filepath.Join(os.TempDir(), "virtflow-cidata")
}

// ConfigDrivePath is the file of the config drive of the domain named name in dir.
func ConfigDrivePath(dir, name string) string { return filepath.Join(dir, name+"-cidata.iso") }

// configDrive builds the NoCloud config drive of a's VM (the configDrive the provisioning task
// rendered on the assignment) into its file, replacing the file atomically, and returns the
// CD-ROM that attaches it read-only on the SATA bus. It runs on every define, that is for
// every new generation of the assignment, so the drive always says what the VM's spec says.
// With a readiness URL (Config.GuestAPIURL) the drive also carries a fresh guest credential,
// whose hash the agent registers with the API first (package guest).
// An assignment without a config drive gets none (nil).
func (ag *Agent) configDrive(ctx context.Context, a Assignment, name string) (*hypervisor.Disk, error) {
	if a.ConfigDrive == nil || *a.ConfigDrive == "" {
		return nil, nil
	}
	var spec configdrive.Spec
	if err := json.Unmarshal([]byte(*a.ConfigDrive), &spec); err != nil {
		return nil, fmt.Errorf("config drive of assignment %s: %v: %w", a.Id, err, hypervisor.ErrInvalidSpec)
	}
	readyURL := ag.guestReadyURL()
	if ag.routed() {
		n, err := ag.vmNetwork(ctx, a)
		if err != nil {
			return nil, err
		}
		routedDrive(&spec, n)
		if ag.cfg.MetadataListener != nil && readyURL != "" {
			// The guest calls its node's metadata service, which passes the call on.
			readyURL = "http://" + vmnet.MetadataAddr.String() + vmnet.ReadyPath
		}
	}
	if url := readyURL; url != "" {
		// A fresh credential for every drive built: the old one stops working once the
		// API has the new one's hash, which it has before the domain starts.
		plain, hash, err := credential.New()
		if err != nil {
			return nil, err
		}
		if err := sendGuestCredential(ctx, ag.api, a.Id, a.Generation, hash); err != nil {
			return nil, err
		}
		spec.ReadyURL, spec.GuestCredential = url, plain
	}
	dir := ag.configDriveDir()
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("config drive directory: %w", err)
	}
	path := ConfigDrivePath(dir, name)
	tmp, err := os.CreateTemp(dir, name+"-cidata-*.tmp")
	if err != nil {
		return nil, fmt.Errorf("config drive: %w", err)
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	if err := configdrive.Build(tmp, spec); err != nil {
		_ = tmp.Close()
		return nil, fmt.Errorf("build config drive: %w", err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		_ = tmp.Close()
		return nil, fmt.Errorf("config drive: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return nil, fmt.Errorf("config drive: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return nil, fmt.Errorf("config drive: %w", err)
	}
	if ag.cfg.OnConfigDrive != nil {
		ag.cfg.OnConfigDrive(spec)
	}
	return &hypervisor.Disk{Path: path, Format: "raw", Bus: "sata", Device: "cdrom", ReadOnly: true}, nil
}

// guestReadyURL is the URL on the drive the guest calls when it is up: GuestAPIURL, or
// else the API's URL with the path /guest/ready; "" with GuestAPIURL "none".
func (ag *Agent) guestReadyURL() string {
	return GuestReadyURL(ag.cfg.GuestAPIURL, ag.cfg.APIURL)
}

// GuestReadyURL is the readiness URL of an agent with --guest-api-url guestURL and --api
// apiURL: guestURL itself; "" when it is "none"; with guestURL empty, apiURL with its path
// (/query) replaced by /guest/ready.
func GuestReadyURL(guestURL, apiURL string) string {
	switch guestURL {
	case "none":
		return ""
	case "":
		u, err := url.Parse(apiURL)
		if err != nil || u.Host == "" {
			return ""
		}
		u.Path, u.RawQuery, u.Fragment = "/guest/ready", "", ""
		return u.String()
	}
	return guestURL
}

// removeConfigDrive deletes the config drive of the domain named name, if there is one.
func (ag *Agent) removeConfigDrive(name string) error {
	err := os.Remove(ConfigDrivePath(ag.configDriveDir(), name))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove config drive: %w", err)
	}
	return nil
}

// addGuestConfig adds what the VM's guest is configured from: the config drive CD-ROM and
// the boot order of the VM's bootDevice.
func (ag *Agent) addGuestConfig(ctx context.Context, spec *hypervisor.DomainSpec, a Assignment) error {
	drive, err := ag.configDrive(ctx, a, spec.Name())
	if err != nil {
		return err
	}
	if drive != nil {
		spec.Disks = append(spec.Disks, *drive)
	}
	spec.Boot = bootOrder(a.VirtualMachine.BootDevice)
	return nil
}

// bootOrder is the boot order of a VM's bootDevice (DISK, CDROM, FLOPPY); nil leaves the
// hypervisor's default (the first disk).
func bootOrder(dev VirtualMachineBootDevice) []hypervisor.BootDevice {
	switch dev {
	case VirtualMachineBootDeviceCdrom:
		return []hypervisor.BootDevice{hypervisor.BootCDROM, hypervisor.BootDisk}
	case VirtualMachineBootDeviceFloppy:
		return []hypervisor.BootDevice{hypervisor.BootFloppy, hypervisor.BootDisk}
	case VirtualMachineBootDeviceDisk:
		return []hypervisor.BootDevice{hypervisor.BootDisk}
	}
	return nil
}

// routedDrive gives each NIC of a routed VM whose port has an address that address as a /32
// with the gateway vmnet.Gateway (169.254.1.1, answered by proxy ARP in the address's
// namespace), keeping its name servers (seed 001, "VM network (L3 advertisement)").
func routedDrive(spec *configdrive.Spec, n vmNet) {
	for i, nic := range spec.NICs {
		if ad, ok := n.byMAC[strings.ToLower(nic.MAC)]; ok {
			spec.NICs[i].Addresses = []string{netip.PrefixFrom(ad, 32).String()}
			spec.NICs[i].Gateways = []string{vmnet.Gateway.String()}
		}
	}
}
