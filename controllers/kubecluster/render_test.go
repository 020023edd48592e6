package kubecluster

import (
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/virtflow/virtflow/agent/configdrive"
	"github.com/virtflow/virtflow/internal/platform/secrets"
)

func testPKI(t testing.TB) *PKI {
	t.Helper()
	p, err := NewPKI(PKIRequest{Cluster: "prod", VIP: netip.MustParseAddr("10.0.9.7"),
		ServiceCIDR: netip.MustParsePrefix("10.96.0.0/12"), Names: []string{"prod-cp-0"}, Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func mustCert(t *testing.T, s string) *x509.Certificate {
	t.Helper()
	c, err := parseCert(s)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestPKIVerifies: the API server's and the admin's certificates verify against the CA for
// their uses; the API server's names the VIP, the in-cluster service address and the names.
func TestPKIVerifies(t *testing.T) {
	p := testPKI(t)
	roots := x509.NewCertPool()
	roots.AddCert(mustCert(t, p.CACert))
	api := mustCert(t, p.APIServerCert)
	for _, name := range []string{"10.0.9.7", "10.96.0.1", "kubernetes.default.svc", "prod", "prod-cp-0"} {
		if _, err := api.Verify(x509.VerifyOptions{Roots: roots, DNSName: name, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
			t.Errorf("API server certificate for %s: %v", name, err)
		}
	}
	admin := mustCert(t, p.AdminCert)
	if _, err := admin.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("admin certificate: %v", err)
	}
	if admin.Subject.CommonName != AdminUser || len(admin.Subject.Organization) != 1 || admin.Subject.Organization[0] != AdminGroup {
		t.Errorf("admin subject %v", admin.Subject)
	}
	if _, err := api.Verify(x509.VerifyOptions{Roots: roots, DNSName: "10.0.9.8"}); err == nil {
		t.Error("API server certificate valid for an address it does not name")
	}
	other := testPKI(t)
	if _, err := mustCert(t, other.AdminCert).Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err == nil {
		t.Error("another cluster's admin certificate verifies against this CA")
	}
	if h, _ := p.CAHash(); !strings.HasPrefix(h, "sha256:") || len(h) != 71 {
		t.Errorf("CA hash %q", h)
	}
}

// TestPKISealed: the sealed PKI holds no private key in the clear and opens only with the
// key and purpose it was sealed with.
func TestPKISealed(t *testing.T) {
	p := testPKI(t)
	k1, _ := secrets.NewKey()
	raw, _ := secrets.ParseKey(k1)
	keys, _ := secrets.NewKeyring(raw)
	sealed, err := p.Seal(keys)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(sealed, "PRIVATE KEY") || !secrets.IsSealed(sealed) {
		t.Fatal("sealed PKI shows a private key")
	}
	back, err := OpenPKI(keys, sealed)
	if err != nil || back.AdminKey != p.AdminKey || back.CAKey != p.CAKey {
		t.Fatalf("open: %v", err)
	}
	k2, _ := secrets.NewKey()
	raw2, _ := secrets.ParseKey(k2)
	other, _ := secrets.NewKeyring(raw2)
	if _, err := OpenPKI(other, sealed); err == nil {
		t.Error("another key opened the PKI")
	}
	if _, err := OpenPKI(keys, "plain"); err == nil {
		t.Error("a plain value was read as a PKI")
	}
}

// TestKubeconfig: the admin kubeconfig is what kubectl reads (kubectl config view), and its
// certificates verify against the cluster's CA.
func TestKubeconfig(t *testing.T) {
	p := testPKI(t)
	kc, err := Kubeconfig("prod", "https://10.0.9.7:6443", p)
	if err != nil {
		t.Fatal(err)
	}
	var doc kubeconfig
	if err := yaml.Unmarshal([]byte(kc), &doc); err != nil {
		t.Fatal(err)
	}
	dec := func(s string) []byte {
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(dec(doc.Clusters[0].Cluster.CertificateAuthorityData)) {
		t.Fatal("no CA in the kubeconfig")
	}
	blk, _ := pem.Decode(dec(doc.Users[0].User.ClientCertificateData))
	c, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("client certificate: %v", err)
	}
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("needs kubectl (apt-get install kubernetes-client; .ci/run does it)")
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(kubectl, "config", "view", "--kubeconfig", path, "--raw", "-o", "jsonpath={.clusters[0].cluster.server} {.current-context} {.users[0].name}").CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl config view: %v\n%s", err, out)
	}
	if got, want := string(out), "https://10.0.9.7:6443 kubernetes-admin@prod kubernetes-admin@prod"; got != want {
		t.Errorf("kubectl config view = %q, want %q", got, want)
	}
}

// TestJoinToken: tokens have kubeadm's format, are distinct, and are due for renewal
// TokenRenewBefore ahead of their expiry.
func TestJoinToken(t *testing.T) {
	now := time.Now()
	a, err := NewJoinToken(now)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewJoinToken(now)
	if !TokenRe.MatchString(a.String()) || a.String() == b.String() {
		t.Fatalf("tokens %q %q", a, b)
	}
	if a.Due(now) || !a.Due(now.Add(TokenTTL-TokenRenewBefore)) || !(JoinToken{}).Due(now) {
		t.Error("renewal window")
	}
	raw, _ := secrets.ParseKey(strings.Repeat("ab", 32))
	keys, _ := secrets.NewKeyring(raw)
	s, _ := sealToken(keys, a)
	if strings.Contains(s, a.Secret) {
		t.Error("sealed token shows its secret")
	}
	back, err := openToken(keys, s, a.Expires)
	if err != nil || back.String() != a.String() {
		t.Errorf("open token: %v", err)
	}
}

func testNodes(p *PKI) []Node {
	hash, _ := p.CAHash()
	tok, _ := NewJoinToken(time.Now())
	base := Node{Cluster: "prod", Version: "v1.31.2", PodCIDR: "10.244.0.0/16", ServiceCIDR: "10.96.0.0/12",
		CNI: "calico", Addons: []string{"metrics-server"}, Mesh: "ISTIO", Endpoint: "10.0.9.7:6443", Token: tok.String(),
		CAHash: hash, CertKey: p.CertificateKey, SSHKeys: []string{"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB7 user@host"}}
	first := base
	first.Name, first.Role, first.First, first.CACert, first.CAKey = "prod-cp-0", RoleControlPlane, true, p.CACert, p.CAKey
	cp := base
	cp.Name, cp.Role = "prod-cp-1", RoleControlPlane
	w := base
	w.Name, w.Role, w.Version = "prod-w-0", RoleWorker, "1.30"
	bastion := base
	bastion.Name, bastion.Role = "prod-bastion", RoleBastion
	return []Node{first, cp, w, bastion}
}

// TestUserDataValid: every role's user-data passes cloud-init's own schema check and its
// script passes sh -n and bash -n; the first control plane runs kubeadm init with the
// cluster's CIDRs and version, the others join (control planes with the certificate key),
// and each reports its step to the readiness endpoint.
func TestUserDataValid(t *testing.T) {
	p := testPKI(t)
	for _, n := range testNodes(p) {
		t.Run(n.Name, func(t *testing.T) {
			ud, err := UserData(n)
			if err != nil {
				t.Fatal(err)
			}
			script, _ := Script(n)
			must := map[string][]string{
				"prod-cp-0":    {"kubeadm init --config /etc/virtflow/kubeadm.yaml --upload-certs", "podSubnet: 10.244.0.0/16", "serviceSubnet: 10.96.0.0/12", "kubernetesVersion: v1.31.2", "calico.yaml", "istioctl install", "metrics-server", "certificateKey: " + p.CertificateKey, "/etc/kubernetes/pki/ca.key", "kubeadm.k8s.io/v1beta4"},
				"prod-cp-1":    {"kubeadm join --config", "certificateKey: " + p.CertificateKey, "apiServerEndpoint: 10.0.9.7:6443", "caCertHashes"},
				"prod-w-0":     {"kubeadm join --config", "kubeadm.k8s.io/v1beta3", "core:/stable:/v1.30/deb"},
				"prod-bastion": {"ssh-ed25519", "report ok"},
			}[n.Name]
			for _, s := range must {
				if !strings.Contains(ud, s) {
					t.Errorf("user-data lacks %q", s)
				}
			}
			if n.Name != "prod-cp-0" && strings.Contains(ud, "PRIVATE KEY") {
				t.Error("only the first control plane gets the CA key")
			}
			if n.Name == "prod-w-0" && strings.Contains(ud, "certificateKey") {
				t.Error("a worker got the certificate key")
			}
			if err := configdrive.ValidateUserData(ud); err != nil {
				t.Errorf("the config drive refuses the user-data: %v", err)
			}
			dir := t.TempDir()
			sp := filepath.Join(dir, "script.sh")
			os.WriteFile(sp, []byte(script), 0o600)
			for _, sh := range []string{"sh", "bash"} {
				if out, err := exec.Command(sh, "-n", sp).CombinedOutput(); err != nil {
					t.Errorf("%s -n: %v\n%s", sh, err, out)
				}
			}
			ci, err := exec.LookPath("cloud-init")
			if err != nil {
				t.Skip("needs cloud-init (apt-get install cloud-init; .ci/run does it)")
			}
			up := filepath.Join(dir, "user-data")
			os.WriteFile(up, []byte(ud), 0o600)
			if out, err := exec.Command(ci, "schema", "--config-file", up).CombinedOutput(); err != nil {
				t.Errorf("cloud-init schema: %v\n%s\n%s", err, out, ud)
			}
		})
	}
}

// TestPlugins: one CNI at most, the default when none, unknown plugins named.
func TestPlugins(t *testing.T) {
	for _, tc := range []struct {
		in      []string
		cni     string
		addons  int
		wantErr string
	}{
		{nil, DefaultCNI, 0, ""},
		{[]string{"Flannel", "metrics-server"}, "flannel", 1, ""},
		{[]string{"calico", "cilium"}, "", 0, "two network plugins"},
		{[]string{"weave"}, "", 0, `unknown plugin "weave"`},
	} {
		cni, addons, err := Plugins(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%v: err %v, want %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || cni != tc.cni || len(addons) != tc.addons {
			t.Errorf("%v: %q %v %v", tc.in, cni, addons, err)
		}
	}
}
