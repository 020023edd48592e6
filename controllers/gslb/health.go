package gslb

import (
	"context"
	"net"
	"net/netip"
	"slices"
	"sync"
	"time"
)

// Member is a region service of a global service as the GSLB sees it.
type Member struct {
	// Name names the member in reasons (the region service's name).
	Name string
	// VIP and Port are where its load balancer accepts clients (the first listener).
	VIP  netip.Addr
	Port int
	// Forwarding says whether its load-balancer nodes report that they forward.
	Forwarding bool
}

// Checker checks a member's VIP by opening a TCP connection to it.
type Checker struct {
	// Dial opens the connection: the process's egress policy (egress.Policy.DialContext),
	// so a check reaches only what outbound connections may. Nil fails every check.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Timeout bounds one check; zero means one second.
	Timeout time.Duration
}

// Check reports whether m is healthy: it forwards and its VIP accepts a connection.
func (c Checker) Check(ctx context.Context, m Member) (bool, string) {
	if !m.VIP.IsValid() {
		return false, "no VIP"
	}
	if !m.Forwarding {
		return false, "its load balancer does not forward"
	}
	if m.Port == 0 {
		return false, "its load balancer has no listener"
	}
	to := c.Timeout
	if to <= 0 {
		to = time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, to)
	defer cancel()
	if c.Dial == nil {
		return false, "VIP check: no dialer configured"
	}
	conn, err := c.Dial(ctx, "tcp", netip.AddrPortFrom(m.VIP, uint16(m.Port)).String())
	if err != nil {
		return false, "VIP check: " + err.Error()
	}
	_ = conn.Close()
	return true, ""
}

// Healthy checks members concurrently and returns the VIPs of the healthy ones (sorted,
// without duplicates: in anycast mode several regions share one VIP) and, per unhealthy
// member name, why.
func (c Checker) Healthy(ctx context.Context, members []Member) ([]netip.Addr, map[string]string) {
	var (
		mu      sync.Mutex
		wg      sync.WaitGroup
		vips    []netip.Addr
		reasons = map[string]string{}
	)
	for _, m := range members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, why := c.Check(ctx, m)
			mu.Lock()
			defer mu.Unlock()
			if ok {
				vips = append(vips, m.VIP)
			} else {
				reasons[m.Name] = why
			}
		}()
	}
	wg.Wait()
	slices.SortFunc(vips, func(a, b netip.Addr) int { return a.Compare(b) })
	return slices.Compact(vips), reasons
}
