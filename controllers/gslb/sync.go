package gslb

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
)

// Service is one global service in GSLB mode as Sync serves it.
type Service struct {
	// FQDN is the name clients resolve; it must lie in Zone.
	FQDN string
	// TTL is the records' TTL in seconds.
	TTL int
	// Members are its attached region services.
	Members []Member
}

// Result is what Sync pushed.
type Result struct {
	// Answer are the VIPs the name now resolves to (empty: none healthy, records removed).
	Answer []netip.Addr
	// Unhealthy says why each member left out is left out.
	Unhealthy map[string]string
}

// Publisher keeps the GSLB answers of global services in one zone of PowerDNS.
type Publisher struct {
	DNS     *PowerDNS
	Checker Checker
	// Zone is the zone VirtFlow owns in PowerDNS, e.g. gslb.example.com.
	Zone string
	// NameServer is the zone's NS record when Publisher creates the zone.
	NameServer string
}

// Sync checks svc's members and makes its FQDN answer with the healthy members' VIPs.
func (p *Publisher) Sync(ctx context.Context, svc Service) (Result, error) {
	zone, name := Canonical(p.Zone), Canonical(svc.FQDN)
	if name != zone && !strings.HasSuffix(name, "."+zone) {
		return Result{}, fmt.Errorf("fqdn %s is not in the GSLB zone %s", svc.FQDN, p.Zone)
	}
	if svc.TTL < 1 {
		return Result{}, fmt.Errorf("ttl %d: must be at least 1 second", svc.TTL)
	}
	vips, why := p.Checker.Healthy(ctx, svc.Members)
	if err := p.DNS.EnsureZone(ctx, zone, p.NameServer); err != nil {
		return Result{}, err
	}
	if err := p.DNS.SetAddresses(ctx, zone, name, vips, svc.TTL); err != nil {
		return Result{}, err
	}
	return Result{Answer: vips, Unhealthy: why}, nil
}
