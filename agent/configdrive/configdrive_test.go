package configdrive

import (
	"bytes"
	"crypto/ed25519"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/kdomanski/iso9660"
	"golang.org/x/crypto/ssh"

	"github.com/virtflow/virtflow/domain/apierr"
)

// testKey returns a deterministic ed25519 public key as an authorized_keys line.
func testKey(t *testing.T, seed byte, comment string) string {
	t.Helper()
	priv := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{seed}, ed25519.SeedSize))
	pub, err := ssh.NewPublicKey(priv.Public())
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pub))) + " " + comment
}

// fullSpec is a VM with everything a config drive can say.
func fullSpec(t *testing.T) Spec {
	return Spec{
		InstanceID: "vm-42",
		Hostname:   "web-1.example.internal",
		UserData: "#cloud-config\n# a comment\npackages:\n  - nginx\nruncmd:\n  - [systemctl, enable, --now, nginx]\n" +
			"write_files:\n  - path: /etc/motd\n    content: |\n      hello\n      world\n",
		NICs: []NIC{
			{MAC: "52:54:00:AA:BB:01", Addresses: []string{"192.0.2.10/24", "2001:db8::10/64"},
				Gateways: []string{"192.0.2.1", "2001:db8::1"}, DNS: []string{"192.0.2.53"}},
			{MAC: "52:54:00:aa:bb:02"},
		},
		SSHKeys: []string{testKey(t, 1, "tenant@virtflow")},
		Users:   []User{{Name: "alice", Groups: []string{"ops", "adm"}, SSHKeys: []string{testKey(t, 2, "alice@laptop")}, Sudo: true}},
	}
}

func decode(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal(b, &m); err != nil {
		t.Fatalf("decode %q: %v", b, err)
	}
	return m
}

func TestRenderMetaData(t *testing.T) {
	files, err := Render(Spec{InstanceID: "vm-42", Hostname: "web-1"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(files[FileMetaData]), "instance-id: vm-42\nlocal-hostname: web-1\n"; got != want {
		t.Errorf("meta-data = %q, want %q", got, want)
	}
	if got, want := string(files[FileUserData]), "#cloud-config\n"; got != want {
		t.Errorf("user-data without input = %q, want %q", got, want)
	}
	if got, want := string(files[FileNetworkConfig]), "version: 2\n"; got != want {
		t.Errorf("network-config without NICs = %q, want %q", got, want)
	}
}

func TestRenderUserData(t *testing.T) {
	k1, k2 := testKey(t, 1, "a"), testKey(t, 2, "b")
	tests := []struct {
		name string
		in   Spec
		// want: the decoded user-data's keys and values to check (compared as YAML).
		want string
		// verbatim: the output must equal the input byte for byte.
		verbatim bool
	}{
		{name: "kept verbatim without keys or users",
			in:       Spec{UserData: "#cloud-config\n# keep me\npackages: [nginx]\n"},
			verbatim: true},
		{name: "keys go to the default user",
			in:   Spec{UserData: "#cloud-config\npackages: [nginx]\n", SSHKeys: []string{k1}},
			want: "packages: [nginx]\nssh_authorized_keys: [" + k1 + "]\n"},
		{name: "keys merged into existing ones, no duplicates",
			in:   Spec{UserData: "#cloud-config\nssh_authorized_keys:\n  - " + k1 + "\n", SSHKeys: []string{k1, k2}},
			want: "ssh_authorized_keys: [" + k1 + ", " + k2 + "]\n"},
		{name: "users keep the default user",
			in:   Spec{Users: []User{{Name: "alice", Groups: []string{"ops"}, SSHKeys: []string{k2}, Sudo: true}}},
			want: "users:\n  - default\n  - {name: alice, groups: [ops], shell: /bin/bash, lock_passwd: true, sudo: 'ALL=(ALL) NOPASSWD:ALL', ssh_authorized_keys: [" + k2 + "]}\n"},
		{name: "user merged into the cloud-config's entry of the same name",
			in: Spec{UserData: "#cloud-config\nusers:\n  - name: alice\n    groups: wheel, ops\n    ssh_authorized_keys: [" + k1 + "]\n",
				Users: []User{{Name: "alice", Groups: []string{"ops", "adm"}, SSHKeys: []string{k2}}}},
			want: "users:\n  - {name: alice, groups: [wheel, ops, adm], ssh_authorized_keys: [" + k1 + ", " + k2 + "]}\n"},
		{name: "header alone is an empty mapping",
			in:   Spec{UserData: "#cloud-config\n", SSHKeys: []string{k1}},
			want: "ssh_authorized_keys: [" + k1 + "]\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.in.InstanceID, tt.in.Hostname = "vm-1", "vm-1"
			files, err := Render(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			got := files[FileUserData]
			if !bytes.HasPrefix(got, []byte("#cloud-config\n")) {
				t.Fatalf("user-data does not start with #cloud-config: %q", got)
			}
			if tt.verbatim {
				if string(got) != tt.in.UserData {
					t.Fatalf("user-data = %q, want the input unchanged", got)
				}
				return
			}
			gotYAML, _ := yaml.Marshal(decode(t, got))
			wantYAML, _ := yaml.Marshal(decode(t, []byte(tt.want)))
			if string(gotYAML) != string(wantYAML) {
				t.Errorf("user-data:\n%s\nwant (as YAML):\n%s", got, tt.want)
			}
		})
	}
}

func TestRenderNetworkConfig(t *testing.T) {
	files, err := Render(fullSpec(t))
	if err != nil {
		t.Fatal(err)
	}
	want := `version: 2
ethernets:
  eth0:
    match:
      macaddress: 52:54:00:aa:bb:01
    set-name: eth0
    addresses:
      - 192.0.2.10/24
      - 2001:db8::10/64
    routes:
      - to: 0.0.0.0/0
        via: 192.0.2.1
      - to: ::/0
        via: 2001:db8::1
    nameservers:
      addresses:
        - 192.0.2.53
  eth1:
    match:
      macaddress: 52:54:00:aa:bb:02
    set-name: eth1
    dhcp4: true
    dhcp4-overrides:
      use-routes: false
`
	gotYAML, _ := yaml.Marshal(decode(t, files[FileNetworkConfig]))
	wantYAML, _ := yaml.Marshal(decode(t, []byte(want)))
	if string(gotYAML) != string(wantYAML) {
		t.Errorf("network-config:\n%s\nwant:\n%s", files[FileNetworkConfig], want)
	}
}

// TestSecondNICNoDefaultRoute: two NICs with static addresses and a gateway each give one
// default route per family, on the first NIC; the second gets its addresses only.
func TestSecondNICNoDefaultRoute(t *testing.T) {
	spec := fullSpec(t)
	spec.NICs = []NIC{
		{MAC: "52:54:00:aa:bb:01", Addresses: []string{"192.0.2.10/24"}, Gateways: []string{"192.0.2.1"}},
		{MAC: "52:54:00:aa:bb:02", Addresses: []string{"198.51.100.10/24", "2001:db8:1::10/64"},
			Gateways: []string{"198.51.100.1", "2001:db8:1::1"}},
	}
	files, err := Render(spec)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Ethernets map[string]struct {
			Addresses []string `yaml:"addresses"`
			Routes    []struct {
				To  string `yaml:"to"`
				Via string `yaml:"via"`
			} `yaml:"routes"`
		} `yaml:"ethernets"`
	}
	if err := yaml.Unmarshal(files[FileNetworkConfig], &doc); err != nil {
		t.Fatal(err)
	}
	defaults := 0
	for name, eth := range doc.Ethernets {
		for _, r := range eth.Routes {
			if r.To == "0.0.0.0/0" || r.To == "::/0" {
				defaults++
				if name != "eth0" || r.Via != "192.0.2.1" {
					t.Errorf("default route %s via %s on %s: want only via 192.0.2.1 on eth0", r.To, r.Via, name)
				}
			}
		}
	}
	if defaults != 1 {
		t.Errorf("%d default routes, want 1:\n%s", defaults, files[FileNetworkConfig])
	}
	if got := doc.Ethernets["eth1"].Addresses; len(got) != 2 {
		t.Errorf("eth1 addresses %v: the second NIC keeps its addresses", got)
	}
}

func TestRenderRejectsBadInput(t *testing.T) {
	long := "#cloud-config\nx: \"" + strings.Repeat("a", MaxUserData) + "\"\n"
	tests := []struct {
		name   string
		modify func(*Spec)
		field  string
	}{
		{"no header", func(s *Spec) { s.UserData = "packages: [nginx]\n" }, "userData"},
		{"shell script", func(s *Spec) { s.UserData = "#!/bin/sh\necho hi\n" }, "userData"},
		{"too large", func(s *Spec) { s.UserData = long }, "userData"},
		{"not YAML", func(s *Spec) { s.UserData = "#cloud-config\npackages: [nginx\n" }, "userData"},
		{"a list, not a mapping", func(s *Spec) { s.UserData = "#cloud-config\n- a\n- b\n" }, "userData"},
		{"a scalar", func(s *Spec) { s.UserData = "#cloud-config\nhello\n" }, "userData"},
		{"users not a list", func(s *Spec) { s.UserData = "#cloud-config\nusers: alice\n" }, "userData"},
		{"keys not strings", func(s *Spec) { s.UserData = "#cloud-config\nssh_authorized_keys: [{a: b}]\n" }, "userData"},
		{"no instance id", func(s *Spec) { s.InstanceID = "" }, "instanceId"},
		{"bad hostname", func(s *Spec) { s.Hostname = "web_1" }, "hostname"},
		{"bad SSH key", func(s *Spec) { s.SSHKeys = []string{"ssh-rsa AAAA-not-base64"} }, "sshKeys[0]"},
		{"two-line SSH key", func(s *Spec) { s.SSHKeys = []string{s.SSHKeys[0] + "\n" + s.SSHKeys[0]} }, "sshKeys[0]"},
		{"bad user name", func(s *Spec) { s.Users[0].Name = "Alice" }, "users[0].name"},
		{"duplicate user", func(s *Spec) { s.Users = append(s.Users, s.Users[0]) }, "users[1].name"},
		{"bad group", func(s *Spec) { s.Users[0].Groups = []string{"a b"} }, "users[0].groups[0]"},
		{"bad MAC", func(s *Spec) { s.NICs[0].MAC = "52:54:00" }, "nics[0].mac"},
		{"duplicate MAC", func(s *Spec) { s.NICs[1].MAC = "52:54:00:aa:bb:01" }, "nics[1].mac"},
		{"address without prefix", func(s *Spec) { s.NICs[0].Addresses = []string{"192.0.2.10"} }, "nics[0].addresses[0]"},
		{"bad gateway", func(s *Spec) { s.NICs[0].Gateways = []string{"gw"} }, "nics[0].gateways[0]"},
		{"two IPv4 gateways", func(s *Spec) { s.NICs[0].Gateways = []string{"192.0.2.1", "192.0.2.2"} }, "nics[0].gateways"},
		{"bad DNS", func(s *Spec) { s.NICs[0].DNS = []string{"dns.example"} }, "nics[0].dns[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := fullSpec(t)
			tt.modify(&in)
			_, err := Render(in)
			e, ok := apierr.As(err)
			if !ok {
				t.Fatalf("Render error = %v, want an apierr.Error", err)
			}
			if e.Code != apierr.CodeValidation || e.Field != tt.field {
				t.Fatalf("error = %s %q (%v), want VALIDATION on %q", e.Code, e.Field, e, tt.field)
			}
			if err := Build(io.Discard, in); err == nil {
				t.Fatal("Build accepted what Render refused")
			}
		})
	}
	// The largest allowed user-data passes.
	in := fullSpec(t)
	in.UserData = "#cloud-config\nx: \"" + strings.Repeat("a", MaxUserData-len("#cloud-config\nx: \"\"\n")) + "\"\n"
	if len(in.UserData) != MaxUserData {
		t.Fatalf("test user-data is %d bytes", len(in.UserData))
	}
	if _, err := Render(in); err != nil {
		t.Fatalf("user-data of exactly %d bytes: %v", MaxUserData, err)
	}
}

// readISO returns the files in the root directory of an ISO 9660 image, by name.
func readISO(t *testing.T, image []byte) (label string, files map[string][]byte) {
	t.Helper()
	img, err := iso9660.OpenImage(bytes.NewReader(image))
	if err != nil {
		t.Fatalf("open image: %v", err)
	}
	if label, err = img.Label(); err != nil {
		t.Fatalf("label: %v", err)
	}
	root, err := img.RootDir()
	if err != nil {
		t.Fatalf("root: %v", err)
	}
	children, err := root.GetChildren()
	if err != nil {
		t.Fatalf("children: %v", err)
	}
	files = map[string][]byte{}
	for _, c := range children {
		b, err := io.ReadAll(c.Reader())
		if err != nil {
			t.Fatalf("read %s: %v", c.Name(), err)
		}
		files[c.Name()] = b
	}
	return label, files
}

func TestBuildReadsBack(t *testing.T) {
	in := fullSpec(t)
	want, err := Render(in)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Build(&buf, in); err != nil {
		t.Fatal(err)
	}
	t.Logf("config drive ISO: %d bytes", buf.Len())
	label, got := readISO(t, buf.Bytes())
	if label != VolumeLabel {
		t.Errorf("volume label = %q, want %q", label, VolumeLabel)
	}
	if len(got) != len(want) {
		t.Errorf("image holds %d files (%v), want %d", len(got), keys(got), len(want))
	}
	for name, w := range want {
		g, ok := got[name]
		if !ok {
			t.Errorf("%s missing from the image (it has %v)", name, keys(got))
			continue
		}
		if !bytes.Equal(g, w) {
			t.Errorf("%s in the image = %q, want %q", name, g, w)
		}
	}
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestCloudInitAcceptsRenderedFiles checks the rendered files with Debian's cloud-init:
// `cloud-init schema` validates the user-data, and `cloud-init devel net-convert` parses
// the network-config the way cloud-init does at boot and renders it for Debian (plus
// `cloud-init schema --schema-type network-config` where the installed cloud-init has it;
// 22.4 in Debian 12 does not).
func TestCloudInitAcceptsRenderedFiles(t *testing.T) {
	ci, err := exec.LookPath("cloud-init")
	if err != nil {
		t.Skip("cloud-init not installed (apt-get install cloud-init)")
	}
	files, err := Render(fullSpec(t))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	run := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(ci, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("cloud-init %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	out := run("schema", "--config-file", filepath.Join(dir, FileUserData))
	if !strings.Contains(out, "Valid cloud-config") {
		t.Errorf("cloud-init schema on user-data: %s", out)
	}

	// A broken cloud-config must fail the same check, or the check above proves nothing.
	bad := filepath.Join(dir, "bad-user-data")
	if err := os.WriteFile(bad, []byte("#cloud-config\nusers: 42\nruncmd: {a: 1}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(ci, "schema", "--config-file", bad).CombinedOutput(); err == nil {
		t.Errorf("cloud-init schema accepted an invalid cloud-config: %s", out)
	}

	help, _ := exec.Command(ci, "schema", "--help").CombinedOutput()
	if strings.Contains(string(help), "--schema-type") {
		run("schema", "--schema-type", "network-config", "--config-file", filepath.Join(dir, FileNetworkConfig))
	}
	outDir := filepath.Join(dir, "net")
	run("devel", "net-convert", "--network-data", filepath.Join(dir, FileNetworkConfig), "--kind", "yaml",
		"--distro", "debian", "--output-kind", "networkd", "--directory", outDir)
	var rendered strings.Builder
	err = filepath.WalkDir(outDir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rendered.Write(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"MACAddress=52:54:00:aa:bb:01", "Address=192.0.2.10/24", "Address=2001:db8::10/64",
		"Gateway=192.0.2.1", "Gateway=2001:db8::1", "DNS=192.0.2.53", "MACAddress=52:54:00:aa:bb:02", "DHCP=ipv4"} {
		if !strings.Contains(rendered.String(), want) {
			t.Errorf("cloud-init's networkd rendering lacks %q:\n%s", want, rendered.String())
		}
	}
}

// TestRoutedNICOnLinkGateway: the routed network's /32 with gateway 169.254.1.1 (package
// vmnet) gets a default route marked on-link, since the gateway is on no subnet of the NIC.
func TestRoutedNICOnLinkGateway(t *testing.T) {
	in := fullSpec(t)
	in.NICs = []NIC{{MAC: "52:54:00:aa:bb:01", Addresses: []string{"172.16.0.10/32"}, Gateways: []string{"169.254.1.1"}}}
	files, err := Render(in)
	if err != nil {
		t.Fatal(err)
	}
	want := `version: 2
ethernets:
  eth0:
    match:
      macaddress: 52:54:00:aa:bb:01
    set-name: eth0
    addresses:
      - 172.16.0.10/32
    routes:
      - to: 0.0.0.0/0
        via: 169.254.1.1
        on-link: true
`
	gotYAML, _ := yaml.Marshal(decode(t, files[FileNetworkConfig]))
	wantYAML, _ := yaml.Marshal(decode(t, []byte(want)))
	if string(gotYAML) != string(wantYAML) {
		t.Errorf("network-config:\n%s\nwant:\n%s", files[FileNetworkConfig], want)
	}
}
