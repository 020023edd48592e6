package fleet

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/virtflow/virtflow/agent/configdrive"
	"github.com/virtflow/virtflow/agent/hypervisor"
	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/controllers/kubecluster"
	"github.com/virtflow/virtflow/domain/guest"
	"github.com/virtflow/virtflow/domain/identity"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/computenode"
)

// Provision returns a simulated node for each of the compute nodes nodeIDs (every node in
// the database when nodeIDs is nil), each with a fresh agent token (IssueAgentToken) and the
// capacity recorded on the node, so that heartbeats report what the node already offers.
func Provision(ctx context.Context, c *ent.Client, ids *identity.Service, nodeIDs []int) ([]Node, error) {
	sys := authz.SystemContext(ctx, "fleet")
	q := c.ComputeNode.Query().Order(ent.Asc(computenode.FieldID)).
		Select(computenode.FieldCPUCapacity, computenode.FieldMemoryCapacityMB, computenode.FieldDiskCapacityGB)
	if nodeIDs != nil {
		q.Where(computenode.IDIn(nodeIDs...))
	}
	rows, err := q.All(sys)
	if err != nil {
		return nil, fmt.Errorf("list compute nodes: %w", err)
	}
	nodes := make([]Node, 0, len(rows))
	for _, r := range rows {
		tok, err := IssueAgentToken(ctx, c, ids, r.ID)
		if err != nil {
			return nil, err
		}
		n := Node{ID: r.ID, Token: tok, DiskGB: int(r.DiskCapacityGB)}
		if r.CPUCapacity > 0 && r.MemoryCapacityMB > 0 {
			n.Capacity = hypervisor.Capacity{VCPUs: r.CPUCapacity, MemoryMiB: r.MemoryCapacityMB}
		}
		nodes = append(nodes, n)
	}
	return nodes, nil
}

// RunDemo gives every compute node of the database a simulated agent talking to apiURL and
// runs the fleet until ctx ends: what `server --demo` does so that demo nodes heartbeat and
// their VMs become ACTIVE. Operations take a few hundred milliseconds and never fail.
func RunDemo(ctx context.Context, c *ent.Client, ids *identity.Service, apiURL string, log *slog.Logger) error {
	return RunDemoNotify(ctx, c, ids, apiURL, log, nil)
}

// RunDemoNotify is RunDemo calling started, when not nil, with the number of simulated nodes
// once every agent was given its token and the fleet starts.
func RunDemoNotify(ctx context.Context, c *ent.Client, ids *identity.Service, apiURL string, log *slog.Logger, started func(nodes int)) error {
	nodes, err := Provision(ctx, c, ids, nil)
	if err != nil {
		return err
	}
	f, err := New(Config{
		APIURL: apiURL,
		Nodes:  nodes,
		Delays: hypervisor.OperationDelays{Define: 100 * ms, Start: 500 * ms, Shutdown: 500 * ms, Stop: 100 * ms, Reboot: 500 * ms, Undefine: 100 * ms},
		Log:    log,
		// Every simulated guest boots and reports in, as a real one would when cloud-init is
		// done, through the endpoint's own function.
		// A Kubernetes node's guest reports its bootstrap too (kubecluster.SimulatedReport).
		OnConfigDrive: SimulateGuest(ctx, guest.New(c, guest.Config{OnBootstrap: kubecluster.OnBootstrap(time.Now)}), DemoGuestBoot, log),
	})
	if err != nil {
		return err
	}
	log.Info("simulated fleet started", "nodes", f.Size(), "api", apiURL)
	if started != nil {
		started(f.Size())
	}
	return f.Run(ctx)
}

// DemoGuestBoot is how long a demo guest takes from its drive being built to its call.
const DemoGuestBoot = 3 * time.Second

// SimulateGuest returns a config-drive hook (Config.OnConfigDrive) that plays each VM's
// guest: boot seconds after its drive was built it calls guests.Ready, the function behind
// POST /guest/ready, with the drive's credential, instance-id, host name and addresses, as a
// real guest's readiness call does. The guest of a Kubernetes node (its user-data runs
// kubecluster's bootstrap script) also says how the script ended, as the script's last
// step does: kubecluster.SimulatedReport, success on a simulated machine, where no kubeadm
// runs. A call that fails (a drive rebuilt meanwhile rotated the
// credential) is logged at debug level: the new drive's guest calls again.
func SimulateGuest(ctx context.Context, guests *guest.Service, boot time.Duration, log *slog.Logger) func(configdrive.Spec) {
	return func(spec configdrive.Spec) {
		if spec.GuestCredential == "" {
			return
		}
		var addrs []string
		for _, n := range spec.NICs {
			addrs = append(addrs, n.Addresses...)
		}
		r := guest.Report{InstanceID: spec.InstanceID, Hostname: spec.Hostname, Addresses: addrs, SourceIP: "simulated"}
		if b, ok := kubecluster.SimulatedReport(spec.UserData); ok {
			r.Step, r.Result, r.Reason, r.Mesh = b.Step, b.Result, b.Reason, b.Mesh
		}
		time.AfterFunc(boot, func() {
			if ctx.Err() != nil {
				return
			}
			if _, err := guests.Ready(ctx, spec.GuestCredential, r); err != nil {
				log.Debug("simulated guest's call refused", "instance", spec.InstanceID, "err", err)
			}
		})
	}
}

// ms keeps the demo's delays readable.
const ms = time.Millisecond
