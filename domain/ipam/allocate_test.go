package ipam_test

import (
	"strings"
	"testing"

	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/domain/ipam"
	"github.com/virtflow/virtflow/ent/ipaddress"
)

func TestAllocateNext(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		name          string
		cidr, gateway string
		ranges, addrs []string
		want          []string // successive allocations; "" = RESOURCE_EXHAUSTED
	}{
		{name: "skips the network address", cidr: "10.0.0.0/24", want: []string{"10.0.0.1", "10.0.0.2"}},
		{name: "skips the gateway", cidr: "10.0.0.0/24", gateway: "10.0.0.1", want: []string{"10.0.0.2", "10.0.0.3"}},
		{name: "skips taken and reserved addresses", cidr: "10.0.0.0/24", gateway: "10.0.0.1",
			addrs: []string{"10.0.0.2", "r:10.0.0.3", "10.0.0.5"}, want: []string{"10.0.0.4", "10.0.0.6"}},
		{name: "skips reserved ranges", cidr: "10.0.0.0/24", gateway: "10.0.0.1",
			ranges: []string{"10.0.0.2-10.0.0.49", "10.0.0.51-10.0.0.99"}, want: []string{"10.0.0.50", "10.0.0.100"}},
		{name: "skips the broadcast address", cidr: "10.0.0.0/24", ranges: []string{"10.0.0.1-10.0.0.253"},
			want: []string{"10.0.0.254", ""}},
		{name: "/30", cidr: "10.0.0.0/30", gateway: "10.0.0.1", want: []string{"10.0.0.2", ""}},
		{name: "/31 uses both addresses", cidr: "10.0.0.0/31", want: []string{"10.0.0.0", "10.0.0.1", ""}},
		{name: "/32", cidr: "192.0.2.7/32", want: []string{"192.0.2.7", ""}},
		{name: "IPv6 /64 skips the subnet-router anycast address", cidr: "2001:db8::/64", want: []string{"2001:db8::1", "2001:db8::2"}},
		{name: "IPv6 /64 with a gateway", cidr: "2001:db8::/64", gateway: "2001:db8::1", want: []string{"2001:db8::2", "2001:db8::3"}},
		{name: "IPv6 /127 uses both addresses", cidr: "2001:db8:7::/127", want: []string{"2001:db8:7::", "2001:db8:7::1", ""}},
		{name: "IPv6 /64 past a range", cidr: "2001:db8::/64", ranges: []string{"2001:db8::1-2001:db8::ffff"},
			want: []string{"2001:db8::1:0"}},
		{name: "IPv6 /64 nearly full, without walking it", cidr: "2001:db8:1::/64",
			ranges: []string{"2001:db8:1::1-2001:db8:1::ffff:ffff:ffff:fffe"}, want: []string{"2001:db8:1:0:ffff:ffff:ffff:ffff", ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := f.network(tt.cidr, tt.gateway)
			f.ranges(n, tt.ranges...)
			f.addrs(n, tt.addrs...)
			for _, want := range tt.want {
				before := f.count(n)
				ip, err := ipam.Allocate(f.ctx, f.c, ipam.Request{NetworkID: n.ID})
				if want == "" {
					expectAPIError(t, err, apierr.CodeExhausted, "networkID")
					if f.count(n) != before {
						t.Errorf("a failed allocation recorded an address")
					}
					continue
				}
				if err != nil {
					t.Fatalf("allocate, want %s: %v", want, err)
				}
				if ip.Address != want || ip.Status != ipaddress.StatusAllocated {
					t.Fatalf("allocated %s (%s), want %s (ALLOCATED)", ip.Address, ip.Status, want)
				}
			}
		})
	}
}

func TestAllocateSpecific(t *testing.T) {
	f := newFixture(t)
	n := f.network("10.1.0.0/24", "10.1.0.1")
	f.ranges(n, "10.1.0.200-10.1.0.220")
	f.addrs(n, "10.1.0.5")
	v6 := f.network("2001:db8:5::/64", "")

	tests := []struct {
		name    string
		network int
		address string
		status  ipaddress.Status
		code    apierr.Code // "" = success
		field   string
		want    string // stored form, on success
	}{
		{name: "free address", address: "10.1.0.10", want: "10.1.0.10"},
		{name: "reserved status", address: "10.1.0.11", status: ipaddress.StatusReserved, want: "10.1.0.11"},
		{name: "IPv6 in canonical form", network: v6.ID, address: "2001:DB8:5:0::00AB", want: "2001:db8:5::ab"},
		{name: "taken", address: "10.1.0.5", code: apierr.CodeConflict, field: "address"},
		{name: "outside the network", address: "10.2.0.10", code: apierr.CodeValidation, field: "address"},
		{name: "network address", address: "10.1.0.0", code: apierr.CodeValidation, field: "address"},
		{name: "broadcast address", address: "10.1.0.255", code: apierr.CodeValidation, field: "address"},
		{name: "gateway", address: "10.1.0.1", code: apierr.CodeValidation, field: "address"},
		{name: "inside a reserved range", address: "10.1.0.210", code: apierr.CodeValidation, field: "address"},
		{name: "inside a reserved range, even as RESERVED", address: "10.1.0.200", status: ipaddress.StatusReserved, code: apierr.CodeValidation, field: "address"},
		{name: "IPv6 in an IPv4 network", address: "2001:db8:5::1", code: apierr.CodeValidation, field: "address"},
		{name: "not an address", address: "10.1.0.300", code: apierr.CodeValidation, field: "address"},
		{name: "prefix instead of an address", address: "10.1.0.7/24", code: apierr.CodeValidation, field: "address"},
		{name: "network that does not exist", network: -1, address: "10.1.0.12", code: apierr.CodeValidation, field: "networkID"},
		{name: "bad status", address: "10.1.0.13", status: "RELEASED", code: apierr.CodeValidation, field: "status"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := ipam.Request{NetworkID: n.ID, Address: ptr(tt.address)}
			if tt.network != 0 {
				req.NetworkID = tt.network
			}
			if tt.status != "" {
				req.Status = ptr(tt.status)
			}
			before := f.count(n)
			ip, err := ipam.Allocate(f.ctx, f.c, req)
			if tt.code != "" {
				e := expectAPIError(t, err, tt.code, tt.field)
				if tt.field == "address" && !strings.Contains(e.Message, strings.ToLower(strings.Split(tt.address, "/")[0])) && tt.name != "not an address" {
					t.Errorf("message %q does not name the address %s", e.Message, tt.address)
				}
				if f.count(n) != before {
					t.Errorf("a failed allocation recorded an address")
				}
				return
			}
			if err != nil {
				t.Fatalf("allocate %s: %v", tt.address, err)
			}
			wantStatus := ipaddress.StatusAllocated
			if tt.status != "" {
				wantStatus = tt.status
			}
			if ip.Address != tt.want || ip.Status != wantStatus {
				t.Errorf("allocated %s (%s), want %s (%s)", ip.Address, ip.Status, tt.want, wantStatus)
			}
		})
	}
}

func TestAllocateBindings(t *testing.T) {
	f := newFixture(t)
	n := f.network("10.3.0.0/24", "10.3.0.1")

	t.Run("port, DNS name and description", func(t *testing.T) {
		p := f.port()
		ip, err := ipam.Allocate(f.ctx, f.c, ipam.Request{NetworkID: n.ID, PortID: &p.ID, DNSName: ptr("web1.example.com"), Description: ptr("web")})
		if err != nil {
			t.Fatal(err)
		}
		got, err := f.c.IPAddress.Query().Where(ipaddress.ID(ip.ID)).WithPort().Only(f.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got.Edges.Port == nil || got.Edges.Port.ID != p.ID || got.DNSName != "web1.example.com" || got.Description != "web" {
			t.Errorf("stored %+v with port %v, want port %d, dnsName and description", got, got.Edges.Port, p.ID)
		}
	})

	t.Run("load balancer VIP, once", func(t *testing.T) {
		lb := f.loadBalancer()
		ip, err := ipam.Allocate(f.ctx, f.c, ipam.Request{NetworkID: n.ID, LoadBalancerID: &lb.ID})
		if err != nil {
			t.Fatal(err)
		}
		vip, err := lb.QueryVip().Only(f.ctx)
		if err != nil || vip.ID != ip.ID {
			t.Fatalf("load balancer VIP = %v (%v), want %s", vip, err, ip.Address)
		}
		before := f.count(n)
		_, err = ipam.Allocate(f.ctx, f.c, ipam.Request{NetworkID: n.ID, LoadBalancerID: &lb.ID})
		e := expectAPIError(t, err, apierr.CodeConflict, "loadBalancerID")
		if !strings.Contains(e.Message, ip.Address) {
			t.Errorf("message %q does not name the current VIP %s", e.Message, ip.Address)
		}
		if f.count(n) != before {
			t.Errorf("a refused VIP allocation recorded an address")
		}
	})

	t.Run("references that do not exist", func(t *testing.T) {
		before := f.count(n)
		_, err := ipam.Allocate(f.ctx, f.c, ipam.Request{NetworkID: n.ID, PortID: ptr(n.ID)}) // a network's id is no port's
		expectAPIError(t, err, apierr.CodeValidation, "portID")
		_, err = ipam.Allocate(f.ctx, f.c, ipam.Request{NetworkID: n.ID, LoadBalancerID: ptr(n.ID)})
		expectAPIError(t, err, apierr.CodeValidation, "loadBalancerID")
		if f.count(n) != before {
			t.Errorf("a failed allocation recorded an address")
		}
	})

	t.Run("DNS name too long", func(t *testing.T) {
		before := f.count(n)
		_, err := ipam.Allocate(f.ctx, f.c, ipam.Request{NetworkID: n.ID, DNSName: ptr(strings.Repeat("a", 254))})
		expectAPIError(t, err, apierr.CodeValidation, "dnsName")
		if f.count(n) != before {
			t.Errorf("a failed allocation recorded an address")
		}
	})
}

func TestAllocateInCallersTransaction(t *testing.T) {
	f := newFixture(t)
	n := f.network("10.4.0.0/24", "")
	tx, err := f.c.Tx(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	ip, err := ipam.Allocate(f.ctx, tx.Client(), ipam.Request{NetworkID: n.ID})
	if err != nil {
		t.Fatal(err)
	}
	if ip.Address != "10.4.0.1" {
		t.Errorf("allocated %s, want 10.4.0.1", ip.Address)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if c := f.count(n); c != 0 {
		t.Errorf("the caller rolled back, yet %d addresses remain: Allocate committed on its own", c)
	}
}

func TestRelease(t *testing.T) {
	f := newFixture(t)
	n := f.network("10.5.0.0/29", "10.5.0.1")

	var got []string
	var ids []int
	for range 5 {
		ip, err := ipam.Allocate(f.ctx, f.c, ipam.Request{NetworkID: n.ID})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ip.Address)
		ids = append(ids, ip.ID)
	}
	if strings.Join(got, " ") != "10.5.0.2 10.5.0.3 10.5.0.4 10.5.0.5 10.5.0.6" {
		t.Fatalf("allocated %v", got)
	}
	_, err := ipam.Allocate(f.ctx, f.c, ipam.Request{NetworkID: n.ID})
	expectAPIError(t, err, apierr.CodeExhausted, "networkID")

	if id, err := ipam.Release(f.ctx, f.c, ids[1], false); err != nil || id != ids[1] {
		t.Fatalf("release = %d, %v", id, err)
	}
	ip, err := ipam.Allocate(f.ctx, f.c, ipam.Request{NetworkID: n.ID})
	if err != nil {
		t.Fatal(err)
	}
	if ip.Address != "10.5.0.3" {
		t.Errorf("after releasing 10.5.0.3 the next allocation got %s, want 10.5.0.3 again", ip.Address)
	}

	_, err = ipam.Release(f.ctx, f.c, ids[1], false) // already gone
	expectAPIError(t, err, apierr.CodeNotFound, "")

	t.Run("a VIP is not released", func(t *testing.T) {
		n := f.network("10.5.1.0/24", "")
		lb := f.loadBalancer()
		vip, err := ipam.Allocate(f.ctx, f.c, ipam.Request{NetworkID: n.ID, LoadBalancerID: &lb.ID})
		if err != nil {
			t.Fatal(err)
		}
		_, err = ipam.Release(f.ctx, f.c, vip.ID, false)
		e := expectAPIError(t, err, apierr.CodeConflict, "id")
		if !strings.Contains(e.Message, lb.Name) {
			t.Errorf("message %q does not name the load balancer %s", e.Message, lb.Name)
		}
		if f.count(n) != 1 {
			t.Fatalf("the VIP was deleted")
		}
		if err := f.c.LoadBalancer.UpdateOne(lb).ClearVip().Exec(f.ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := ipam.Release(f.ctx, f.c, vip.ID, false); err != nil {
			t.Fatalf("release after clearing the VIP: %v", err)
		}
		if f.count(n) != 0 {
			t.Errorf("the address was not deleted")
		}
	})

	t.Run("an address bound to a port is released", func(t *testing.T) {
		n := f.network("10.5.2.0/24", "")
		p := f.port()
		ip, err := ipam.Allocate(f.ctx, f.c, ipam.Request{NetworkID: n.ID, PortID: &p.ID})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ipam.Release(f.ctx, f.c, ip.ID, false); err != nil {
			t.Fatal(err)
		}
		if c, _ := p.QueryIPAddresses().Count(f.ctx); c != 0 {
			t.Errorf("port still has %d addresses", c)
		}
	})
}
