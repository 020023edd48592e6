package ipam_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/ipaddress"
	"github.com/virtflow/virtflow/ent/network"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
	"github.com/virtflow/virtflow/store/dberr"
)

// TestMain gives the package its own PostgreSQL database. Tests share it: each builds its own
// networks (names are unique), so they never see each other's addresses.
func TestMain(m *testing.M) { testdb.Main(m) }

var seq atomic.Int64

// uniq returns prefix-N with a fresh N.
func uniq(prefix string) string { return fmt.Sprintf("%s-%d", prefix, seq.Add(1)) }

// fixture writes records directly through ent, acting as the system.
type fixture struct {
	t   testing.TB
	env *gqltest.Env
	c   *ent.Client
	ctx context.Context
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	env := gqltest.Postgres(t, testdb.DSN(t))
	return &fixture{t: t, env: env, c: env.Client, ctx: gqltest.System()}
}

// network creates a network with prefix cidr and gateway gw ("" for none), in a routing scope
// (vrf) of its own, so that tests may reuse prefixes without overlapping each other.
func (f *fixture) network(cidr, gw string) *ent.Network {
	f.t.Helper()
	create := f.c.Network.Create().SetName(uniq("net")).SetCidr(cidr).SetVrf(uniq("vrf"))
	if gw != "" {
		create.SetGateway(gw)
	}
	n, err := create.Save(f.ctx)
	if err != nil {
		f.t.Fatalf("create network %s: %v", cidr, err)
	}
	return n
}

// ranges reserves "first-last" ranges in n.
func (f *fixture) ranges(n *ent.Network, ranges ...string) {
	f.t.Helper()
	for _, r := range ranges {
		first, last, _ := strings.Cut(r, "-")
		if _, err := f.tryRange(n.ID, first, last); err != nil {
			f.t.Fatalf("reserve %s in %s: %v", r, n.Cidr, err)
		}
	}
}

// tryRange creates a reserved range and returns it or the error.
func (f *fixture) tryRange(networkID int, first, last string) (*ent.IPRange, error) {
	return f.c.IPRange.Create().SetNetworkID(networkID).SetStartAddress(first).SetEndAddress(last).Save(f.ctx)
}

// addrs records addresses in n ("r:" marks RESERVED) the way createIPAddress does.
func (f *fixture) addrs(n *ent.Network, addrs ...string) {
	f.t.Helper()
	for _, a := range addrs {
		s, reserved := strings.CutPrefix(a, "r:")
		status := ipaddress.StatusAllocated
		if reserved {
			status = ipaddress.StatusReserved
		}
		if _, err := f.c.IPAddress.Create().SetNetworkID(n.ID).SetAddress(s).SetStatus(status).Save(f.ctx); err != nil {
			f.t.Fatalf("record %s in %s: %v", a, n.Cidr, err)
		}
	}
}

// count returns how many addresses n records.
func (f *fixture) count(n *ent.Network) int {
	f.t.Helper()
	c, err := f.c.IPAddress.Query().Where(ipaddress.HasNetworkWith(network.ID(n.ID))).Count(f.ctx)
	if err != nil {
		f.t.Fatal(err)
	}
	return c
}

// loadBalancer creates a load balancer of a new tenant.
func (f *fixture) loadBalancer() *ent.LoadBalancer {
	f.t.Helper()
	tn, err := f.c.Tenant.Create().SetName(uniq("tenant")).Save(f.ctx)
	if err != nil {
		f.t.Fatal(err)
	}
	lb, err := f.c.LoadBalancer.Create().SetName(uniq("lb")).SetTenant(tn).Save(f.ctx)
	if err != nil {
		f.t.Fatal(err)
	}
	return lb
}

// port creates a port of a new host.
func (f *fixture) port() *ent.Port {
	f.t.Helper()
	h, err := f.c.Host.Create().SetName(uniq("host")).Save(f.ctx)
	if err != nil {
		f.t.Fatal(err)
	}
	p, err := f.c.Port.Create().SetName("eth0").SetHost(h).Save(f.ctx)
	if err != nil {
		f.t.Fatal(err)
	}
	return p
}

// expectAPIError asserts err is an apierr.Error with code and field.
func expectAPIError(t testing.TB, err error, code apierr.Code, field string) *apierr.Error {
	t.Helper()
	if err == nil {
		t.Fatalf("expected %s on %q, got no error", code, field)
	}
	e, ok := apierr.As(err)
	if !ok {
		if e = dberr.Classify(err); e == nil {
			t.Fatalf("expected %s on %q, got an internal error: %v", code, field, err)
		}
	}
	if e.Code != code || e.Field != field {
		t.Fatalf("expected %s on %q, got %s on %q: %v", code, field, e.Code, e.Field, err)
	}
	return e
}

func ptr[T any](v T) *T { return &v }
