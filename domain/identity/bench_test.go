package identity

import (
	"context"
	"testing"

	"github.com/virtflow/virtflow/authz"
)

// BenchmarkAuthenticate authenticates a token of a user with a platform role, five tenant
// roles and a maintainer in three groups, and reports the SQL statements per call (the clock
// stands still, so after the first call last_used_at needs no update).
func BenchmarkAuthenticate(b *testing.B) {
	f := newFixture(b)
	client, log := countingClient()
	f.svc.Client = client
	u := f.user("")
	f.bind(u, authz.RoleMaintainer, nil)
	for range 5 {
		f.bind(u, authz.RoleTenantMember, f.tenant())
	}
	m, err := testDB.Client.Maintainer.Create().SetName("M").SetAccount(unique("m")).SetUser(u).Save(f.sys)
	if err != nil {
		b.Fatal(err)
	}
	for range 3 {
		if _, err := testDB.Client.MaintainerGroup.Create().SetName(unique("g")).AddMembers(m).Save(f.sys); err != nil {
			b.Fatal(err)
		}
	}
	plain, _ := f.token(u)
	ctx := context.Background()
	log.reset()
	for b.Loop() {
		if _, err := f.svc.Authenticate(ctx, plain, "192.0.2.1"); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(log.len())/float64(b.N), "queries/op")
}
