package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/virtflow/virtflow/domain/guest"
	"github.com/virtflow/virtflow/domain/placement"
	"github.com/virtflow/virtflow/domain/placement/placementtest"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/auditlog"
	"github.com/virtflow/virtflow/ent/virtualmachine"
	"github.com/virtflow/virtflow/gateway/httpapi"
	"github.com/virtflow/virtflow/graph"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

// guestEnv is a server with POST /guest/ready over PostgreSQL and Redis, two VMs on one
// node with an assignment each, and a clock the test moves.
type guestEnv struct {
	srv   *httptest.Server
	c     *ent.Client
	svc   *guest.Service
	now   time.Time
	vms   [2]int
	asgs  [2]int
	rdb   *redis.Client
	rlKey string
}

func newGuestEnv(t *testing.T) *guestEnv {
	t.Helper()
	env := gqltest.Postgres(t, testdb.New(t))
	c := env.Client
	ctx := placementtest.Ctx()
	site, err := placementtest.Build(ctx, c, placementtest.Spec{Racks: 1, HostsPerRack: 1, CPU: 8, MemoryMB: 8192, DiskGB: 100, Cores: 4})
	if err != nil {
		t.Fatal(err)
	}
	fl, err := site.Flavor(ctx, 1, 256, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	if err := rdb.Ping(context.Background()).Err(); err != nil {
		t.Skipf("no Redis at 127.0.0.1:6379: %v", err)
	}
	t.Cleanup(func() { _ = rdb.Close() })
	e := &guestEnv{c: c, rdb: rdb, now: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC), rlKey: "virtflow:test:guest:" + site.Prefix + ":"}
	t.Cleanup(func() {
		keys, _ := rdb.Keys(context.Background(), e.rlKey+"*").Result()
		if len(keys) > 0 {
			rdb.Del(context.Background(), keys...)
		}
	})
	e.svc = guest.New(c, guest.Config{Deadline: time.Minute, CredentialTTL: time.Hour, Now: func() time.Time { return e.now },
		Redis: rdb, RateLimitPrefix: e.rlKey})
	for i := range e.vms {
		tx, err := c.Tx(ctx)
		if err != nil {
			t.Fatal(err)
		}
		vm, err := placement.New(placement.Config{}).CreateVM(ctx, tx.Client(), ent.CreateVirtualMachineInput{
			Name: site.Prefix + "-vm" + string(rune('a'+i)), TenantID: site.Tenant, RegionID: site.Region, FlavorID: fl.ID})
		if err != nil {
			_ = tx.Rollback()
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		a := c.Assignment.Create().SetNodeID(site.Nodes[0].ID).SetVirtualMachineID(vm.ID).SaveX(ctx)
		e.vms[i], e.asgs[i] = vm.ID, a.ID
	}
	h := httpapi.New(httpapi.Deps{Client: c, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		GraphQL: graph.DefaultOptions(), Identity: env.Identity, Guest: e.svc})
	e.srv = httptest.NewServer(h)
	t.Cleanup(e.srv.Close)
	return e
}

// register gives VM i a fresh credential, as its node's agent does when it builds the drive.
func (e *guestEnv) register(t *testing.T, i int) string {
	t.Helper()
	plain, hash, err := guest.NewCredential()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.RegisterCredential(placementtest.Ctx(), e.c, e.asgs[i], 1, hash); err != nil {
		t.Fatal(err)
	}
	return plain
}

// post calls POST /guest/ready with the form and, when bearer is set, the header.
func (e *guestEnv) post(t *testing.T, bearer, query string, form url.Values) (int, map[string]any) {
	t.Helper()
	u := e.srv.URL + httpapi.GuestReadyPath
	if query != "" {
		u += "?" + query
	}
	req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&body)
	return resp.StatusCode, body
}

func (e *guestEnv) vm(t *testing.T, i int) *ent.VirtualMachine {
	t.Helper()
	return e.c.VirtualMachine.GetX(placementtest.Ctx(), e.vms[i])
}

func errCode(body map[string]any) string {
	errs, _ := body["errors"].([]any)
	if len(errs) == 0 {
		return ""
	}
	ext, _ := errs[0].(map[string]any)["extensions"].(map[string]any)
	code, _ := ext["code"].(string)
	return code
}

// TestGuestReadyEndpoint: the guest's call with its credential makes its VM READY with the
// host name and addresses it reports (as a bearer token, a form field or phone_home's query
// parameter); a repeat changes nothing; wrong, rotated, expired and other instances'
// credentials are refused and change nothing; bodies over the limit are refused; a source
// with too many bad credentials is rate-limited; the call is audited as system:guest.
func TestGuestReadyEndpoint(t *testing.T) {
	e := newGuestEnv(t)
	credA := e.register(t, 0)
	credB := e.register(t, 1)
	ctx := placementtest.Ctx()

	t.Run("unknown credential", func(t *testing.T) {
		code, body := e.post(t, guest.CredentialPrefix+"nope-nope-nope-nope", "", url.Values{"hostname": {"x"}})
		if code != http.StatusUnauthorized || errCode(body) != "UNAUTHENTICATED" {
			t.Fatalf("got %d %v, want 401 UNAUTHENTICATED", code, body)
		}
		if e.vm(t, 0).GuestState != virtualmachine.GuestStateUnknown {
			t.Fatal("a refused call changed the VM")
		}
	})
	t.Run("other instance's credential", func(t *testing.T) {
		// B's credential naming A's instance: refused, neither VM changes.
		code, body := e.post(t, credB, "", url.Values{"instance_id": {guest.InstanceID(e.vms[0])}, "hostname": {"evil"}})
		if code != http.StatusForbidden || errCode(body) != "FORBIDDEN" {
			t.Fatalf("got %d %v, want 403 FORBIDDEN", code, body)
		}
		for i := range e.vms {
			if vm := e.vm(t, i); vm.GuestState != virtualmachine.GuestStateUnknown || vm.GuestHostname != "" {
				t.Fatalf("VM %d changed by a refused call: %s %q", i, vm.GuestState, vm.GuestHostname)
			}
		}
	})
	t.Run("body too large", func(t *testing.T) {
		code, body := e.post(t, credA, "", url.Values{"pub_key_rsa": {strings.Repeat("A", httpapi.MaxGuestReadyBytes)}})
		if code != http.StatusRequestEntityTooLarge {
			t.Fatalf("got %d %v, want 413", code, body)
		}
		if e.vm(t, 0).GuestState != virtualmachine.GuestStateUnknown {
			t.Fatal("a refused call changed the VM")
		}
	})
	t.Run("bad address", func(t *testing.T) {
		code, body := e.post(t, credA, "", url.Values{"addresses": {"10.0.0.5,not-an-ip"}})
		if code != http.StatusBadRequest || errCode(body) != "VALIDATION" {
			t.Fatalf("got %d %v, want 400 VALIDATION", code, body)
		}
	})

	var readyAt time.Time
	t.Run("ready as bearer", func(t *testing.T) {
		form := url.Values{"instance_id": {guest.InstanceID(e.vms[0])}, "hostname": {"web-1"},
			"addresses": {"10.0.0.5/24,fe80::1/64,127.0.0.1/8"}, "address": {"2001:db8::5"}}
		code, body := e.post(t, credA, "", form)
		if code != http.StatusOK || body["guestState"] != "READY" {
			t.Fatalf("got %d %v, want 200 READY", code, body)
		}
		vm := e.vm(t, 0)
		if vm.GuestState != virtualmachine.GuestStateReady || vm.GuestHostname != "web-1" || vm.GuestReadyAt == nil ||
			strings.Join(vm.GuestAddresses, " ") != "10.0.0.5 2001:db8::5" {
			t.Fatalf("VM after the call: %s %q %v %v", vm.GuestState, vm.GuestHostname, vm.GuestAddresses, vm.GuestReadyAt)
		}
		readyAt = *vm.GuestReadyAt
		n := e.c.AuditLog.Query().Where(auditlog.Action("reportGuestReady"), auditlog.Actor("system:guest"), auditlog.ObjectID(e.vms[0])).CountX(ctx)
		if n != 1 {
			t.Fatalf("%d audit rows of the call, want 1", n)
		}
		if e.vm(t, 1).GuestState != virtualmachine.GuestStateUnknown {
			t.Fatal("A's credential changed B")
		}
	})
	t.Run("repeat is idempotent", func(t *testing.T) {
		e.now = e.now.Add(time.Second)
		code, _ := e.post(t, credA, "", url.Values{"hostname": {"web-1"}, "addresses": {"10.0.0.5 2001:db8::5"}})
		if code != http.StatusOK {
			t.Fatalf("repeat: %d", code)
		}
		if vm := e.vm(t, 0); !vm.GuestReadyAt.Equal(readyAt) || vm.GuestState != virtualmachine.GuestStateReady {
			t.Fatalf("repeat moved guestReadyAt to %v (was %v) or the state to %s", vm.GuestReadyAt, readyAt, vm.GuestState)
		}
		n := e.c.AuditLog.Query().Where(auditlog.Action("reportGuestReady"), auditlog.ObjectID(e.vms[0])).CountX(ctx)
		if n != 1 {
			t.Fatalf("%d audit rows after a repeat, want still 1", n)
		}
	})
	t.Run("phone_home form with token in query", func(t *testing.T) {
		form := url.Values{"instance_id": {guest.InstanceID(e.vms[1])}, "hostname": {"api-2"}, "fqdn": {"api-2.example"},
			"pub_key_rsa": {"ssh-rsa AAAA"}}
		code, body := e.post(t, "", "token="+url.QueryEscape(credB), form)
		if code != http.StatusOK {
			t.Fatalf("got %d %v", code, body)
		}
		if vm := e.vm(t, 1); vm.GuestState != virtualmachine.GuestStateReady || vm.GuestHostname != "api-2" {
			t.Fatalf("VM B: %s %q", vm.GuestState, vm.GuestHostname)
		}
	})
	t.Run("rotated credential", func(t *testing.T) {
		newA := e.register(t, 0) // the drive rebuilt: back to UNKNOWN, the old credential dead
		if vm := e.vm(t, 0); vm.GuestState != virtualmachine.GuestStateUnknown || vm.GuestReadyAt != nil || len(vm.GuestAddresses) != 0 {
			t.Fatalf("after a rebuilt drive: %s %v %v", vm.GuestState, vm.GuestReadyAt, vm.GuestAddresses)
		}
		if code, _ := e.post(t, credA, "", url.Values{"hostname": {"web-1"}}); code != http.StatusUnauthorized {
			t.Fatalf("the old credential: %d, want 401", code)
		}
		if code, _ := e.post(t, "", "", url.Values{"token": {newA}, "hostname": {"web-1"}}); code != http.StatusOK {
			t.Fatalf("the new credential as form field: %d, want 200", code)
		}
		credA = newA
	})
	t.Run("expired credential", func(t *testing.T) {
		e.now = e.now.Add(2 * time.Hour)
		if code, _ := e.post(t, credA, "", nil); code != http.StatusUnauthorized {
			t.Fatalf("an expired credential: %d, want 401", code)
		}
	})
	t.Run("rate limit", func(t *testing.T) {
		var code int
		for i := 0; i < guest.MaxFailuresPerSource+2; i++ {
			code, _ = e.post(t, guest.CredentialPrefix+"wrong-wrong-wrong-wrong", "", nil)
		}
		if code != http.StatusTooManyRequests {
			t.Fatalf("after %d bad calls: %d, want 429", guest.MaxFailuresPerSource+2, code)
		}
	})
}

// TestGuestDeadline: a guest BOOTING for longer than the deadline becomes UNREACHABLE with
// one warning event (a second pass changes nothing); one within it stays BOOTING; an
// UNREACHABLE guest that reports later becomes READY.
func TestGuestDeadline(t *testing.T) {
	e := newGuestEnv(t)
	ctx := placementtest.Ctx()
	credA := e.register(t, 0)
	e.register(t, 1)
	e.c.VirtualMachine.UpdateOneID(e.vms[0]).SetGuestState(virtualmachine.GuestStateBooting).
		SetGuestStateChangedAt(e.now.Add(-2 * time.Minute)).ExecX(ctx)
	e.c.VirtualMachine.UpdateOneID(e.vms[1]).SetGuestState(virtualmachine.GuestStateBooting).
		SetGuestStateChangedAt(e.now.Add(-30 * time.Second)).ExecX(ctx)
	for pass := 0; pass < 2; pass++ {
		n, err := e.svc.Overdue(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if want := 1 - pass; n != want {
			t.Fatalf("pass %d marked %d, want %d", pass, n, want)
		}
	}
	if vm := e.vm(t, 0); vm.GuestState != virtualmachine.GuestStateUnreachable {
		t.Fatalf("overdue VM is %s, want UNREACHABLE", vm.GuestState)
	}
	if vm := e.vm(t, 1); vm.GuestState != virtualmachine.GuestStateBooting {
		t.Fatalf("VM within its deadline is %s, want BOOTING", vm.GuestState)
	}
	evs := e.c.Event.Query().AllX(ctx)
	var warnings int
	for _, ev := range evs {
		if ev.CheckName == guest.EventCheck && ev.Status == "WARNING" && ev.Labels["vm"] == itoa(e.vms[0]) {
			warnings++
		}
	}
	if warnings != 1 {
		t.Fatalf("%d warning events for the overdue guest, want 1 (events: %v)", warnings, evs)
	}
	if code, _ := e.post(t, credA, "", url.Values{"hostname": {"late"}}); code != http.StatusOK {
		t.Fatalf("late call: %d", code)
	}
	if vm := e.vm(t, 0); vm.GuestState != virtualmachine.GuestStateReady {
		t.Fatalf("a late guest's call left it %s, want READY", vm.GuestState)
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }
