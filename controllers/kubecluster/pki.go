package kubecluster

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/netip"
	"time"

	"github.com/virtflow/virtflow/internal/platform/secrets"
)

// Lifetimes of the cluster's certificates (kubeadm's own defaults).
const (
	CALifetime   = 10 * 365 * 24 * time.Hour
	LeafLifetime = 365 * 24 * time.Hour
)

// AdminUser is the admin kubeconfig's user; AdminGroup makes it a cluster admin (kubeadm's
// admin.conf uses the same group).
const (
	AdminUser  = "kubernetes-admin"
	AdminGroup = "system:masters"
)

// pkiPurpose is the additional data the PKI is sealed with (its column).
const pkiPurpose = "kubernetes_clusters.pki_sealed"

// PKI is a cluster's certificate authority and the certificates VirtFlow issues from it:
// the API server's (the VIP, the first address of the service network and the names
// clients use as SANs) and the admin client's. PEM throughout. CertificateKey is kubeadm's
// --certificate-key (64 hex digits): it encrypts the control-plane certificates kubeadm
// uploads on the first control plane so that the others can join with them.
type PKI struct {
	CACert         string `json:"caCert"`
	CAKey          string `json:"caKey"`
	APIServerCert  string `json:"apiServerCert"`
	APIServerKey   string `json:"apiServerKey"`
	AdminCert      string `json:"adminCert"`
	AdminKey       string `json:"adminKey"`
	CertificateKey string `json:"certificateKey"`
}

// PKIRequest is what the certificates name.
type PKIRequest struct {
	// Cluster is the cluster's name (a SAN of the API server's certificate).
	Cluster string
	// VIP is the API endpoint's address.
	VIP netip.Addr
	// ServiceCIDR is the service network; its first address is the in-cluster API service.
	ServiceCIDR netip.Prefix
	// Names are more DNS names for the API server (e.g. the control planes').
	Names []string
	// Now is the issue time.
	Now time.Time
}

// NewPKI makes a cluster CA (ECDSA P-256) and issues the API server's and the admin's
// certificates from it.
func NewPKI(r PKIRequest) (*PKI, error) {
	if !r.VIP.IsValid() {
		return nil, fmt.Errorf("pki: no VIP")
	}
	caKey, caKeyPEM, err := newKey()
	if err != nil {
		return nil, err
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "kubernetes", OrganizationalUnit: []string{r.Cluster}},
		NotBefore:             r.Now.Add(-5 * time.Minute),
		NotAfter:              r.Now.Add(CALifetime),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, caKey.Public(), caKey)
	if err != nil {
		return nil, fmt.Errorf("pki: CA: %w", err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	p := &PKI{CACert: pemCert(caDER), CAKey: caKeyPEM}
	dns := []string{"kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local", r.Cluster}
	dns = append(dns, r.Names...)
	ips := []net.IP{net.IP(r.VIP.AsSlice())}
	if r.ServiceCIDR.IsValid() {
		ips = append(ips, net.IP(r.ServiceCIDR.Masked().Addr().Next().AsSlice()))
	}
	if p.APIServerCert, p.APIServerKey, err = issue(ca, caKey, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver"},
		DNSNames:    dns,
		IPAddresses: ips,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}, r.Now); err != nil {
		return nil, err
	}
	if p.AdminCert, p.AdminKey, err = issue(ca, caKey, &x509.Certificate{
		Subject:     pkix.Name{CommonName: AdminUser, Organization: []string{AdminGroup}},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, r.Now); err != nil {
		return nil, err
	}
	ck := make([]byte, 32)
	if _, err := rand.Read(ck); err != nil {
		return nil, err
	}
	p.CertificateKey = hex.EncodeToString(ck)
	return p, nil
}

// CAHash is kubeadm's --discovery-token-ca-cert-hash of the CA: sha256 of its public key
// info.
func (p *PKI) CAHash() (string, error) {
	c, err := parseCert(p.CACert)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(c.RawSubjectPublicKeyInfo)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// Seal returns the PKI sealed with keys (for the cluster's pki_sealed column).
func (p *PKI) Seal(keys *secrets.Keyring) (string, error) {
	if keys == nil {
		return "", fmt.Errorf("pki: no secret key configured (VIRTFLOW_SECRET_KEY)")
	}
	b, err := json.Marshal(p)
	if err != nil {
		return "", err
	}
	return keys.Seal(string(b), pkiPurpose)
}

// OpenPKI opens what Seal sealed.
func OpenPKI(keys *secrets.Keyring, sealed string) (*PKI, error) {
	if !secrets.IsSealed(sealed) {
		return nil, fmt.Errorf("pki: not sealed") // never read a plain private key from the database
	}
	if keys == nil {
		return nil, fmt.Errorf("pki: no secret key configured (VIRTFLOW_SECRET_KEY)")
	}
	s, err := keys.Open(sealed, pkiPurpose)
	if err != nil {
		return nil, fmt.Errorf("open the cluster's PKI: %w", err)
	}
	var p PKI
	if err := json.Unmarshal([]byte(s), &p); err != nil {
		return nil, fmt.Errorf("decode the cluster's PKI: %w", err)
	}
	return &p, nil
}

// newKey makes an ECDSA P-256 key and its PEM.
func newKey() (*ecdsa.PrivateKey, string, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, "", err
	}
	der, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		return nil, "", err
	}
	return k, string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})), nil
}

func issue(ca *x509.Certificate, caKey crypto.Signer, tmpl *x509.Certificate, now time.Time) (certPEM, keyPEM string, err error) {
	k, keyPEM, err := newKey()
	if err != nil {
		return "", "", err
	}
	tmpl.SerialNumber = serial()
	tmpl.NotBefore = now.Add(-5 * time.Minute)
	tmpl.NotAfter = now.Add(LeafLifetime)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, k.Public(), caKey)
	if err != nil {
		return "", "", fmt.Errorf("pki: issue %s: %w", tmpl.Subject.CommonName, err)
	}
	return pemCert(der), keyPEM, nil
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	return n
}

func pemCert(der []byte) string {
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

func parseCert(s string) (*x509.Certificate, error) {
	b, _ := pem.Decode([]byte(s))
	if b == nil || b.Type != "CERTIFICATE" {
		return nil, fmt.Errorf("pki: not a PEM certificate")
	}
	return x509.ParseCertificate(b.Bytes)
}
