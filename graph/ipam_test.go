package graph_test

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/virtflow/virtflow/internal/testkit/gqltest"
)

// IPAM through the real HTTP handler: allocateIPAddress, releaseIPAddress, reserved ranges,
// Network.utilization and Network.freeRanges. Package ipam tests the allocator itself.

const ipamAllocateMutation = `mutation($input: AllocateIPAddressInput!) {
  allocateIPAddress(input: $input) { id address status dnsName description network { id } port { id } loadBalancer { id } }
}`

// ipamAddress is an allocated address as the mutation returns it.
type ipamAddress struct {
	ID           string `json:"id"`
	Address      string `json:"address"`
	Status       string `json:"status"`
	DNSName      string `json:"dnsName"`
	Description  string `json:"description"`
	Network      struct{ ID string }
	Port         *struct{ ID string }
	LoadBalancer *struct{ ID string }
}

// ipamAllocate runs allocateIPAddress(input: in) and fails the test on any error.
func ipamAllocate(t testing.TB, env *gqltest.Env, in map[string]any) ipamAddress {
	t.Helper()
	var out struct{ AllocateIPAddress ipamAddress }
	env.MustDo(t, ipamAllocateMutation, map[string]any{"input": in}, &out)
	return out.AllocateIPAddress
}

// ipamTryAllocate runs allocateIPAddress(input: in) and returns the raw response.
func ipamTryAllocate(t testing.TB, env *gqltest.Env, in map[string]any) gqltest.Response {
	t.Helper()
	return env.Do(t, ipamAllocateMutation, map[string]any{"input": in})
}

// ipamAddressCount returns how many addresses network id records, counted by SQL.
func ipamAddressCount(t testing.TB, env *gqltest.Env, network string) int {
	t.Helper()
	var n int
	if err := env.DB.DB.QueryRow(`SELECT count(*) FROM ip_addresses WHERE network_ip_addresses = $1`, atoi(t, network)).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestIPAMAllocate(t *testing.T) {
	env, f := newEnv(t)
	net := f.Network(map[string]any{"cidr": "10.40.0.0/24", "gateway": "10.40.0.1"})

	first := ipamAllocate(t, env, map[string]any{"networkID": net})
	if first.Address != "10.40.0.2" || first.Status != "ALLOCATED" || first.Network.ID != net {
		t.Errorf("first allocation = %+v, want 10.40.0.2 ALLOCATED in network %s", first, net)
	}
	second := ipamAllocate(t, env, map[string]any{"networkID": net, "dnsName": "db1.example.com", "description": "primary"})
	if second.Address != "10.40.0.3" || second.DNSName != "db1.example.com" || second.Description != "primary" {
		t.Errorf("second allocation = %+v, want 10.40.0.3 with its DNS name and description", second)
	}
	specific := ipamAllocate(t, env, map[string]any{"networkID": net, "address": "10.40.0.100", "status": "RESERVED"})
	if specific.Address != "10.40.0.100" || specific.Status != "RESERVED" {
		t.Errorf("specific allocation = %+v, want 10.40.0.100 RESERVED", specific)
	}

	t.Run("the answer counts the new address", func(t *testing.T) {
		var out struct {
			AllocateIPAddress struct {
				Network struct {
					Utilization struct{ Allocated float64 }
					FreeRanges  []struct{ Start string }
				}
			}
		}
		env.MustDo(t, `mutation($input: AllocateIPAddressInput!) {
  allocateIPAddress(input: $input) { network { utilization { allocated } freeRanges(first: 1) { start } } }
}`, map[string]any{"input": map[string]any{"networkID": net}}, &out)
		got := out.AllocateIPAddress.Network
		// the gateway, 10.40.0.2, .3, .100 and now .4
		if got.Utilization.Allocated != 4 || len(got.FreeRanges) != 1 || got.FreeRanges[0].Start != "10.40.0.5" {
			t.Errorf("network in the answer = %+v, want 4 allocated (1 reserved) and 10.40.0.5 free next", got)
		}
	})

	t.Run("bound to a port", func(t *testing.T) {
		port := f.Port()
		ip := ipamAllocate(t, env, map[string]any{"networkID": net, "portID": port})
		if ip.Port == nil || ip.Port.ID != port {
			t.Fatalf("allocation = %+v, want bound to port %s", ip, port)
		}
		node := f.node(port, `... on Port { ipAddresses { edges { node { address } } } }`)
		if fmt.Sprint(node["ipAddresses"]) != fmt.Sprintf("map[edges:[map[node:map[address:%s]]]]", ip.Address) {
			t.Errorf("port's addresses = %v, want %s", node["ipAddresses"], ip.Address)
		}
	})

	t.Run("VIP of a load balancer", func(t *testing.T) {
		lb := f.create("LoadBalancer", map[string]any{"name": uniq("lb"), "tenantID": f.Tenant()})
		ip := ipamAllocate(t, env, map[string]any{"networkID": net, "loadBalancerID": lb})
		if ip.LoadBalancer == nil || ip.LoadBalancer.ID != lb {
			t.Fatalf("allocation = %+v, want the VIP of load balancer %s", ip, lb)
		}
		node := f.node(lb, `... on LoadBalancer { vip { address } }`)
		if fmt.Sprint(node["vip"]) != fmt.Sprintf("map[address:%s]", ip.Address) {
			t.Errorf("load balancer VIP = %v, want %s", node["vip"], ip.Address)
		}
		before := ipamAddressCount(t, env, net)
		ipamTryAllocate(t, env, map[string]any{"networkID": net, "loadBalancerID": lb}).ExpectError(t, "CONFLICT", "loadBalancerID")
		if ipamAddressCount(t, env, net) != before {
			t.Errorf("a refused second VIP recorded an address")
		}
	})
}

func TestIPAMAllocateErrors(t *testing.T) {
	env, f := newEnv(t)
	net := f.Network(map[string]any{"cidr": "10.41.0.0/24", "gateway": "10.41.0.1"})
	ipamAllocate(t, env, map[string]any{"networkID": net, "address": "10.41.0.5"})
	f.create("IPRange", map[string]any{"networkID": net, "startAddress": "10.41.0.200", "endAddress": "10.41.0.254"})
	tiny := f.Network(map[string]any{"cidr": "10.41.1.0/30", "gateway": "10.41.1.1"})
	ipamAllocate(t, env, map[string]any{"networkID": tiny})

	tests := []struct {
		name        string
		in          map[string]any
		code, field string
	}{
		{"address outside the network", map[string]any{"networkID": net, "address": "10.99.0.5"}, "VALIDATION", "address"},
		{"broadcast address", map[string]any{"networkID": net, "address": "10.41.0.255"}, "VALIDATION", "address"},
		{"gateway", map[string]any{"networkID": net, "address": "10.41.0.1"}, "VALIDATION", "address"},
		{"inside a reserved range", map[string]any{"networkID": net, "address": "10.41.0.222"}, "VALIDATION", "address"},
		{"not an address", map[string]any{"networkID": net, "address": "ten"}, "VALIDATION", "address"},
		{"address taken", map[string]any{"networkID": net, "address": "10.41.0.5"}, "CONFLICT", "address"},
		{"network that does not exist", map[string]any{"networkID": "999999999"}, "VALIDATION", "networkID"},
		{"port that does not exist", map[string]any{"networkID": net, "portID": net}, "VALIDATION", "portID"},
		{"load balancer that does not exist", map[string]any{"networkID": net, "loadBalancerID": net}, "VALIDATION", "loadBalancerID"},
		{"full network", map[string]any{"networkID": tiny}, "RESOURCE_EXHAUSTED", "networkID"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := ipamAddressCount(t, env, net) + ipamAddressCount(t, env, tiny)
			e := ipamTryAllocate(t, env, tt.in).ExpectError(t, tt.code, tt.field)
			if e.Message == "" {
				t.Errorf("no message")
			}
			if after := ipamAddressCount(t, env, net) + ipamAddressCount(t, env, tiny); after != before {
				t.Errorf("%d addresses recorded by a failed allocation", after-before)
			}
		})
	}

	t.Run("nothing half-written", func(t *testing.T) {
		// Two allocations in one mutation share its transaction: the second fails, so the
		// first is not kept either.
		fresh := f.Network(map[string]any{"cidr": "10.41.2.0/24"})
		r := env.Do(t, `mutation($a: AllocateIPAddressInput!, $b: AllocateIPAddressInput!) {
  a: allocateIPAddress(input: $a) { address }
  b: allocateIPAddress(input: $b) { address }
}`, map[string]any{
			"a": map[string]any{"networkID": fresh},
			"b": map[string]any{"networkID": fresh, "address": "10.41.3.1"},
		})
		r.ExpectError(t, "VALIDATION", "address")
		if n := ipamAddressCount(t, env, fresh); n != 0 {
			t.Errorf("%d addresses kept from a failed mutation", n)
		}
	})
}

func TestIPAMRelease(t *testing.T) {
	env, f := newEnv(t)
	net := f.Network(map[string]any{"cidr": "10.42.0.0/24", "gateway": "10.42.0.1"})
	var ids []string
	for range 3 {
		ids = append(ids, ipamAllocate(t, env, map[string]any{"networkID": net}).ID)
	}
	var out struct{ ReleaseIPAddress string }
	env.MustDo(t, `mutation($id: ID!) { releaseIPAddress(id: $id) }`, map[string]any{"id": ids[0]}, &out)
	if out.ReleaseIPAddress != ids[0] {
		t.Errorf("releaseIPAddress = %q, want %s", out.ReleaseIPAddress, ids[0])
	}
	if again := ipamAllocate(t, env, map[string]any{"networkID": net}); again.Address != "10.42.0.2" {
		t.Errorf("after releasing 10.42.0.2 the next allocation got %s", again.Address)
	}
	env.Do(t, `mutation($id: ID!) { releaseIPAddress(id: $id) }`, map[string]any{"id": ids[0]}).ExpectError(t, "NOT_FOUND", "")

	lb := f.create("LoadBalancer", map[string]any{"name": uniq("lb"), "tenantID": f.Tenant()})
	vip := ipamAllocate(t, env, map[string]any{"networkID": net, "loadBalancerID": lb})
	env.Do(t, `mutation($id: ID!) { releaseIPAddress(id: $id) }`, map[string]any{"id": vip.ID}).ExpectError(t, "CONFLICT", "id")
	f.update("LoadBalancer", lb, map[string]any{"clearVip": true})
	env.MustDo(t, `mutation($id: ID!) { releaseIPAddress(id: $id) }`, map[string]any{"id": vip.ID}, nil)
}

func TestIPAMRanges(t *testing.T) {
	env, f := newEnv(t)
	net := f.Network(map[string]any{"cidr": "10.43.0.0/24", "gateway": "10.43.0.1"})
	f.create("IPRange", map[string]any{"networkID": net, "startAddress": "10.43.0.2", "endAddress": "10.43.0.99", "description": "DHCP"})

	tests := []struct {
		name       string
		start, end string
		network    string
		field      string
	}{
		{"outside the prefix", "10.43.1.1", "10.43.1.9", net, "startAddress"},
		{"reversed", "10.43.0.150", "10.43.0.140", net, "endAddress"},
		{"overlapping", "10.43.0.90", "10.43.0.110", net, "startAddress"},
		{"mixed family", "10.43.0.150", "2001:db8::1", net, "endAddress"},
		{"broadcast", "10.43.0.250", "10.43.0.255", net, "endAddress"},
		{"network that does not exist", "10.43.0.150", "10.43.0.160", "999999999", "networkID"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.tryCreate("IPRange", map[string]any{"networkID": tt.network, "startAddress": tt.start, "endAddress": tt.end}).
				ExpectError(t, "VALIDATION", tt.field)
		})
	}

	if ip := ipamAllocate(t, env, map[string]any{"networkID": net}); ip.Address != "10.43.0.100" {
		t.Errorf("allocation got %s, want 10.43.0.100 after the reserved range", ip.Address)
	}

	var out struct {
		Node struct {
			Utilization map[string]any
			FreeRanges  []map[string]any
		}
	}
	env.MustDo(t, `query($id: ID!) { node(id: $id) { ... on Network {
  utilization { prefix size usable allocated reserved free percentUsed }
  freeRanges(first: 2) { start end size }
} } }`, map[string]any{"id": net}, &out)
	u := out.Node.Utilization
	want := map[string]any{"prefix": "10.43.0.0/24", "size": 256.0, "usable": 254.0, "allocated": 2.0, "reserved": 98.0, "free": 154.0}
	for k, v := range want {
		if u[k] != v {
			t.Errorf("utilization.%s = %v, want %v", k, u[k], v)
		}
	}
	if p, _ := u["percentUsed"].(float64); p < 39.37 || p > 39.38 {
		t.Errorf("utilization.percentUsed = %v, want 100/254 × 100", u["percentUsed"])
	}
	if fmt.Sprint(out.Node.FreeRanges) != "[map[end:10.43.0.254 size:154 start:10.43.0.101]]" {
		t.Errorf("freeRanges = %v", out.Node.FreeRanges)
	}
	env.Do(t, `query($id: ID!) { node(id: $id) { ... on Network { freeRanges(first: -1) { start } } } }`, map[string]any{"id": net}).
		ExpectError(t, "VALIDATION", "first")
}

// TestIPAMConcurrentAllocations: 1,000 allocateIPAddress requests from 32 goroutines, each
// its own HTTP request and transaction, hand out 1,000 distinct addresses — checked by
// PostgreSQL at the end.
func TestIPAMConcurrentAllocations(t *testing.T) {
	env, f := newEnv(t)
	net := f.Network(map[string]any{"cidr": "10.44.0.0/22", "gateway": "10.44.0.1"})
	res := ipamRace(t, env, net, 1000, 32)
	if len(res.errs) > 0 {
		t.Errorf("failed allocations: %v", res.errs)
	}
	if len(res.addrs) != 1000 || res.dups != 0 {
		t.Fatalf("%d allocations, %d duplicates; want 1,000 distinct", len(res.addrs), res.dups)
	}
	var rows, distinct int
	err := env.DB.DB.QueryRow(`SELECT count(*), count(DISTINCT address) FROM ip_addresses WHERE network_ip_addresses = $1`, atoi(t, net)).
		Scan(&rows, &distinct)
	if err != nil {
		t.Fatal(err)
	}
	if rows != 1000 || distinct != 1000 {
		t.Fatalf("the database holds %d addresses, %d distinct; want 1,000", rows, distinct)
	}
}

// BenchmarkIPAMConcurrentAllocations measures 1,000 allocateIPAddress requests in a fresh /22
// from 32 goroutines through the whole HTTP stack (authentication, transaction, audit row) on
// PostgreSQL, and reports allocations per second and duplicates (must be 0).
func BenchmarkIPAMConcurrentAllocations(b *testing.B) {
	env, f := newEnv(b)
	var (
		total time.Duration
		dups  int
	)
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		net := f.Network(map[string]any{"cidr": "10.45.0.0/22", "gateway": "10.45.0.1"})
		b.StartTimer()
		res := ipamRace(b, env, net, 1000, 32)
		if len(res.errs) > 0 || len(res.addrs) != 1000 {
			b.Fatalf("%d allocations, errors %v", len(res.addrs), res.errs)
		}
		total += res.elapsed
		dups += res.dups
		b.StopTimer()
		// Leave the table as the next round found it: ip_addresses has no index on its
		// network column, so every round would otherwise read more rows than the last.
		if _, err := env.DB.DB.Exec(`DELETE FROM ip_addresses WHERE network_ip_addresses = $1`, atoi(b, net)); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(1000*b.N)/total.Seconds(), "allocs/s")
	b.ReportMetric(float64(dups), "duplicates")
	b.ReportMetric(0, "ns/op")
}

type ipamRaceResult struct {
	addrs   []string
	dups    int
	errs    map[string]int
	elapsed time.Duration
}

// ipamRace sends total allocateIPAddress requests for network from workers goroutines.
func ipamRace(t testing.TB, env *gqltest.Env, network string, total, workers int) ipamRaceResult {
	var (
		mu    sync.Mutex
		wg    sync.WaitGroup
		res   = ipamRaceResult{errs: map[string]int{}}
		seen  = map[string]bool{}
		jobs  = make(chan struct{}, total)
		start = make(chan struct{})
	)
	for range total {
		jobs <- struct{}{}
	}
	close(jobs)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for range jobs {
				r := env.Do(t, `mutation($input: AllocateIPAddressInput!) { allocateIPAddress(input: $input) { address } }`,
					map[string]any{"input": map[string]any{"networkID": network}})
				var out struct{ AllocateIPAddress struct{ Address string } }
				mu.Lock()
				if len(r.Errors) > 0 {
					res.errs[r.Errors[0].Code()+" "+r.Errors[0].Message]++
				} else if err := json.Unmarshal(r.Data, &out); err != nil {
					res.errs[err.Error()]++
				} else {
					a := out.AllocateIPAddress.Address
					if seen[a] {
						res.dups++
					}
					seen[a] = true
					res.addrs = append(res.addrs, a)
				}
				mu.Unlock()
			}
		}()
	}
	began := time.Now()
	close(start)
	wg.Wait()
	res.elapsed = time.Since(began)
	return res
}

// TestIPAMAuthorization: allocating and releasing are writes; a read-only token may look at a
// network's utilization but not change its addresses.
func TestIPAMAuthorization(t *testing.T) {
	env, f := newEnv(t)
	net := f.Network(map[string]any{"cidr": "10.46.0.0/24"})
	ip := ipamAllocate(t, env, map[string]any{"networkID": net})
	var tok struct{ CreateAPIToken struct{ Token string } }
	env.MustDo(t, `mutation { createAPIToken(input: {name: "ipam-read-only", scope: READ_ONLY}) { token } }`, nil, &tok)
	ro := env.As(tok.CreateAPIToken.Token)

	ipamTryAllocate(t, ro, map[string]any{"networkID": net}).ExpectError(t, "FORBIDDEN", "")
	ro.Do(t, `mutation($id: ID!) { releaseIPAddress(id: $id) }`, map[string]any{"id": ip.ID}).ExpectError(t, "FORBIDDEN", "")
	if n := ipamAddressCount(t, env, net); n != 1 {
		t.Errorf("network holds %d addresses after refused writes, want 1", n)
	}
	var out struct {
		Node struct{ Utilization struct{ Allocated float64 } }
	}
	ro.MustDo(t, `query($id: ID!) { node(id: $id) { ... on Network { utilization { allocated } } } }`, map[string]any{"id": net}, &out)
	if out.Node.Utilization.Allocated != 1 {
		t.Errorf("utilization.allocated = %v, want 1", out.Node.Utilization.Allocated)
	}
}

// TestIPAMAllocateRacesCreateIPAddress: allocations and createIPAddress of the same low
// addresses, all at once. Every allocation succeeds, a create fails only with CONFLICT on its
// address (the allocator got there first), and no address is recorded twice.
func TestIPAMAllocateRacesCreateIPAddress(t *testing.T) {
	env, f := newEnv(t)
	net := f.Network(map[string]any{"cidr": "10.47.0.0/22", "gateway": "10.47.0.1"})
	const allocs, creates = 200, 100
	var (
		mu      sync.Mutex
		wg      sync.WaitGroup
		errs    = map[string]int{}
		created int
		start   = make(chan struct{})
		jobs    = make(chan int, allocs+creates)
	)
	for i := range allocs + creates {
		jobs <- i
	}
	close(jobs)
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for i := range jobs {
				var r gqltest.Response
				if i%3 == 0 && i/3 < creates {
					addr := fmt.Sprintf("10.47.0.%d", 2+i/3)
					r = env.Do(t, `mutation($input: CreateIPAddressInput!) { createIPAddress(input: $input) { id } }`,
						map[string]any{"input": map[string]any{"networkID": net, "address": addr}})
					mu.Lock()
					if len(r.Errors) == 0 {
						created++
					} else {
						errs["create: "+r.Errors[0].Code()+" "+r.Errors[0].Field()]++
					}
					mu.Unlock()
					continue
				}
				r = ipamTryAllocate(t, env, map[string]any{"networkID": net})
				if len(r.Errors) > 0 {
					mu.Lock()
					errs["allocate: "+r.Errors[0].Code()+" "+r.Errors[0].Message]++
					mu.Unlock()
				}
			}
		}()
	}
	close(start)
	wg.Wait()
	for k, n := range errs {
		if k != "create: CONFLICT address" {
			t.Errorf("%d × %s", n, k)
		}
	}
	var rows, distinct int
	if err := env.DB.DB.QueryRow(`SELECT count(*), count(DISTINCT address) FROM ip_addresses WHERE network_ip_addresses = $1`, atoi(t, net)).
		Scan(&rows, &distinct); err != nil {
		t.Fatal(err)
	}
	if rows != distinct || rows != allocs+created {
		t.Fatalf("the network holds %d addresses (%d distinct); want %d allocated + %d created", rows, distinct, allocs, created)
	}
}
