package configdrive

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"regexp"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/kdomanski/iso9660"
	"golang.org/x/crypto/ssh"

	"github.com/virtflow/virtflow/domain/apierr"
)

// VolumeLabel is the ISO 9660 volume identifier cloud-init's NoCloud datasource looks for.
const VolumeLabel = "cidata"

// MaxUserData is the largest user-data a request may carry, in bytes.
const MaxUserData = 64 << 10

// The names of the files on the drive.
const (
	FileMetaData      = "meta-data"
	FileUserData      = "user-data"
	FileNetworkConfig = "network-config"
	// FileVendorData holds the readiness call (phone_home and a per-boot script) of a
	// drive with a ReadyURL and a GuestCredential.
	FileVendorData = "vendor-data"
)

// cloudConfigHeader is the first line cloud-init requires of a cloud-config user-data.
const cloudConfigHeader = "#cloud-config"

// Spec is what a VM's config drive says about it.
type Spec struct {
	// InstanceID identifies this instance of the VM; cloud-init runs its per-instance
	// steps again when it changes.
	InstanceID string
	// Hostname is the guest's host name (an RFC 1123 name).
	Hostname string
	// UserData is the request's cloud-config: empty, or a document whose first line is
	// "#cloud-config" and whose body is a YAML mapping.
	UserData string
	// NICs are the VM's network interfaces.
	NICs []NIC
	// SSHKeys are public keys (authorized_keys lines) for the image's default user.
	SSHKeys []string
	// Users are accounts created in the guest.
	Users []User
	// ReadyURL is where the guest says it is up (the server's /guest/ready); set by the
	// node agent from its --guest-api-url when it builds the drive, never stored.
	ReadyURL string `json:"-"`
	// GuestCredential authenticates that call; the node agent makes a fresh one each time
	// it builds the drive and the server keeps only its hash. Never stored with the spec.
	GuestCredential string `json:"-"`
}

// NIC is one network interface of the VM.
type NIC struct {
	// MAC is the interface's hardware address; the guest matches the interface by it.
	MAC string
	// Addresses are static addresses in CIDR notation (192.0.2.10/24, 2001:db8::10/64).
	// None means DHCP.
	Addresses []string
	// Gateways are default gateways, at most one IPv4 and one IPv6 address. Only the first
	// NIC's are used: the guest has one default route per family.
	Gateways []string
	// DNS are the name servers' addresses.
	DNS []string
}

// User is an account created in the guest.
type User struct {
	// Name is the login name.
	Name string
	// Groups are supplementary groups; they are created when missing.
	Groups []string
	// SSHKeys are the user's public keys (authorized_keys lines).
	SSHKeys []string
	// Sudo gives the user password-less sudo.
	Sudo bool
}

// Build validates in and writes its config drive, an ISO 9660 image labelled "cidata", to w.
// The image has plain ISO 9660 names (no Rock Ridge or Joliet), which Linux shows as
// meta-data, user-data and network-config. The ISO library stages the files in a temporary
// directory (os.TempDir), removed before Build returns.
func Build(w io.Writer, in Spec) (err error) {
	files, err := Render(in)
	if err != nil {
		return err
	}
	iw, err := iso9660.NewWriter()
	if err != nil {
		return fmt.Errorf("config drive: new ISO writer: %w", err)
	}
	defer func() {
		if cerr := iw.Cleanup(); cerr != nil && err == nil {
			err = fmt.Errorf("config drive: clean up ISO staging: %w", cerr)
		}
	}()
	for _, name := range []string{FileMetaData, FileUserData, FileNetworkConfig, FileVendorData} {
		if _, ok := files[name]; !ok {
			continue
		}
		if err := iw.AddFile(bytes.NewReader(files[name]), name); err != nil {
			return fmt.Errorf("config drive: add %s: %w", name, err)
		}
	}
	if err := iw.WriteTo(w, VolumeLabel); err != nil {
		return fmt.Errorf("config drive: write ISO: %w", err)
	}
	return nil
}

// Render validates in and returns the contents of the drive's files, by file name
// ([FileMetaData], [FileUserData], [FileNetworkConfig]).
func Render(in Spec) (map[string][]byte, error) {
	if err := validate(in); err != nil {
		return nil, err
	}
	meta, err := renderMetaData(in)
	if err != nil {
		return nil, err
	}
	user, err := renderUserData(in)
	if err != nil {
		return nil, err
	}
	network, err := renderNetworkConfig(in.NICs)
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{FileMetaData: meta, FileUserData: user, FileNetworkConfig: network}
	if readiness(in) {
		if files[FileVendorData], err = renderVendorData(in); err != nil {
			return nil, err
		}
	}
	return files, nil
}

var (
	hostnameLabel = regexp.MustCompile(`^[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?$`)
	posixName     = regexp.MustCompile(`^[a-z_][a-z0-9_-]{0,31}$`)
)

// validate checks everything but the user-data's YAML (parsed when it is rendered).
func validate(in Spec) error {
	if in.InstanceID == "" || strings.ContainsAny(in.InstanceID, "\r\n") || len(in.InstanceID) > 255 {
		return apierr.Validation("instanceId", "must be 1 to 255 characters on one line")
	}
	if err := validReadiness(in); err != nil {
		return err
	}
	if err := validHostname(in.Hostname); err != nil {
		return apierr.Validation("hostname", "%v", err)
	}
	if len(in.UserData) > MaxUserData {
		return apierr.Validation("userData", "is %d bytes, at most %d are allowed", len(in.UserData), MaxUserData)
	}
	if in.UserData != "" {
		first, _, _ := strings.Cut(in.UserData, "\n")
		if strings.TrimRight(first, " \t\r") != cloudConfigHeader {
			return apierr.Validation("userData", "must start with the line %q", cloudConfigHeader)
		}
	}
	for i, k := range in.SSHKeys {
		if err := validSSHKey(k); err != nil {
			return apierr.Validation(fmt.Sprintf("sshKeys[%d]", i), "%v", err)
		}
	}
	seen := map[string]bool{}
	for i, u := range in.Users {
		field := fmt.Sprintf("users[%d]", i)
		if !posixName.MatchString(u.Name) {
			return apierr.Validation(field+".name", "%q is not a user name (lower-case letters, digits, _ and -, at most 32)", u.Name)
		}
		if seen[u.Name] {
			return apierr.Validation(field+".name", "user %q is listed twice", u.Name)
		}
		seen[u.Name] = true
		for j, g := range u.Groups {
			if !posixName.MatchString(g) {
				return apierr.Validation(fmt.Sprintf("%s.groups[%d]", field, j), "%q is not a group name", g)
			}
		}
		for j, k := range u.SSHKeys {
			if err := validSSHKey(k); err != nil {
				return apierr.Validation(fmt.Sprintf("%s.sshKeys[%d]", field, j), "%v", err)
			}
		}
	}
	macs := map[string]bool{}
	for i, n := range in.NICs {
		field := fmt.Sprintf("nics[%d]", i)
		hw, err := net.ParseMAC(n.MAC)
		if err != nil || len(hw) != 6 {
			return apierr.Validation(field+".mac", "%q is not a 48-bit MAC address", n.MAC)
		}
		if macs[hw.String()] {
			return apierr.Validation(field+".mac", "MAC %s is used by two NICs", hw)
		}
		macs[hw.String()] = true
		for j, a := range n.Addresses {
			if _, err := netip.ParsePrefix(a); err != nil {
				return apierr.Validation(fmt.Sprintf("%s.addresses[%d]", field, j), "%q is not an address in CIDR notation", a)
			}
		}
		var v4, v6 int
		for j, g := range n.Gateways {
			ip, err := netip.ParseAddr(g)
			if err != nil {
				return apierr.Validation(fmt.Sprintf("%s.gateways[%d]", field, j), "%q is not an IP address", g)
			}
			if ip.Unmap().Is4() {
				v4++
			} else {
				v6++
			}
		}
		if v4 > 1 || v6 > 1 {
			return apierr.Validation(field+".gateways", "at most one IPv4 and one IPv6 gateway")
		}
		for j, d := range n.DNS {
			if _, err := netip.ParseAddr(d); err != nil {
				return apierr.Validation(fmt.Sprintf("%s.dns[%d]", field, j), "%q is not an IP address", d)
			}
		}
	}
	return nil
}

func validHostname(h string) error {
	if h == "" || len(h) > 253 {
		return errors.New("must be 1 to 253 characters")
	}
	for _, label := range strings.Split(h, ".") {
		if !hostnameLabel.MatchString(label) {
			return fmt.Errorf("%q is not a host name (letters, digits and -, labels of at most 63 separated by dots)", h)
		}
	}
	return nil
}

func validSSHKey(k string) error {
	if strings.ContainsAny(k, "\r\n") {
		return errors.New("must be one authorized_keys line")
	}
	if _, _, _, _, err := ssh.ParseAuthorizedKey([]byte(k)); err != nil {
		return fmt.Errorf("not an SSH public key: %v", err)
	}
	return nil
}

// marshal encodes v as block-style YAML.
func marshal(v any) ([]byte, error) {
	b, err := yaml.MarshalWithOptions(v, yaml.Indent(2), yaml.IndentSequence(true))
	if err != nil {
		return nil, fmt.Errorf("config drive: encode YAML: %w", err)
	}
	return b, nil
}

func renderMetaData(in Spec) ([]byte, error) {
	doc := yaml.MapSlice{
		{Key: "instance-id", Value: in.InstanceID},
		{Key: "local-hostname", Value: in.Hostname},
	}
	if readiness(in) {
		doc = append(doc, yaml.MapItem{Key: MetaReadyURL, Value: in.ReadyURL}, yaml.MapItem{Key: MetaGuestCredential, Value: in.GuestCredential})
	}
	return marshal(doc)
}

// renderNetworkConfig writes a version 2 network-config: ethernets eth0, eth1, ... in
// the order of nics, each matched by MAC and renamed to its key. Only the first (primary)
// NIC gets default routes (its gateways); the others get none, and take no routes from
// DHCP either: a second NIC never adds a second default route.
func renderNetworkConfig(nics []NIC) ([]byte, error) {
	ethernets := yaml.MapSlice{}
	for i, n := range nics {
		name := fmt.Sprintf("eth%d", i)
		hw, _ := net.ParseMAC(n.MAC) // validated
		eth := yaml.MapSlice{
			{Key: "match", Value: yaml.MapSlice{{Key: "macaddress", Value: hw.String()}}},
			{Key: "set-name", Value: name},
		}
		primary := i == 0
		if len(n.Addresses) == 0 {
			eth = append(eth, yaml.MapItem{Key: "dhcp4", Value: true})
			if !primary {
				eth = append(eth, yaml.MapItem{Key: "dhcp4-overrides", Value: yaml.MapSlice{{Key: "use-routes", Value: false}}})
			}
		} else {
			addrs := make([]string, len(n.Addresses))
			for j, a := range n.Addresses {
				addrs[j] = netip.MustParsePrefix(a).String()
			}
			eth = append(eth, yaml.MapItem{Key: "addresses", Value: addrs})
		}
		var routes []yaml.MapSlice
		for _, g := range n.Gateways {
			if !primary {
				break
			}
			ip := netip.MustParseAddr(g).Unmap()
			to := "0.0.0.0/0"
			if ip.Is6() {
				to = "::/0"
			}
			route := yaml.MapSlice{{Key: "to", Value: to}, {Key: "via", Value: ip.String()}}
			if len(n.Addresses) > 0 && !onSubnet(ip, n.Addresses) {
				// A gateway outside the NIC's subnets (the routed network's /32 with gateway
				// 169.254.1.1): reachable on the link all the same.
				route = append(route, yaml.MapItem{Key: "on-link", Value: true})
			}
			routes = append(routes, route)
		}
		if len(routes) > 0 {
			eth = append(eth, yaml.MapItem{Key: "routes", Value: routes})
		}
		if len(n.DNS) > 0 {
			dns := make([]string, len(n.DNS))
			for j, d := range n.DNS {
				dns[j] = netip.MustParseAddr(d).String()
			}
			eth = append(eth, yaml.MapItem{Key: "nameservers", Value: yaml.MapSlice{{Key: "addresses", Value: dns}}})
		}
		ethernets = append(ethernets, yaml.MapItem{Key: name, Value: eth})
	}
	doc := yaml.MapSlice{{Key: "version", Value: 2}}
	if len(ethernets) > 0 {
		doc = append(doc, yaml.MapItem{Key: "ethernets", Value: ethernets})
	}
	return marshal(doc)
}

// onSubnet reports whether ip is in one of the prefixes of addrs (CIDR strings).
func onSubnet(ip netip.Addr, addrs []string) bool {
	for _, a := range addrs {
		if p, err := netip.ParsePrefix(a); err == nil && p.Masked().Contains(ip) {
			return true
		}
	}
	return false
}
