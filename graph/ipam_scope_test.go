package graph_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/ent/virtualmachine"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
)

// Issue 24 item 9: IPAM never hands out one address twice — prefixes do not overlap within a
// routing scope (vrf), an address a VM uses is not released from under it, and IPv6
// allocation skips the subnet-router anycast address.

const createNetworkMutation = `mutation($input: CreateNetworkInput!) { createNetwork(input: $input) { id cidr vrf } }`

// TestIPAMConcurrentOverlappingPrefixes: eight createNetwork requests at once, all with
// prefixes that overlap each other (identical, wider, narrower) in one routing scope. Exactly
// one succeeds; every other one is CONFLICT on cidr, and the scope then holds one network.
func TestIPAMConcurrentOverlappingPrefixes(t *testing.T) {
	t.Parallel()
	env, _ := newEnv(t)
	vrf := uniq("race")
	cidrs := []string{"10.60.0.0/24", "10.60.0.0/24", "10.60.0.0/16", "10.60.0.0/25",
		"10.60.0.0/24", "10.0.0.0/8", "10.60.0.64/26", "10.60.0.0/23"}
	var (
		wg       sync.WaitGroup
		start    = make(chan struct{})
		mu       sync.Mutex
		ok       []string
		conflict int
		other    []string
	)
	for _, cidr := range cidrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			rsp := env.Do(t, createNetworkMutation, map[string]any{"input": map[string]any{"name": uniq("race"), "cidr": cidr, "vrf": vrf}})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case len(rsp.Errors) == 0:
				ok = append(ok, cidr)
			case rsp.Errors[0].Code() == "CONFLICT" && rsp.Errors[0].Field() == "cidr":
				conflict++
			default:
				other = append(other, rsp.ErrorsString())
			}
		}()
	}
	close(start)
	wg.Wait()
	if len(ok) != 1 || conflict != len(cidrs)-1 || len(other) > 0 {
		t.Fatalf("%d created (%v), %d CONFLICT on cidr, other errors %v; want exactly 1 created and %d conflicts",
			len(ok), ok, conflict, other, len(cidrs)-1)
	}
	var n int
	if err := env.DB.DB.QueryRow(`SELECT count(*) FROM networks WHERE vrf = $1`, vrf).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("routing scope %s holds %d networks, want 1", vrf, n)
	}
}

// TestIPAMPrefixScopes: the same prefix in two routing scopes is fine, in one it is not, and
// moving a network into a scope where its prefix is taken is refused too.
func TestIPAMPrefixScopes(t *testing.T) {
	t.Parallel()
	env, f := newEnv(t)
	create := func(cidr, vrf string) gqltest.Response {
		in := map[string]any{"name": uniq("net"), "cidr": cidr}
		if vrf != "" {
			in["vrf"] = vrf
		}
		return env.Do(t, createNetworkMutation, map[string]any{"input": in})
	}
	a, b := uniq("vrf-a"), uniq("vrf-b")
	for _, vrf := range []string{a, b} {
		if rsp := create("172.16.0.0/24", vrf); len(rsp.Errors) > 0 {
			t.Fatalf("172.16.0.0/24 in %s: %s", vrf, rsp.ErrorsString())
		}
	}
	e := create("172.16.0.0/24", a).ExpectError(t, "CONFLICT", "cidr")
	if !strings.Contains(e.Message, "172.16.0.0/24") || !strings.Contains(e.Message, a) {
		t.Errorf("message %q should name the prefix and the scope", e.Message)
	}
	create("172.16.0.0/23", b).ExpectError(t, "CONFLICT", "cidr")
	if rsp := create("2001:db8:60::/48", a); len(rsp.Errors) > 0 { // another family never overlaps
		t.Fatalf("an IPv6 prefix beside IPv4 ones: %s", rsp.ErrorsString())
	}
	if rsp := create("172.16.1.0/24", a); len(rsp.Errors) > 0 {
		t.Fatalf("an adjacent prefix was refused: %s", rsp.ErrorsString())
	}

	t.Run("default scope", func(t *testing.T) {
		var out struct{ CreateNetwork struct{ Vrf string } }
		env.MustDo(t, createNetworkMutation, map[string]any{"input": map[string]any{"name": uniq("net"), "cidr": "10.61.0.0/24"}}, &out)
		if out.CreateNetwork.Vrf != "global" {
			t.Errorf("vrf = %q, want global", out.CreateNetwork.Vrf)
		}
		create("10.61.0.0/25", "").ExpectError(t, "CONFLICT", "cidr")
		create("10.61.0.0/25", "global").ExpectError(t, "CONFLICT", "cidr")
	})

	t.Run("update into an overlap", func(t *testing.T) {
		c := uniq("vrf-c")
		n := f.Network(map[string]any{"cidr": "172.16.0.0/24", "vrf": c})
		f.tryUpdate("Network", n, map[string]any{"vrf": a}).ExpectError(t, "CONFLICT", "cidr")
		other := f.Network(map[string]any{"cidr": "172.16.4.0/24", "vrf": c})
		f.tryUpdate("Network", other, map[string]any{"cidr": "172.16.0.0/22"}).ExpectError(t, "CONFLICT", "cidr")
		f.update("Network", n, map[string]any{"cidr": "172.16.0.0/23"}) // its own old prefix is no overlap
	})
}

// TestIPAMFirstIPv6Allocation: the first address of an IPv6 /64 is ::1, never the
// subnet-router anycast address (all host bits zero), which cannot be asked for either; IPv4
// still skips the network and broadcast addresses.
func TestIPAMFirstIPv6Allocation(t *testing.T) {
	t.Parallel()
	env, f := newEnv(t)
	v6 := f.Network(map[string]any{"cidr": "2001:db8:61::/64"})
	if got := ipamAllocate(t, env, map[string]any{"networkID": v6}); got.Address != "2001:db8:61::1" {
		t.Errorf("first IPv6 allocation = %s, want 2001:db8:61::1", got.Address)
	}
	ipamTryAllocate(t, env, map[string]any{"networkID": v6, "address": "2001:db8:61::"}).ExpectError(t, "VALIDATION", "address")
	f.tryCreate("IPAddress", map[string]any{"networkID": v6, "address": "2001:db8:61::"}).ExpectError(t, "VALIDATION", "address")

	v4 := f.Network(map[string]any{"cidr": "10.62.0.0/30"})
	got := []string{ipamAllocate(t, env, map[string]any{"networkID": v4}).Address, ipamAllocate(t, env, map[string]any{"networkID": v4}).Address}
	if fmt.Sprint(got) != "[10.62.0.1 10.62.0.2]" {
		t.Errorf("IPv4 /30 allocations = %v, want [10.62.0.1 10.62.0.2]", got)
	}
	ipamTryAllocate(t, env, map[string]any{"networkID": v4}).ExpectError(t, "RESOURCE_EXHAUSTED", "networkID")
}

// TestIPAMReleaseBoundAddress: an address on a NIC of a running VM is not released — not by
// releaseIPAddress, not by deleteIPAddress — until its VM is gone; an operator may force it, a
// tenant member may not.
func TestIPAMReleaseBoundAddress(t *testing.T) {
	t.Parallel()
	env, f := newEnv(t)
	net := f.Network(map[string]any{"cidr": "10.63.0.0/24", "gateway": "10.63.0.1"})
	tenant := f.Tenant()
	bound := func() (vm int, ip ipamAddress) {
		t.Helper()
		vm = atoi(t, f.VirtualMachine(map[string]any{"tenantID": tenant}))
		env.Client.VirtualMachine.UpdateOneID(vm).SetStatus(virtualmachine.StatusActive).ExecX(gqltest.System())
		nic := f.create("Port", map[string]any{"name": "eth0", "kind": "VIRTUAL", "virtualMachineID": gqltest.ID(vm), "networkID": net})
		return vm, ipamAllocate(t, env, map[string]any{"networkID": net, "portID": nic})
	}
	const release = `mutation($id: ID!, $force: Boolean) { releaseIPAddress(id: $id, force: $force) }`
	_, ip := bound()

	e := env.Do(t, release, map[string]any{"id": ip.ID}).ExpectError(t, "CONFLICT", "id")
	if !strings.Contains(e.Message, ip.Address) || !strings.Contains(e.Message, "force") {
		t.Errorf("message %q should name the address and the way out", e.Message)
	}
	f.tryDelete("IPAddress", ip.ID).ExpectError(t, "CONFLICT", "id")
	if again := ipamAllocate(t, env, map[string]any{"networkID": net}); again.Address == ip.Address {
		t.Fatalf("%s was handed out again while its VM runs", ip.Address)
	}

	tenantID := atoi(t, tenant)
	member := env.As(roleToken(t, env, authz.RoleTenantMember, tenantID, 0))
	member.Do(t, release, map[string]any{"id": ip.ID, "force": true}).ExpectError(t, "FORBIDDEN", "force")
	tenantAdmin := env.As(roleToken(t, env, authz.RoleTenantAdmin, tenantID, 0))
	tenantAdmin.Do(t, release, map[string]any{"id": ip.ID, "force": true}).ExpectError(t, "FORBIDDEN", "force")
	if n := ipamAddressCount(t, env, net); n != 2 {
		t.Fatalf("network holds %d addresses after refused releases, want 2", n)
	}

	operator := env.As(roleToken(t, env, authz.RoleOperator, 0, 0))
	var out struct{ ReleaseIPAddress string }
	operator.MustDo(t, release, map[string]any{"id": ip.ID, "force": true}, &out)
	if out.ReleaseIPAddress != ip.ID || ipamAddressCount(t, env, net) != 1 {
		t.Fatalf("forced release = %q, network holds %d addresses; want %s released", out.ReleaseIPAddress, ipamAddressCount(t, env, net), ip.ID)
	}

	t.Run("released with its VM", func(t *testing.T) {
		vm, ip := bound()
		env.Client.VirtualMachine.UpdateOneID(vm).SetStatus(virtualmachine.StatusDeleted).ExecX(gqltest.System())
		env.MustDo(t, release, map[string]any{"id": ip.ID}, nil)
	})
	t.Run("an address on a host's port is released as before", func(t *testing.T) {
		ip := ipamAllocate(t, env, map[string]any{"networkID": net, "portID": f.Port()})
		env.MustDo(t, release, map[string]any{"id": ip.ID}, nil)
	})
}
