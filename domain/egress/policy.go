package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/store/truncate"
)

// EnvAllow names the environment variable of the operator's allow list (internal/platform/config).
const EnvAllow = "VIRTFLOW_EGRESS_ALLOW"

// MaxRedirects is how many redirects a client of the policy follows.
const MaxRedirects = 5

// ErrDenied is what a connection to an address the policy denies fails with (wrapped in
// the *url.Error of the request).
var ErrDenied = errors.New("address denied by the egress policy")

// deniedError says which address was refused and why.
type deniedError struct {
	addr  netip.Addr
	class string
}

func (e *deniedError) Error() string {
	return fmt.Sprintf("%s is a %s address: %v (allow it with %s)", e.addr, e.class, ErrDenied, EnvAllow)
}

func (e *deniedError) Unwrap() error { return ErrDenied }

// denied is a range the policy denies unless allowed, with its name for messages.
type denied struct {
	prefix netip.Prefix
	class  string
}

// deniedRanges are the non-public ranges (IANA special-purpose registries). The IPv6 forms
// that embed an IPv4 address are not here: Policy.classify judges them by that address.
var deniedRanges = func() []denied {
	var out []denied
	for _, d := range []struct{ cidr, class string }{
		{"0.0.0.0/8", "unspecified"},
		{"10.0.0.0/8", "private"},
		{"100.64.0.0/10", "shared (CGNAT)"},
		{"127.0.0.0/8", "loopback"},
		{"169.254.0.0/16", "link-local"},
		{"172.16.0.0/12", "private"},
		{"192.0.0.0/24", "IETF protocol"},
		{"192.0.2.0/24", "documentation"},
		{"192.88.99.0/24", "6to4 relay"},
		{"192.168.0.0/16", "private"},
		{"198.18.0.0/15", "benchmarking"},
		{"198.51.100.0/24", "documentation"},
		{"203.0.113.0/24", "documentation"},
		{"224.0.0.0/4", "multicast"},
		{"240.0.0.0/4", "reserved"},
		{"::/128", "unspecified"},
		{"::1/128", "loopback"},
		{"::/96", "IPv4-compatible"},
		{"64:ff9b:1::/48", "local NAT64"},
		{"100::/64", "discard"},
		{"2001::/32", "Teredo"},
		{"2001:db8::/32", "documentation"},
		{"fc00::/7", "private (unique local)"},
		{"fe80::/10", "link-local"},
		{"fec0::/10", "site-local"},
		{"ff00::/8", "multicast"},
	} {
		out = append(out, denied{netip.MustParsePrefix(d.cidr), d.class})
	}
	return out
}()

var (
	nat64   = netip.MustParsePrefix("64:ff9b::/96")
	sixTo4  = netip.MustParsePrefix("2002::/16")
	mapped4 = netip.MustParsePrefix("::ffff:0:0/96")
)

// Policy decides which addresses and URLs VirtFlow may connect to. The zero Policy denies
// every non-public address and allows nothing more. A Policy is immutable and safe for
// concurrent use.
type Policy struct {
	nets     []netip.Prefix
	hosts    map[string]bool // exact host names, lower case
	suffixes []string        // ".corp.example" for *.corp.example
	// lookup resolves a host name (net.DefaultResolver when nil).
	lookup func(ctx context.Context, host string) ([]netip.Addr, error)
}

// Parse builds a policy from the operator's allow list: comma- or space-separated CIDRs
// (10.0.0.0/8), addresses (192.0.2.7, taken as /32 or /128), host names (images.internal)
// and wildcard names (*.corp.example, any name under corp.example). Empty allows nothing
// beyond public addresses.
func Parse(allow string) (*Policy, error) {
	p := &Policy{hosts: map[string]bool{}}
	for _, item := range strings.FieldsFunc(allow, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\t' }) {
		switch {
		case strings.Contains(item, "/"):
			pfx, err := netip.ParsePrefix(item)
			if err != nil {
				return nil, fmt.Errorf("%s: %q is not a CIDR: %w", EnvAllow, item, err)
			}
			p.nets = append(p.nets, pfx.Masked())
		case strings.HasPrefix(item, "*."):
			p.suffixes = append(p.suffixes, strings.ToLower(item[1:]))
		default:
			if a, err := netip.ParseAddr(strings.Trim(item, "[]")); err == nil {
				a = a.Unmap()
				p.nets = append(p.nets, netip.PrefixFrom(a, a.BitLen()))
				continue
			}
			if !validHostName(item) {
				return nil, fmt.Errorf("%s: %q is neither a CIDR, an address nor a host name", EnvAllow, item)
			}
			p.hosts[strings.ToLower(strings.TrimSuffix(item, "."))] = true
		}
	}
	return p, nil
}

// MustParse is Parse for lists known to be valid (tests, constants); it panics otherwise.
func MustParse(allow string) *Policy {
	p, err := Parse(allow)
	if err != nil {
		panic(err)
	}
	return p
}

// WithLookup returns a copy of p that resolves host names with lookup: for tests that
// need a name to resolve to a given address.
func (p *Policy) WithLookup(lookup func(ctx context.Context, host string) ([]netip.Addr, error)) *Policy {
	c := *p
	c.lookup = lookup
	return &c
}

// String is the allow list, as Parse reads it.
func (p *Policy) String() string {
	var parts []string
	for _, n := range p.nets {
		parts = append(parts, n.String())
	}
	for h := range p.hosts {
		parts = append(parts, h)
	}
	for _, s := range p.suffixes {
		parts = append(parts, "*"+s)
	}
	return strings.Join(parts, ",")
}

// HostAllowed reports whether host is a name on the allow list (exact or under a wildcard).
func (p *Policy) HostAllowed(host string) bool {
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	if p.hosts[h] {
		return true
	}
	for _, s := range p.suffixes {
		if strings.HasSuffix(h, s) {
			return true
		}
	}
	return false
}

// CheckAddr returns nil when the policy allows connecting to a: a public unicast address,
// or one in an allowed CIDR; else an error wrapping ErrDenied that names the class.
func (p *Policy) CheckAddr(a netip.Addr) error {
	a = a.WithZone("")
	if a.Is4In6() {
		a = a.Unmap()
	}
	for _, n := range p.nets {
		if n.Contains(a) {
			return nil
		}
	}
	if class := classify(a); class != "" {
		return &deniedError{addr: a, class: class}
	}
	return nil
}

// classify is the denied class of a ("" for a public address). IPv6 addresses that carry
// an IPv4 address (mapped, NAT64, 6to4) are the class of that address.
func classify(a netip.Addr) string {
	if !a.IsValid() {
		return "invalid"
	}
	if a.Is6() {
		b := a.As16()
		switch {
		case mapped4.Contains(a):
			return classify(a.Unmap())
		case nat64.Contains(a):
			return classify(netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}))
		case sixTo4.Contains(a):
			return classify(netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}))
		}
	}
	for _, d := range deniedRanges {
		if d.prefix.Contains(a) {
			return d.class
		}
	}
	if a == netip.AddrFrom4([4]byte{255, 255, 255, 255}) {
		return "broadcast"
	}
	return ""
}

// CheckURL checks a URL the server will connect to: http or https, a host, and — when the
// host is a literal address in any spelling — an address the policy allows. Host names
// pass (they are judged when dialled). The error says why, without the field.
func (p *Policy) CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("not a URL: %v", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("only http and https URLs are allowed, got scheme %q", u.Scheme)
	}
	host := u.Hostname()
	if host == "" {
		return errors.New("the URL has no host")
	}
	if u.User != nil {
		return errors.New("credentials in the URL are not allowed")
	}
	if port := u.Port(); port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("port %q is not a TCP port", port)
		}
	}
	if p.HostAllowed(host) {
		return nil
	}
	a, literal, err := literalAddr(host)
	if err != nil {
		return err
	}
	if literal {
		return p.CheckAddr(a)
	}
	return nil
}

// Validate is CheckURL as an API error: VALIDATION naming field, for a URL about to be
// stored (createImage's source, an event rule's hookURL, a group's webhookURL).
func (p *Policy) Validate(field, raw string) error {
	if err := p.CheckURL(raw); err != nil {
		return apierr.Validation(field, "%s is not a URL the server may connect to: %v", truncate.String(raw, 200), err)
	}
	return nil
}

// literalAddr reads host as an IP address the way resolvers do (inet_aton): IPv6 in
// brackets or not, dotted IPv4 with one to four parts, each decimal, octal (leading 0)
// or hexadecimal (0x). literal is false for a host name. A host whose last label is
// numeric but that is not an address (256.1.1.1, 1.2.3.4.5) is an error: a resolver
// might read it as one.
func literalAddr(host string) (a netip.Addr, literal bool, err error) {
	h := strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	if a, err := netip.ParseAddr(h); err == nil {
		return a, true, nil
	}
	if strings.Contains(h, ":") {
		return a, false, fmt.Errorf("host %q is not a valid IPv6 address", host)
	}
	parts := strings.Split(h, ".")
	if !numericLabel(parts[len(parts)-1]) {
		return a, false, nil
	}
	if len(parts) > 4 {
		return a, false, fmt.Errorf("host %q is neither an address nor a host name", host)
	}
	vals := make([]uint64, len(parts))
	for i, s := range parts {
		v, err := parseInetPart(s)
		if err != nil {
			return a, false, fmt.Errorf("host %q is neither an address nor a host name", host)
		}
		vals[i] = v
	}
	// The last part fills the bytes the others left.
	var ip uint64
	for i, v := range vals[:len(vals)-1] {
		if v > 0xff {
			return a, false, fmt.Errorf("host %q is not a valid IPv4 address", host)
		}
		ip |= v << (8 * (3 - i))
	}
	last := vals[len(vals)-1]
	if last >= 1<<(8*(5-len(vals))) {
		return a, false, fmt.Errorf("host %q is not a valid IPv4 address", host)
	}
	ip |= last
	return netip.AddrFrom4([4]byte{byte(ip >> 24), byte(ip >> 16), byte(ip >> 8), byte(ip)}), true, nil
}

// numericLabel reports whether s reads as a number: decimal digits, or 0x and hex digits.
func numericLabel(s string) bool {
	if s == "" {
		return false
	}
	if t, ok := strings.CutPrefix(strings.ToLower(s), "0x"); ok {
		for _, r := range t {
			if !strings.ContainsRune("0123456789abcdef", r) {
				return false
			}
		}
		return true
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// parseInetPart parses one part of an inet_aton address: 0x hex, 0 octal, else decimal.
func parseInetPart(s string) (uint64, error) {
	ls := strings.ToLower(s)
	switch {
	case strings.HasPrefix(ls, "0x"):
		if len(ls) == 2 {
			return 0, nil
		}
		return strconv.ParseUint(ls[2:], 16, 32)
	case len(ls) > 1 && ls[0] == '0':
		return strconv.ParseUint(ls[1:], 8, 32)
	}
	return strconv.ParseUint(ls, 10, 32)
}

// validHostName reports whether s is a DNS host name (letters, digits, hyphens, dots).
func validHostName(s string) bool {
	s = strings.TrimSuffix(s, ".")
	if s == "" || len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
				return false
			}
		}
	}
	return true
}

// control is the dialer's Control: it refuses a connection to an address the policy
// denies. address is what the socket connects to, after resolution.
func (p *Policy) control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("egress: dial %s %s: not an address: %w", network, address, ErrDenied)
	}
	return p.CheckAddr(ap.Addr())
}

// DialContext connects to addr (host:port) under the policy: a host name on the allow
// list is dialled as it resolves; any other host is resolved here and each address is
// dialled through a dialer whose Control refuses a denied address, so the address checked
// is the address connected to.
func (p *Policy) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	if p.HostAllowed(host) {
		return d.DialContext(ctx, network, addr)
	}
	d.Control = p.control
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else if p.lookup != nil {
		addrs, err = p.lookup(ctx, host)
		if err != nil {
			return nil, &net.DNSError{Err: err.Error(), Name: host}
		}
	} else {
		addrs, err = net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		if err != nil {
			return nil, err
		}
	}
	var first error
	for _, a := range addrs {
		c, err := d.DialContext(ctx, network, net.JoinHostPort(a.Unmap().String(), port))
		if err == nil {
			return c, nil
		}
		if first == nil || (errors.Is(err, ErrDenied) && !errors.Is(first, ErrDenied)) {
			first = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	if first == nil {
		first = &net.DNSError{Err: "no addresses", Name: host, IsNotFound: true}
	}
	return nil, first
}

// Transport is an http.Transport that dials under the policy and uses no proxy.
func (p *Policy) Transport() *http.Transport {
	return &http.Transport{
		Proxy:                 nil,
		DialContext:           p.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          32,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}

// Client is an http.Client under the policy: its transport (Transport), at most
// MaxRedirects redirects, each checked as a new URL (CheckURL) and dialled under the
// policy, and dropping the headers named in strip (besides Go's own Authorization and
// Cookie) when a redirect leaves the original host. timeout 0 means none.
func (p *Policy) Client(timeout time.Duration, strip ...string) *http.Client {
	return &http.Client{
		Transport: p.Transport(),
		Timeout:   timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= MaxRedirects {
				return fmt.Errorf("stopped after %d redirects", MaxRedirects)
			}
			if err := p.CheckURL(req.URL.String()); err != nil {
				return fmt.Errorf("redirect to %s: %w", truncate.String(req.URL.String(), 200), err)
			}
			if !strings.EqualFold(req.URL.Host, via[0].URL.Host) {
				for _, h := range strip {
					req.Header.Del(h)
				}
			}
			return nil
		},
	}
}
