package app

import (
	"log/slog"

	"github.com/virtflow/virtflow/controllers/alerting"
	"github.com/virtflow/virtflow/controllers/imagestore"
	"github.com/virtflow/virtflow/controllers/outbox"
	"github.com/virtflow/virtflow/domain/placement"
	"github.com/virtflow/virtflow/gateway/livestatus"
	"github.com/virtflow/virtflow/internal/platform/infra"
	"github.com/virtflow/virtflow/internal/platform/telemetry"
)

// hooked is what installHooks made that a process's components use later: the outbox relay
// and the placement snapshot cache (not yet running), both woken by the hooks installed.
type hooked struct {
	relay *outbox.Relay
	snaps *placement.Snapshots
}

// installHooks installs every ent hook of a process on db.Client. It is the only place
// that does: ent's Use is not safe while the client is in use, so it runs after the database
// is opened and before anything — a query, a goroutine, a listener — uses the client. The
// servers and the workers install the same hooks, in this order; the first installed runs
// first (outermost) on every mutation:
//
//  1. Write rules, which reject or rewrite a mutation before anything sees it: image
//     sources through the egress policy (imagestore.Install), then the alert rules' hook
//     URLs through the egress policy and their secrets sealed (alerting.Install).
//  2. Live status (livestatus.Install): status changes published on the deployment's
//     live channel once their transaction commits.
//  3. Placement snapshots (placement.NewSnapshots): the regions whose nodes, quotas or
//     assignments changed, told to every process's cache once committed.
//  4. The outbox relay (outbox.NewRelay): woken when a transaction that recorded a task
//     commits, instead of at its next poll.
//
// The publishers (2–4) act only after the rules (1) let a mutation through and its
// transaction committed, so nothing is announced that a rule refused.
func installHooks(db *infra.Database, redis *infra.Redis, g guards, tr *telemetry.Tracing, log *slog.Logger) hooked {
	imagestore.Install(db.Client, g.egress)
	alerting.Install(db.Client, g.egress, g.secrets)
	livestatus.Install(db.Client, redis.Client, log.With("component", "livestatus")).Channel = redis.Key("live")
	snaps := placement.NewSnapshots(placement.SnapshotsConfig{Client: db.Client, Redis: redis.Client,
		Channel: redis.Key("placement"), Log: log.With("component", "placement")})
	rl := outbox.NewRelay(db.Client, redis.Asynq, outbox.Config{Dialect: db.Dialect, Options: taskOptions,
		Logger: log.With("component", "outbox"), Tracer: tr.Provider})
	return hooked{relay: rl, snaps: snaps}
}
