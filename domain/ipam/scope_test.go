package ipam_test

import (
	"sync"
	"testing"

	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/network"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
	"github.com/virtflow/virtflow/store/dbtx"
)

// TestScopeOverlap: within one routing scope no two prefixes overlap, even when eight
// transactions create overlapping prefixes at once; across scopes the same prefix is fine.
// It runs on PostgreSQL (the advisory lock per scope) and on the embedded SQLite (one writer
// at a time).
func TestScopeOverlap(t *testing.T) {
	for name, env := range map[string]func(*testing.T) *gqltest.Env{
		"postgres": func(t *testing.T) *gqltest.Env { return gqltest.Postgres(t, testdb.DSN(t)) },
		"sqlite":   func(t *testing.T) *gqltest.Env { return gqltest.SQLite(t) },
	} {
		t.Run(name, func(t *testing.T) {
			env := env(t)
			ctx := gqltest.System()
			vrf := uniq("vrf")
			create := func(cidr, vrf string) error {
				_, err := dbtx.Run(ctx, env.Client, func(c *ent.Client) error {
					return c.Network.Create().SetName(uniq("net")).SetCidr(cidr).SetVrf(vrf).Exec(ctx)
				})
				return err
			}
			cidrs := []string{"10.70.0.0/24", "10.70.0.0/24", "10.70.0.0/16", "10.70.0.0/25",
				"10.0.0.0/8", "10.70.0.64/26", "10.70.0.0/23", "10.70.0.64/27"}
			var (
				wg    sync.WaitGroup
				mu    sync.Mutex
				ok    []string
				other []error
			)
			for _, cidr := range cidrs {
				wg.Go(func() {
					err := create(cidr, vrf)
					mu.Lock()
					defer mu.Unlock()
					if err == nil {
						ok = append(ok, cidr)
						return
					}
					if e, isAPI := apierr.As(err); !isAPI || e.Code != apierr.CodeConflict || e.Field != "cidr" {
						other = append(other, err)
					}
				})
			}
			wg.Wait()
			n, err := env.Client.Network.Query().Where(network.Vrf(vrf)).Count(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(ok) != 1 || len(other) > 0 || n != 1 {
				t.Fatalf("created %v, other errors %v, scope holds %d; want exactly one", ok, other, n)
			}
			if err := create("10.70.0.0/24", uniq("vrf")); err != nil {
				t.Fatalf("the same prefix in another scope: %v", err)
			}
			if err := create("2001:db8:70::/64", vrf); err != nil {
				t.Fatalf("an IPv6 prefix beside an IPv4 one: %v", err)
			}
		})
	}
}
