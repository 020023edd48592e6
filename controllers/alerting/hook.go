package alerting

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/hibiken/asynq"

	"github.com/virtflow/virtflow/controllers/outbox"
	"github.com/virtflow/virtflow/domain/egress"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/alert"
	"github.com/virtflow/virtflow/ent/hookdelivery"
	"github.com/virtflow/virtflow/internal/platform/secrets"
	"github.com/virtflow/virtflow/store/truncate"
)

// Headers of a hook request.
const (
	// HeaderIdempotency carries the delivery's idempotency key: a receiver that sees a key
	// twice (a retry after a lost answer, a worker killed after sending) drops the repeat.
	HeaderIdempotency = "Idempotency-Key"
	// HeaderSignature is "sha256=<hex HMAC-SHA256 of the body>" under the rule's hook secret
	// (absent when the rule has none).
	HeaderSignature = "X-VirtFlow-Signature"
	// HeaderDelivery is the HookDelivery's id.
	HeaderDelivery = "X-VirtFlow-Delivery"
)

// HookBody is the JSON body of a hook.
type HookBody struct {
	IdempotencyKey string `json:"idempotencyKey"`
	Rule           string `json:"rule"`
	// MaintainerGroup names the group a hook routed by responsibility went to (Route).
	MaintainerGroup string `json:"maintainerGroup,omitempty"`
	Fingerprint     string `json:"fingerprint"`
	// Recovery is set when a SUCCESS follows a failure the rule notified.
	Recovery bool `json:"recovery"`
	// Group and Count describe an AGGREGATE rule's group (Count is 1 for one event).
	Group string     `json:"group,omitempty"`
	Count int        `json:"count"`
	Event EventBody  `json:"event"`
	Alert *AlertBody `json:"alert,omitempty"`
}

// EventBody is the event a hook is about.
type EventBody struct {
	ID      int               `json:"id"`
	Check   string            `json:"check"`
	Status  string            `json:"status"`
	Output  string            `json:"output,omitempty"`
	Node    string            `json:"node,omitempty"`
	Host    string            `json:"host,omitempty"`
	Rack    string            `json:"rack,omitempty"`
	Cluster string            `json:"cluster,omitempty"`
	Labels  map[string]string `json:"labels,omitempty"`
	At      time.Time         `json:"at"`
}

// AlertBody is the alert of the event's fingerprint, when there is one.
type AlertBody struct {
	ID          int    `json:"id"`
	Name        string `json:"name"`
	Severity    string `json:"severity"`
	Status      string `json:"status"`
	Occurrences int    `json:"occurrences"`
}

func eventBody(ev *ent.Event, s Subject) EventBody {
	return EventBody{ID: ev.ID, Check: s.Check, Status: s.Status, Output: ev.Output, Node: s.Node, Host: s.Host,
		Rack: s.Rack, Cluster: s.Cluster, Labels: s.Labels, At: ev.LastSeenAt}
}

// Sign returns the HeaderSignature value of body under secret.
func Sign(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// schedule records a HookDelivery of body to the rule's URL under key and, in the same
// transaction, the outbox task that delivers it (deduplicated by key).
func (e *Engine) schedule(ctx context.Context, c *ent.Client, r *ent.EventRule, key, fp string, body HookBody) (int, error) {
	if r.HookURL == "" {
		return 0, fmt.Errorf("CALL_HOOK rule %s has no hookUrl", r.Name)
	}
	body.IdempotencyKey = key
	a, err := c.Alert.Query().Where(alert.Fingerprint(fp)).Order(ent.Desc(alert.FieldID)).First(ctx)
	if err == nil {
		body.Alert = &AlertBody{ID: a.ID, Name: a.Name, Severity: string(a.Severity), Status: string(a.Status), Occurrences: a.Occurrences}
	} else if !ent.IsNotFound(err) {
		return 0, err
	}
	b, err := json.Marshal(body)
	if err != nil {
		return 0, err
	}
	cr := c.HookDelivery.Create().SetURL(r.HookURL).SetIdempotencyKey(key).SetPayload(string(b)).SetRuleID(r.ID)
	if body.Alert != nil {
		cr.SetAlertID(body.Alert.ID)
	}
	d, err := cr.Save(ctx)
	if err != nil {
		return 0, fmt.Errorf("record hook delivery: %w", err)
	}
	p, _ := json.Marshal(hookPayload{Delivery: d.ID})
	return d.ID, outbox.Enqueue(ctx, c, outbox.Task{Kind: TypeHook, Queue: Queue, Payload: p, DedupKey: "alerting:hook:" + key})
}

// deliver sends delivery id once: POST of its payload, signed, with its idempotency key.
// Every attempt is recorded on the delivery (attempts, response status, error); a 2xx
// answer makes it DELIVERED, anything else is an error Asynq retries with backoff, and the
// last failed retry makes it FAILED. A delivered delivery is not sent again.
func (e *Engine) deliver(ctx context.Context, id int) error {
	d, err := e.Client.HookDelivery.Query().Where(hookdelivery.ID(id)).WithRule().WithMaintainerGroup().Only(ctx)
	if ent.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if d.Status != hookdelivery.StatusPending {
		return nil
	}
	status, sendErr := e.post(ctx, d)
	now := e.now()
	u := e.Client.HookDelivery.UpdateOneID(id).AddAttempts(1).SetLastAttemptAt(now)
	if status != 0 {
		u.SetResponseStatus(status)
	}
	if sendErr == nil {
		u.SetStatus(hookdelivery.StatusDelivered).SetDeliveredAt(now).SetLastError("")
	} else {
		u.SetLastError(truncate.String(sendErr.Error(), 1024))
		retried, _ := asynq.GetRetryCount(ctx)
		if maxRetry, ok := asynq.GetMaxRetry(ctx); (ok && retried >= maxRetry) || errors.Is(sendErr, egress.ErrDenied) {
			// A denied address stays denied: no retry.
			u.SetStatus(hookdelivery.StatusFailed)
		}
	}
	if err := u.Exec(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("record delivery %d: %w", id, err)
	}
	if sendErr != nil {
		e.log().Warn("hook delivery failed", "delivery", id, "url", d.URL, "err", sendErr)
	}
	if errors.Is(sendErr, egress.ErrDenied) {
		return fmt.Errorf("%w: %w", sendErr, asynq.SkipRetry)
	}
	return sendErr
}

// HookTimeout bounds one hook request, redirects included.
const HookTimeout = 10 * time.Second

// HookClient is the client hooks are POSTed with under the egress policy p: HookTimeout,
// the policy's redirect rules, and the signature dropped on a redirect to another host.
func HookClient(p *egress.Policy) *http.Client { return p.Client(HookTimeout, HeaderSignature) }

// secret is the signing key of delivery d in clear ("" for none).
func (e *Engine) secret(d *ent.HookDelivery) (string, error) {
	stored, purpose := "", ""
	if r := d.Edges.Rule; r != nil && r.HookSecret != "" {
		stored, purpose = r.HookSecret, PurposeHookSecret
	}
	if g := d.Edges.MaintainerGroup; g != nil && g.WebhookSecret != "" {
		stored, purpose = g.WebhookSecret, PurposeWebhookSecret
	}
	if stored == "" || !secrets.IsSealed(stored) {
		return stored, nil
	}
	if e.Secrets == nil {
		return "", fmt.Errorf("the hook secret is sealed and this worker has no secret key (VIRTFLOW_SECRET_KEY)")
	}
	return e.Secrets.Open(stored, purpose)
}

func (e *Engine) post(ctx context.Context, d *ent.HookDelivery) (int, error) {
	hc := e.HTTP
	if hc == nil {
		// A client for this request only: keep no idle connection behind.
		hc = HookClient(egress.MustParse(""))
		hc.Transport.(*http.Transport).DisableKeepAlives = true
	}
	secret, err := e.secret(d)
	if err != nil {
		return 0, fmt.Errorf("sign hook: %w", err)
	}
	body := []byte(d.Payload)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.URL, bytes.NewReader(body))
	if err != nil {
		return 0, fmt.Errorf("hook request: %v: %w", err, asynq.SkipRetry)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "VirtFlow-Hook/1")
	req.Header.Set(HeaderIdempotency, d.IdempotencyKey)
	req.Header.Set(HeaderDelivery, strconv.Itoa(d.ID))
	if secret != "" {
		req.Header.Set(HeaderSignature, Sign(secret, body))
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, fmt.Errorf("POST %s: %w", d.URL, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp.StatusCode, fmt.Errorf("POST %s: %s", d.URL, resp.Status)
	}
	return resp.StatusCode, nil
}
