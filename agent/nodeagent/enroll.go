package nodeagent

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/virtflow/virtflow/agent/hypervisor"
)

// Enrollment is how an agent obtains its credential (Enroll).
type Enrollment struct {
	// APIURL is the GraphQL endpoint.
	APIURL string
	// CredentialFile holds the node's agent token once it has one (written 0600). When it
	// exists, Enroll returns its token and does not register again.
	CredentialFile string
	// JoinToken is the one-time join token (createJoinToken) to register with when there
	// is no credential yet.
	JoinToken string
	// Hostname names the host when the join token makes a new node (os.Hostname when empty).
	Hostname string
	// Hypervisor, when set, tells the node's capacity at registration.
	Hypervisor hypervisor.Hypervisor
	// ReservedCPUs are left out of the capacity reported, as in Config.
	ReservedCPUs int
	// Pool is the storage pool whose size is reported as disk capacity (DefaultPool when
	// empty; it is created at PoolPath, DefaultPoolPath when empty, if missing), unless
	// DiskCapacityGB is set.
	Pool, PoolPath string
	DiskCapacityGB int
	// Facts are the host's OS and kernel; ReadHostFacts("") when nil.
	Facts *HostFacts
	// HTTPClient sends the request (a client with RequestTimeout when nil).
	HTTPClient *http.Client
}

// ErrNoCredential is Enroll's error when there is neither a credential file nor a join token.
var ErrNoCredential = errors.New("nodeagent: no agent token: give --token, a --credential-file holding one, or a --join-token")

// Enroll returns the agent token of this node: the one in e.CredentialFile when it exists
// (and, when a join token is given too, the server still accepts it: a re-enrolled node's old
// token is refused, and the join token registers anew), else a new one from registerNode with e.JoinToken, which it stores in e.CredentialFile
// (mode 0600, written to a temporary file and renamed, so a crash never leaves half a token)
// before returning it with the node's id. A join token is spent by the registration: an agent
// that restarts uses the file.
func Enroll(ctx context.Context, e Enrollment) (token, nodeID string, err error) {
	hc := e.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: RequestTimeout}
	}
	if e.CredentialFile != "" {
		b, err := os.ReadFile(e.CredentialFile)
		switch {
		case err == nil && strings.TrimSpace(string(b)) != "":
			stored := strings.TrimSpace(string(b))
			if e.JoinToken == "" || !revoked(ctx, &Client{URL: e.APIURL, HTTP: hc, Token: stored}) {
				return stored, "", nil
			}
			// An operator re-enrolled the node (reenrollComputeNode revoked the stored
			// token) and gave this agent a join token: register with it.
		case err != nil && !errors.Is(err, os.ErrNotExist):
			return "", "", fmt.Errorf("nodeagent: read credential: %w", err)
		}
	}
	if e.JoinToken == "" {
		return "", "", ErrNoCredential
	}
	if e.CredentialFile == "" {
		return "", "", errors.New("nodeagent: a join token needs a --credential-file to keep the agent token it gets")
	}
	in := RegisterNodeInput{Hostname: e.Hostname}
	if in.Hostname == "" {
		h, err := os.Hostname()
		if err != nil {
			return "", "", fmt.Errorf("nodeagent: hostname: %w", err)
		}
		in.Hostname = strings.ToLower(h)
	}
	version := Version
	in.AgentVersion = &version
	if e.Hypervisor != nil {
		facts := ReadHostFacts("")
		if e.Facts != nil {
			facts = *e.Facts
		}
		pool := hypervisor.PoolSpec{Name: e.Pool, Path: e.PoolPath}
		if pool.Name == "" {
			pool.Name = DefaultPool
		}
		if pool.Path == "" {
			pool.Path = DefaultPoolPath
		}
		ensure := func(ctx context.Context) error { return e.Hypervisor.EnsurePool(ctx, pool) }
		if r, err := readHostReport(ctx, e.Hypervisor, ensure, pool.Name, e.ReservedCPUs, e.DiskCapacityGB, facts); err == nil {
			in.CpuCapacity, in.MemoryCapacityMB, in.DiskCapacityGB = &r.CPUs, &r.MemoryMB, r.DiskGB
			in.DomainType, in.Providers = r.DomainType, r.Providers
			in.OsName, in.OsVersion, in.KernelVersion = r.Facts.pointers()
		}
	}
	anon := &Client{URL: e.APIURL, HTTP: hc} // no bearer: the join token is the credential
	resp, err := registerNode(ctx, anon, e.JoinToken, in)
	if err != nil {
		return "", "", fmt.Errorf("nodeagent: register with the join token: %w", err)
	}
	tok := resp.RegisterNode.Token
	if err := writeSecret(e.CredentialFile, tok); err != nil {
		return "", "", err
	}
	return tok, resp.RegisterNode.Node.Id, nil
}

// writeSecret writes secret to path with mode 0600, atomically.
func writeSecret(path, secret string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("nodeagent: credential directory: %w", err)
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".credential-*")
	if err != nil {
		return fmt.Errorf("nodeagent: write credential: %w", err)
	}
	defer os.Remove(f.Name()) // no-op once renamed
	if err = f.Chmod(0o600); err == nil {
		_, err = f.WriteString(secret + "\n")
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("nodeagent: write credential %s: %w", path, err)
	}
	return nil
}

// revoked reports whether the server refuses c's token as UNAUTHENTICATED (revoked, e.g. by
// reenrollComputeNode). Any other failure (the server unreachable) is not taken for one.
func revoked(ctx context.Context, c *Client) bool {
	_, err := discoverNode(ctx, c)
	var apiErr *Error
	if !errors.As(err, &apiErr) {
		return false
	}
	for _, e := range apiErr.Errors {
		if e.Code() == "UNAUTHENTICATED" {
			return true
		}
	}
	return false
}
