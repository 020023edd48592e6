package provision

import (
	"time"

	"github.com/virtflow/virtflow/domain/guest"
	"github.com/virtflow/virtflow/domain/placement"
)

// Config configures a provisioning [Service].
type Config struct {
	// Placement configures the Placer the service places through (strategy, weights,
	// required quotas); its ReplicaRemover and Clock are set by New.
	Placement placement.Config
	// Clock gives the time of status changes (default time.Now); tests inject their own.
	Clock func() time.Time
	// Guest records what guests say about themselves; nil: one with guest's defaults and
	// Clock (it needs no client for what the reports do).
	Guest *guest.Service
}

// Service carries out the VM and region-service requests of the API: it places through its
// Placer and records the tasks the workers run. internal/app constructs one per process and
// hands it to the GraphQL resolvers; tests construct theirs with New too.
type Service struct {
	placer *placement.Placer
	now    func() time.Time
	guest  *guest.Service
}

// New returns a Service over a Placer made from cfg.Placement, whose scale-downs and
// deletes leave replicas realized on their nodes to the provisioning pipeline (see
// removeRealizedReplica).
func New(cfg Config) *Service {
	s := &Service{now: cfg.Clock}
	if s.now == nil {
		s.now = time.Now
	}
	pc := cfg.Placement
	pc.ReplicaRemover = s.removeRealizedReplica
	pc.Clock = s.now
	s.placer = placement.New(pc)
	s.guest = cfg.Guest
	if s.guest == nil {
		s.guest = guest.New(nil, guest.Config{Now: s.now})
	}
	return s
}

// Clock is the service's clock; internal/app gives it to the task handlers, the reconcile
// loop and the node monitor so that every status change of a process is dated by one clock.
func (s *Service) Clock() func() time.Time { return s.now }

// Guest is the service recording guests' reports.
func (s *Service) Guest() *guest.Service { return s.guest }

// Placer is the Placer the service places through; drains and explanations use the same one.
func (s *Service) Placer() *placement.Placer { return s.placer }
