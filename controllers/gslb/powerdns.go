package gslb

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
)

// PowerDNS is a client of the PowerDNS authoritative server's HTTP API.
type PowerDNS struct {
	// BaseURL is the webserver's address, e.g. http://127.0.0.1:8081.
	BaseURL string
	// APIKey is the server's api-key.
	APIKey string
	// ServerID is the server of the API path; empty means "localhost".
	ServerID string
	// Client sends the requests; nil means http.DefaultClient.
	Client *http.Client
}

func (p *PowerDNS) server() string {
	if p.ServerID == "" {
		return "localhost"
	}
	return p.ServerID
}

func (p *PowerDNS) do(ctx context.Context, method, path string, body any) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(p.BaseURL, "/")+"/api/v1/servers/"+url.PathEscape(p.server())+path, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("X-API-Key", p.APIKey)
	req.Header.Set("Content-Type", "application/json")
	c := p.Client
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("powerdns %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, out, nil
}

// Canonical is name as PowerDNS spells it: lower-case with a final dot.
func Canonical(name string) string {
	name = strings.ToLower(strings.TrimSpace(name))
	if !strings.HasSuffix(name, ".") {
		name += "."
	}
	return name
}

// EnsureZone creates zone as a native zone with nameserver ns when PowerDNS does not have
// it yet.
func (p *PowerDNS) EnsureZone(ctx context.Context, zone, ns string) error {
	zone = Canonical(zone)
	code, body, err := p.do(ctx, http.MethodGet, "/zones/"+url.PathEscape(zone), nil)
	if err != nil {
		return err
	}
	switch code {
	case http.StatusOK:
		return nil
	case http.StatusNotFound, http.StatusUnprocessableEntity: // no such zone: create it
	default:
		return fmt.Errorf("powerdns: read zone %s: %d %s", zone, code, bytes.TrimSpace(body))
	}
	code, body, err = p.do(ctx, http.MethodPost, "/zones", map[string]any{
		"name": zone, "kind": "Native", "nameservers": []string{Canonical(ns)},
	})
	if err != nil {
		return err
	}
	if code != http.StatusCreated && code != http.StatusConflict {
		return fmt.Errorf("powerdns: create zone %s: %d %s", zone, code, bytes.TrimSpace(body))
	}
	return nil
}

// SetAddresses makes name in zone answer with addrs (A for IPv4, AAAA for IPv6) and ttl
// seconds; an empty addrs removes its records.
func (p *PowerDNS) SetAddresses(ctx context.Context, zone, name string, addrs []netip.Addr, ttl int) error {
	zone, name = Canonical(zone), Canonical(name)
	addrs = slices.Clone(addrs)
	slices.SortFunc(addrs, func(a, b netip.Addr) int { return a.Compare(b) })
	addrs = slices.Compact(addrs)
	var rrsets []map[string]any
	for _, typ := range []string{"A", "AAAA"} {
		var recs []map[string]any
		for _, a := range addrs {
			if (typ == "A") == a.Is4() {
				recs = append(recs, map[string]any{"content": a.String(), "disabled": false})
			}
		}
		if len(recs) == 0 {
			rrsets = append(rrsets, map[string]any{"name": name, "type": typ, "changetype": "DELETE"})
			continue
		}
		rrsets = append(rrsets, map[string]any{"name": name, "type": typ, "ttl": ttl, "changetype": "REPLACE", "records": recs})
	}
	code, body, err := p.do(ctx, http.MethodPatch, "/zones/"+url.PathEscape(zone), map[string]any{"rrsets": rrsets})
	if err != nil {
		return err
	}
	if code != http.StatusNoContent && code != http.StatusOK {
		return fmt.Errorf("powerdns: set %s: %d %s", name, code, bytes.TrimSpace(body))
	}
	return nil
}
