package alerting_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/virtflow/virtflow/controllers/alerting"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/domain/egress"
	"github.com/virtflow/virtflow/ent/event"
	"github.com/virtflow/virtflow/ent/eventrule"
	"github.com/virtflow/virtflow/ent/hookdelivery"
	"github.com/virtflow/virtflow/internal/platform/secrets"
	"github.com/virtflow/virtflow/internal/testkit/poll"
)

// TestHookURLRefusedWhenStored: an event rule's hookURL and a group's webhookURL that name
// a denied address, in any spelling, are refused with VALIDATION naming the field, and
// nothing is stored.
func TestHookURLRefusedWhenStored(t *testing.T) {
	db, _ := site(t, 1)
	c, ctx := db.Client, sys()
	for _, u := range []string{"http://169.254.169.254/latest/meta-data/", "http://2130706434:8080/", "http://0x7f.2/", // 127.0.0.2: the tests allow 127.0.0.1 only

		"http://[::ffff:127.0.0.2]/", "http://10.0.0.1/", "gopher://hooks.example.com/"} {
		start := time.Now()
		_, err := rule(c, "r", eventrule.KindAction).SetAction(eventrule.ActionCallHook).SetHookURL(u).Save(ctx)
		took := time.Since(start)
		if ae, ok := apierr.As(err); !ok || ae.Code != apierr.CodeValidation || ae.Field != "hookURL" {
			t.Errorf("hookURL %s: %v, want VALIDATION on hookURL", u, err)
		}
		_, err = c.MaintainerGroup.Create().SetName("g").SetWebhookURL(u).Save(ctx)
		if ae, ok := apierr.As(err); !ok || ae.Code != apierr.CodeValidation || ae.Field != "webhookURL" {
			t.Errorf("webhookURL %s: %v, want VALIDATION on webhookURL", u, err)
		}
		t.Logf("%s refused in %v", u, took)
	}
	if n := c.EventRule.Query().CountX(ctx) + c.MaintainerGroup.Query().CountX(ctx); n != 0 {
		t.Fatalf("%d rows stored", n)
	}
	// An update is checked as a create is.
	r := rule(c, "ok", eventrule.KindAction).SetAction(eventrule.ActionCallHook).SetHookURL("https://hooks.example.com/x").SaveX(ctx)
	if _, err := c.EventRule.UpdateOne(r).SetHookURL("http://127.2/").Save(ctx); err == nil {
		t.Fatal("update to a loopback hookURL accepted")
	}
}

// deliverNow runs the hook task of delivery id through the engine, as the worker does.
func deliverNow(e *alerting.Engine, id int) error {
	return e.ProcessTask(context.Background(), asynq.NewTask(alerting.TypeHook, fmt.Appendf(nil, `{"delivery":%d}`, id)))
}

// TestHookRedirectToLoopbackNotFollowed: a hook receiver reached by an allowed name that
// answers 302 to a loopback address does not get the request followed there: the
// internal server sees nothing, the delivery fails for good at once (no retries against
// a denied address) with the reason.
func TestHookRedirectToLoopbackNotFollowed(t *testing.T) {
	db, s := site(t, 1)
	c, ctx := db.Client, sys()
	var internalHits atomic.Int32
	internal := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { internalHits.Add(1) }))
	t.Cleanup(internal.Close)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, internal.URL+"/admin", http.StatusFound)
	}))
	t.Cleanup(front.Close)
	hookURL := strings.Replace(front.URL, "127.0.0.1", "localhost", 1)
	rule(c, "hook", eventrule.KindAction).SetAction(eventrule.ActionCallHook).SetHookURL(hookURL).SetHookSecret("sig").SaveX(ctx)
	evs := report(t, c, ctx, alerting.EventInput{NodeID: s.Nodes[0].ID, CheckName: "disk", Status: event.StatusCritical})
	e := &alerting.Engine{Client: c, Log: quiet(), Secrets: testKeys(),
		HTTP: alerting.HookClient(egress.MustParse("localhost"))} // the receiver's name only, not loopback addresses
	if err := e.ProcessEvents(ctx, evs); err != nil {
		t.Fatal(err)
	}
	d := c.HookDelivery.Query().OnlyX(ctx)
	err := deliverNow(e, d.ID)
	if !errors.Is(err, egress.ErrDenied) || !errors.Is(err, asynq.SkipRetry) {
		t.Fatalf("deliver: %v, want ErrDenied without retry", err)
	}
	d = c.HookDelivery.GetX(ctx, d.ID)
	if d.Status != hookdelivery.StatusFailed || !strings.Contains(d.LastError, "denied") || internalHits.Load() != 0 {
		t.Fatalf("delivery %s %q, internal hits %d: want FAILED naming the denial and no hit", d.Status, d.LastError, internalHits.Load())
	}
}

// TestHookSecretsSealed: hook secrets are stored sealed (the raw column holds neither the
// secret nor anything that opens without the key), hooks are still signed with the secret
// in clear, end to end through the outbox, Asynq and the hook sender; a secret stored in
// clear before sealing (a legacy row) is sealed by SealStored and still signs.
func TestHookSecretsSealed(t *testing.T) {
	db, s := site(t, 1)
	c, ctx := db.Client, sys()
	const secret = "correct horse battery staple"
	hooks := newHookServer(t, secret, 0)
	r := rule(c, "hook", eventrule.KindAction).SetAction(eventrule.ActionCallHook).SetHookURL(hooks.URL).SetHookSecret(secret).SaveX(ctx)
	g := c.MaintainerGroup.Create().SetName("team").SetWebhookSecret(secret).SaveX(ctx)
	raw := func(table string, id int) string {
		var v string
		rows, err := db.DB.QueryContext(ctx, fmt.Sprintf("SELECT %s FROM %s WHERE id = $1",
			map[string]string{"event_rules": "hook_secret", "maintainer_groups": "webhook_secret"}[table], table), id)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		if !rows.Next() {
			t.Fatalf("no %s row %d", table, id)
		}
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, tc := range []struct {
		table   string
		id      int
		purpose string
	}{{"event_rules", r.ID, alerting.PurposeHookSecret}, {"maintainer_groups", g.ID, alerting.PurposeWebhookSecret}} {
		v := raw(tc.table, tc.id)
		if strings.Contains(v, "horse") || !secrets.IsSealed(v) {
			t.Fatalf("%s column holds %q", tc.table, v)
		}
		if plain, err := testKeys().Open(v, tc.purpose); err != nil || plain != secret {
			t.Fatalf("%s: opens to %q, %v", tc.table, plain, err)
		}
	}

	stop := pipeline(t, c, db.Dialect, privateRedis(t))
	defer stop()
	report(t, c, ctx, alerting.EventInput{NodeID: s.Nodes[0].ID, CheckName: "disk", Status: event.StatusCritical})
	poll.Until(t, 20*time.Second, func() error {
		if n := len(hooks.received()); n != 1 || hooks.bad != 0 {
			return fmt.Errorf("%d hooks, %d badly signed", n, hooks.bad)
		}
		return nil
	})

	// A legacy row: the secret in clear, as before sealing.
	if _, err := db.DB.ExecContext(ctx, "UPDATE event_rules SET hook_secret = $1 WHERE id = $2", secret, r.ID); err != nil {
		t.Fatal(err)
	}
	n, err := alerting.SealStored(ctx, c, testKeys())
	if err != nil || n != 1 {
		t.Fatalf("SealStored: %d rows, %v; want 1", n, err)
	}
	if v := raw("event_rules", r.ID); strings.Contains(v, "horse") || !secrets.IsSealed(v) {
		t.Fatalf("after SealStored the column holds %q", v)
	}
	if n, err := alerting.SealStored(ctx, c, testKeys()); err != nil || n != 0 {
		t.Fatalf("SealStored again: %d rows, %v; want none", n, err)
	}
	report(t, c, ctx, alerting.EventInput{NodeID: s.Nodes[0].ID, CheckName: "disk", Status: event.StatusWarning})
	poll.Until(t, 20*time.Second, func() error {
		if n := len(hooks.received()); n != 2 || hooks.bad != 0 {
			return fmt.Errorf("%d hooks, %d badly signed", n, hooks.bad)
		}
		return nil
	})
}
