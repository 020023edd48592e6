package kubecluster

import (
	"context"
	"log/slog"
	"time"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/controllers/provision"
	"github.com/virtflow/virtflow/domain/placement"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/internal/platform/secrets"
)

// Config wires a Service.
type Config struct {
	// Client is the database the workflow's tasks work on (not a transaction's).
	Client *ent.Client
	// Provision deletes the cluster's VMs through the provisioning pipeline; its Placer
	// places them.
	Provision *provision.Service
	// Secrets seals the clusters' keys and tokens (VIRTFLOW_SECRET_KEY).
	Secrets *secrets.Keyring
	// Clock (default: the provisioning Service's).
	Clock func() time.Time
	// Log receives what the workflow does; nil discards it.
	Log *slog.Logger
	// PollInterval is how often a step that waits (VMs being deleted, a replacement node
	// booting) looks again (default 2 s).
	PollInterval time.Duration
	// Fault, when set, runs at the start of every step, in its transaction, with the
	// cluster's phase, and fails the step with its error: a fault-injection point for tests
	// (a worker dying mid-step). Nil in production.
	Fault func(phase string) error
}

// Service creates, changes and deletes Kubernetes clusters for the API, runs their
// workflow in the worker (Handlers) and records what their guests report.
type Service struct {
	client *ent.Client
	prov   *provision.Service
	placer *placement.Placer
	keys   *secrets.Keyring
	now    func() time.Time
	log    *slog.Logger
	poll   time.Duration
	fault  func(phase string) error
}

// New returns a Service.
func New(cfg Config) *Service {
	s := &Service{client: cfg.Client, prov: cfg.Provision, placer: cfg.Provision.Placer(), keys: cfg.Secrets, now: cfg.Clock, log: cfg.Log, poll: cfg.PollInterval}
	if s.now == nil {
		s.now = cfg.Provision.Clock()
	}
	s.fault = cfg.Fault
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.poll <= 0 {
		s.poll = 2 * time.Second
	}
	return s
}

// system is ctx acting as the cluster workflow.
func system(ctx context.Context) context.Context { return authz.SystemContext(ctx, "kubernetes") }
