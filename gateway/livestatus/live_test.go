package livestatus_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/domain/identity"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/apitoken"
	"github.com/virtflow/virtflow/ent/rolebinding"
	"github.com/virtflow/virtflow/ent/user"
	"github.com/virtflow/virtflow/ent/virtualmachine"
	"github.com/virtflow/virtflow/gateway/livestatus"
	"github.com/virtflow/virtflow/internal/platform/infra"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

// stack is one process's live status on the package's PostgreSQL and the test Redis: the
// publishing hook on its client and a started hub, on a channel of the test's own.
type stack struct {
	c   *ent.Client
	hub *livestatus.Hub
	ids *identity.Service
}

var seq atomic.Int64

func uniq(p string) string { return fmt.Sprintf("%s-%d-%d", p, time.Now().UnixNano(), seq.Add(1)) }

func sys() context.Context { return authz.SystemContext(context.Background(), "test") }

func newStack(t *testing.T) *stack {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	db, err := infra.OpenDatabase(ctx, testdb.DSN(t), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	rd, err := infra.OpenRedis(ctx, testdb.RedisURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rd.Close() })
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	channel := uniq("virtflow:live:test")
	livestatus.Install(db.Client, rd.Client, log).Channel = channel
	hub := livestatus.NewHub(rd.Client, log)
	hub.Channel = channel
	if err := hub.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return &stack{c: db.Client, hub: hub, ids: &identity.Service{Client: db.Client, Log: log}}
}

// vm creates a VM (with its region, tenant and flavor) as the system.
func (s *stack) vm(t *testing.T) *ent.VirtualMachine {
	t.Helper()
	ctx := sys()
	name := uniq("live")
	region := s.c.Region.Create().SetName(name).SaveX(ctx)
	tenant := s.c.Tenant.Create().SetName(name).SaveX(ctx)
	flavor := s.c.Flavor.Create().SetName(name).SetVcpus(1).SetMemoryMB(512).SetDiskGB(10).SaveX(ctx)
	return s.c.VirtualMachine.Create().SetName(name).SetTenantID(tenant.ID).SetRegionID(region.ID).
		SetFlavorID(flavor.ID).SaveX(ctx)
}

// inTx runs f in a transaction of its own and commits it.
func (s *stack) inTx(t *testing.T, f func(tx *ent.Tx)) {
	t.Helper()
	tx, err := s.c.Tx(sys())
	if err != nil {
		t.Fatal(err)
	}
	f(tx)
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

func receive[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v, ok := <-ch:
		if !ok {
			t.Fatal("stream closed")
		}
		return v
	case <-time.After(20 * time.Second):
		t.Fatal("nothing delivered in 20 s")
	}
	panic("unreachable")
}

// TestDeliveredOnce: a VM written twice in one transaction, or twice in quick succession
// so that both events re-read the same state, is delivered once per state; a subscriber
// filtering on another VM gets nothing of it.
func TestDeliveredOnce(t *testing.T) {
	s := newStack(t)
	vm, other := s.vm(t), s.vm(t)
	ctx, cancel := context.WithCancel(livestatus.NewContext(sys(), s.hub))
	defer cancel()
	stream, err := livestatus.VirtualMachines(ctx, s.c, livestatus.VMFilter{ID: &vm.ID})
	if err != nil {
		t.Fatal(err)
	}
	// Two mutations of one VM in one transaction: two events, one state.
	s.inTx(t, func(tx *ent.Tx) {
		tx.VirtualMachine.UpdateOneID(vm.ID).SetStatus(virtualmachine.StatusActive).ExecX(sys())
		tx.VirtualMachine.UpdateOneID(vm.ID).SetStatusReason("running").ExecX(sys())
		tx.VirtualMachine.UpdateOneID(other.ID).SetStatus(virtualmachine.StatusActive).ExecX(sys())
	})
	got := receive(t, stream)
	if got.ID != vm.ID || got.Status != virtualmachine.StatusActive || got.StatusReason != "running" {
		t.Fatalf("first delivery: %d %s %q, want %d ACTIVE running", got.ID, got.Status, got.StatusReason, vm.ID)
	}
	// A marker change: the next delivery must be it, not the same state again.
	s.c.VirtualMachine.UpdateOneID(vm.ID).SetStatus(virtualmachine.StatusStopped).ExecX(sys())
	if got = receive(t, stream); got.Status != virtualmachine.StatusStopped {
		t.Fatalf("second delivery: %s %q, want STOPPED (the ACTIVE state was delivered twice)", got.Status, got.StatusReason)
	}
	// Real changes in quick succession each count; the last state arrives, and only once.
	for _, st := range []virtualmachine.Status{virtualmachine.StatusStarting, virtualmachine.StatusActive} {
		s.c.VirtualMachine.UpdateOneID(vm.ID).SetStatus(st).ExecX(sys())
	}
	for got = receive(t, stream); got.Status != virtualmachine.StatusActive; got = receive(t, stream) {
	}
	s.c.VirtualMachine.UpdateOneID(vm.ID).SetStatus(virtualmachine.StatusStopping).ExecX(sys())
	if got = receive(t, stream); got.Status != virtualmachine.StatusStopping {
		t.Fatalf("after the burst: %s, want STOPPING (ACTIVE delivered twice)", got.Status)
	}
}

// TestReadAsViewer: each subscriber receives the record as its own viewer reads it: a
// tenant member of another tenant receives nothing of the VM.
func TestReadAsViewer(t *testing.T) {
	s := newStack(t)
	vm := s.vm(t)
	outsider := s.c.Tenant.Create().SetName(uniq("outsider")).SaveX(sys())
	member := authz.NewContext(context.Background(), &authz.Viewer{UserID: 1, Name: "member",
		Bindings: []authz.Binding{{Role: authz.RoleTenantMember, Domain: authz.TenantDomain(outsider.ID)}}})
	ctx, cancel := context.WithCancel(livestatus.NewContext(member, s.hub))
	defer cancel()
	theirs, err := livestatus.VirtualMachines(ctx, s.c, livestatus.VMFilter{})
	if err != nil {
		t.Fatal(err)
	}
	adminCtx, cancelAdmin := context.WithCancel(livestatus.NewContext(sys(), s.hub))
	defer cancelAdmin()
	all, err := livestatus.VirtualMachines(adminCtx, s.c, livestatus.VMFilter{ID: &vm.ID})
	if err != nil {
		t.Fatal(err)
	}
	s.c.VirtualMachine.UpdateOneID(vm.ID).SetStatus(virtualmachine.StatusActive).ExecX(sys())
	if got := receive(t, all); got.ID != vm.ID {
		t.Fatalf("system viewer got VM %d, want %d", got.ID, vm.ID)
	}
	select {
	case got := <-theirs:
		t.Fatalf("a member of another tenant received VM %d", got.ID)
	case <-time.After(300 * time.Millisecond):
	}
}

// credentialEvents subscribes to the Credentials events of the stack's hub.
func (s *stack) credentialEvents(t *testing.T) <-chan livestatus.Event {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return s.hub.Subscribe(ctx, func(e livestatus.Event) bool { return e.Type == livestatus.Credentials })
}

// expectUser waits for a Credentials event naming user, skipping none: any other event
// first is a failure.
func expectUser(t *testing.T, events <-chan livestatus.Event, what string, user int) {
	t.Helper()
	e := receive(t, events)
	if e.ID != user {
		t.Fatalf("%s: Credentials event for user %d, want %d", what, e.ID, user)
	}
}

// TestCredentialEvents: revoking a token, granting, changing or removing a role binding,
// disabling or deleting a user publish a Credentials event naming the user once
// committed; a token's last use, a new token and a rolled-back revocation publish nothing.
func TestCredentialEvents(t *testing.T) {
	s := newStack(t)
	events := s.credentialEvents(t)
	ctx := sys()
	u := s.c.User.Create().SetUsername(uniq("u")).SaveX(ctx)
	marker := s.c.User.Create().SetUsername(uniq("marker")).SaveX(ctx)
	mark := func() { s.c.User.UpdateOneID(marker.ID).SetStatus(user.StatusActive).ExecX(ctx) }

	_, hash, prefix := identity.NewToken(apitoken.KindApi)
	tok := s.c.APIToken.Create().SetName("t").SetTokenHash(hash).SetPrefix(prefix).SetOwnerID(u.ID).SaveX(ctx)
	s.c.APIToken.UpdateOneID(tok.ID).SetLastUsedAt(time.Now()).ExecX(ctx)
	tx, _ := s.c.Tx(ctx)
	tx.APIToken.UpdateOneID(tok.ID).SetRevokedAt(time.Now()).ExecX(ctx)
	_ = tx.Rollback()
	mark()
	expectUser(t, events, "token created, used, revocation rolled back", marker.ID)

	s.c.APIToken.UpdateOneID(tok.ID).SetRevokedAt(time.Now()).ExecX(ctx)
	expectUser(t, events, "token revoked", u.ID)

	b := s.c.RoleBinding.Create().SetUserID(u.ID).SetRole(rolebinding.RoleViewer).SetDomain(authz.Platform).SaveX(ctx)
	expectUser(t, events, "role granted", u.ID)
	s.inTx(t, func(tx *ent.Tx) { tx.RoleBinding.DeleteOneID(b.ID).ExecX(ctx) })
	expectUser(t, events, "role binding removed", u.ID)

	s.c.User.UpdateOneID(u.ID).SetStatus(user.StatusDisabled).ExecX(ctx)
	expectUser(t, events, "user disabled", u.ID)
	s.c.APIToken.Delete().Where(apitoken.HasOwnerWith(user.ID(u.ID))).ExecX(ctx)
	expectUser(t, events, "tokens deleted", u.ID)
	s.c.User.DeleteOneID(u.ID).ExecX(ctx)
	expectUser(t, events, "user deleted", u.ID)
}

// TestCredentialWatch: a watched connection authenticates again when its user's
// credentials change and when its token expires, and ends (UNAUTHENTICATED) once they are
// revoked, or with ErrViewerChanged once they grant something else; other users' changes
// leave it alone.
func TestCredentialWatch(t *testing.T) {
	s := newStack(t)
	ctx := sys()
	newUser := func() (*ent.User, *ent.APIToken, string) {
		u := s.c.User.Create().SetUsername(uniq("w")).SaveX(ctx)
		s.c.RoleBinding.Create().SetUserID(u.ID).SetRole(rolebinding.RoleViewer).SetDomain(authz.Platform).ExecX(ctx)
		plain, hash, prefix := identity.NewToken(apitoken.KindApi)
		tok := s.c.APIToken.Create().SetName("t").SetTokenHash(hash).SetPrefix(prefix).SetOwnerID(u.ID).SaveX(ctx)
		return u, tok, plain
	}
	// run authenticates a connection with token and watches it until it ends.
	run := func(token string) (ended <-chan error, rechecks *atomic.Int64) {
		t.Helper()
		conn, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		w := s.hub.WatchCredentials(conn)
		authed, err := s.ids.WebsocketInit(identity.WithSourceIP(conn, "127.0.0.1"), map[string]any{"Authorization": "Bearer " + token})
		if err != nil {
			t.Fatal(err)
		}
		cred := identity.CredentialFromContext(authed)
		n := &atomic.Int64{}
		done := make(chan error, 1)
		go func() {
			done <- w.Run(authed, authz.FromContext(authed), cred.ExpiresAt, time.Hour,
				func(ctx context.Context) (*authz.Viewer, *time.Time, error) {
					n.Add(1)
					return s.ids.Reauthenticate(ctx, cred)
				})
		}()
		return done, n
	}
	ends := func(what string, done <-chan error, want func(error) bool) {
		t.Helper()
		select {
		case err := <-done:
			if !want(err) {
				t.Fatalf("%s: the watch ended with %v", what, err)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: the connection was not ended", what)
		}
	}
	unauthenticated := func(err error) bool {
		e, ok := apierr.As(err)
		return ok && e.Code == apierr.CodeUnauthenticated
	}

	// flush waits until every Credentials event published so far reached the hub.
	flushes := s.credentialEvents(t)
	flush := func() {
		marker := s.c.User.Create().SetUsername(uniq("flush")).SaveX(ctx)
		s.c.User.UpdateOneID(marker.ID).SetStatus(user.StatusActive).ExecX(ctx)
		for e := receive(t, flushes); e.ID != marker.ID; e = receive(t, flushes) {
		}
	}

	_, tok, plain := newUser()
	_, _, bystanderToken := newUser()
	done, _ := run(plain)
	other, otherChecks := run(bystanderToken)
	flush()
	before := otherChecks.Load()
	s.c.APIToken.UpdateOneID(tok.ID).SetRevokedAt(time.Now()).ExecX(ctx)
	ends("token revoked", done, unauthenticated)

	u, _, plain := newUser()
	done, checks := run(plain)
	flush()
	checks.Store(0)
	s.c.RoleBinding.Delete().Where(rolebinding.HasUserWith(user.ID(u.ID))).ExecX(ctx)
	ends("role revoked", done, func(err error) bool { return errors.Is(err, livestatus.ErrViewerChanged) })
	if checks.Load() != 1 {
		t.Errorf("role revoked: %d re-authentications, want 1", checks.Load())
	}

	u, _, plain = newUser()
	done, _ = run(plain)
	s.c.User.UpdateOneID(u.ID).SetStatus(user.StatusDisabled).ExecX(ctx)
	ends("user disabled", done, unauthenticated)

	_, tok, plain = newUser()
	s.c.APIToken.UpdateOneID(tok.ID).SetExpiresAt(time.Now().Add(time.Second)).ExecX(ctx)
	done, _ = run(plain)
	ends("token expired", done, unauthenticated) // only the expiry timer asks again

	select {
	case err := <-other:
		t.Fatalf("the bystander's connection ended: %v", err)
	default:
	}
	flush()
	if n := otherChecks.Load() - before; n != 0 {
		t.Errorf("the bystander re-authenticated %d times for others' changes", n)
	}
}

// TestOneEventPerRowAndTransaction: a transaction's changes are routed and published when it
// commits, one event per changed row however often the row changed; a rolled-back
// transaction publishes nothing.
func TestOneEventPerRowAndTransaction(t *testing.T) {
	s := newStack(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Subscribed before anything is created: every event below arrives, in order.
	events := s.hub.Subscribe(ctx, func(e livestatus.Event) bool { return e.Type == livestatus.VirtualMachine })
	vm, other, marker := s.vm(t), s.vm(t), s.vm(t)
	for _, want := range []int{vm.ID, other.ID, marker.ID} {
		if e := receive(t, events); e.ID != want {
			t.Fatalf("creation event for VM %d, want %d", e.ID, want)
		}
	}

	tx, err := s.c.Tx(sys())
	if err != nil {
		t.Fatal(err)
	}
	tx.VirtualMachine.UpdateOneID(vm.ID).SetStatus(virtualmachine.StatusActive).ExecX(sys())
	_ = tx.Rollback()
	s.inTx(t, func(tx *ent.Tx) {
		tx.VirtualMachine.UpdateOneID(vm.ID).SetStatus(virtualmachine.StatusActive).ExecX(sys())
		tx.VirtualMachine.UpdateOneID(other.ID).SetStatus(virtualmachine.StatusActive).ExecX(sys())
		tx.VirtualMachine.UpdateOneID(vm.ID).SetStatusReason("running").ExecX(sys())
	})
	s.c.VirtualMachine.UpdateOneID(marker.ID).SetStatus(virtualmachine.StatusActive).ExecX(sys())

	var got []int
	for e := receive(t, events); e.ID != marker.ID; e = receive(t, events) {
		if e.TenantID == 0 {
			t.Errorf("event for VM %d without its tenant: %+v", e.ID, e)
		}
		got = append(got, e.ID)
	}
	slices.Sort(got)
	if want := []int{vm.ID, other.ID}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("events for VMs %v before the marker, want %v (one per row, none for the rollback)", got, want)
	}
}
