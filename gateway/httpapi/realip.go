package httpapi

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// ParseTrustedProxies reads a comma-separated list of addresses and CIDR prefixes, e.g.
// "10.0.0.0/8, 192.0.2.7"; empty gives none.
func ParseTrustedProxies(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if strings.Contains(part, "/") {
			p, err := netip.ParsePrefix(part)
			if err != nil {
				return nil, fmt.Errorf("trusted proxy %q: want an address or a CIDR prefix", part)
			}
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(part)
		if err != nil {
			return nil, fmt.Errorf("trusted proxy %q: want an address or a CIDR prefix", part)
		}
		a = a.Unmap()
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

// RealIP makes r.RemoteAddr the client's address when the request came through trusted
// proxies: if the peer is one of trusted, X-Forwarded-For is walked from its right end (the
// hop nearest to us), skipping trusted proxies, and the first other address becomes the
// client (with port 0). The left part of the header, which the client itself may have
// written, is never believed past an untrusted hop. Login rate limits, token CIDRs, audit
// rows and logs then see the client, not the load balancer. With no trusted proxies the
// header is ignored.
func RealIP(trusted []netip.Prefix, next http.Handler) http.Handler {
	if len(trusted) == 0 {
		return next
	}
	isTrusted := func(a netip.Addr) bool {
		a = a.Unmap()
		for _, p := range trusted {
			if p.Contains(a) {
				return true
			}
		}
		return false
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		peer, ok := addrOf(r.RemoteAddr)
		if !ok || !isTrusted(peer) {
			next.ServeHTTP(w, r)
			return
		}
		var hops []string
		for _, v := range r.Header.Values("X-Forwarded-For") {
			hops = append(hops, strings.Split(v, ",")...)
		}
		client := netip.Addr{}
		for i := len(hops) - 1; i >= 0; i-- {
			a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
			if err != nil {
				break // a garbled hop: believe nothing further left
			}
			client = a.Unmap()
			if !isTrusted(client) {
				break
			}
		}
		if client.IsValid() {
			r2 := r.Clone(r.Context())
			r2.RemoteAddr = netip.AddrPortFrom(client, 0).String()
			r = r2
		}
		next.ServeHTTP(w, r)
	})
}

func addrOf(remoteAddr string) (netip.Addr, bool) {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}, false
	}
	return a.WithZone("").Unmap(), true
}
