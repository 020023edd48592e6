// Package ratekey names what a rate limiter counts against, the same way for every limiter of
// the platform (login attempts in identity, guest readiness calls in guest): one source is an
// IPv4 address, or an IPv6 address's /64, since one subscriber usually holds a whole /64.
package ratekey

import (
	"crypto/sha256"
	"encoding/hex"
	"net/netip"
)

// Part makes s fit in a Redis key: as it is up to 64 bytes, else its SHA-256.
func Part(s string) string {
	if len(s) <= 64 {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Source is the key failures from address ip are counted against: an IPv4 address itself
// (IPv4-mapped IPv6 included), an IPv6 address's /64, "unknown" for none, anything else as
// given (through Part).
func Source(ip string) string {
	addr, err := netip.ParseAddr(ip)
	if err != nil {
		if ip == "" {
			return "unknown"
		}
		return Part(ip)
	}
	addr = addr.WithZone("").Unmap()
	if addr.Is6() {
		return netip.PrefixFrom(addr, 64).Masked().String()
	}
	return addr.String()
}
