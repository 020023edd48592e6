package provision

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/hibiken/asynq"

	"github.com/virtflow/virtflow/agent/configdrive"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/port"
	"github.com/virtflow/virtflow/ent/virtualmachine"
)

// The provisioning work vm:create does between "placed" (the mutation) and "realized" (the
// agent), in this order; each step is idempotent, so a retried task does it again safely:
//
//  1. waitForImage: the VM's image must be ready on the server before a node can fetch it;
//  2. RenderConfigDrive: what the VM's config drive says, from its ports, addresses,
//     networks and SSH keys (rows only the server may read), into the assignment;
//  3. the Assignment itself (handlers.go), which hands the VM to the node's agent.
//
// Disks need no step here: the root disk is the node's own work (an overlay of its cached
// copy of the image), and volumes were placed on the VM's node when they were attached, each
// realized by an assignment of its own (volumes.go).

// ErrNotReady is what vm:create fails with while something the VM needs is still being
// prepared (its image downloading). Such an attempt does not count against the task's
// retries ([IsFailure]) and is retried after [NotReadyDelay] ([RetryDelay]): the task waits
// as long as the preparation takes, and the reconcile deadline bounds the wait.
var ErrNotReady = errors.New("not ready yet")

// NotReadyDelay is how long vm:create waits before it looks again at what was not ready.
const NotReadyDelay = 5 * time.Second

// IsFailure is the Asynq server's IsFailure: a task that found something not ready yet
// ([ErrNotReady]) did not fail, and is retried without using up a retry.
func IsFailure(err error) bool { return err != nil && !errors.Is(err, ErrNotReady) }

// imageErrorStatus and the ready statuses of an Image, compared as strings: the image
// lifecycle (PENDING, DOWNLOADING, ACTIVE, DEPRECATED, ERROR) is the image pipeline's.
const imageErrorStatus = "ERROR"

var imageReady = []string{"ACTIVE", "DEPRECATED"}

// imageFailed is returned by waitForImage when the VM's image can never be used: the task
// moves the VM to ERROR with this reason at once.
type imageFailed struct{ reason string }

func (e imageFailed) Error() string { return e.reason }

// waitForImage checks the VM's image: ready (ACTIVE or DEPRECATED) → nil; ERROR →
// imageFailed naming it; anything else (PENDING, DOWNLOADING) → an error wrapping
// ErrNotReady. A VM without an image needs none.
func waitForImage(ctx context.Context, c *ent.Client, vm *ent.VirtualMachine) error {
	img, err := c.VirtualMachine.QueryImage(vm).Only(system(ctx))
	if ent.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("image of VM %s: %w", vm.Name, err)
	}
	status := string(img.Status)
	switch {
	case slices.Contains(imageReady, status):
		return nil
	case status == imageErrorStatus:
		return imageFailed{reason: fmt.Sprintf("image %s cannot be used (status ERROR)", img.Name)}
	default:
		return fmt.Errorf("image %s is %s: %w", img.Name, status, ErrNotReady)
	}
}

// RenderConfigDrive returns what VM id's config drive says, as the JSON of a
// configdrive.Spec (the Assignment's configDrive): instance-id vm-<id>, the VM's name as
// host name, its user-data, one NIC per port (by name) with its MAC, its addresses in CIDR
// notation with their network's prefix length, the network's gateway and DNS servers, and
// the VM's SSH keys for the image's default user. The drain uses it too, so a moved VM keeps
// its drive.
func RenderConfigDrive(ctx context.Context, c *ent.Client, id int) (string, error) {
	sys := system(ctx)
	vm, err := c.VirtualMachine.Query().Where(virtualmachine.ID(id)).
		WithPorts(func(q *ent.PortQuery) {
			q.Order(port.ByName()).WithNetwork().WithIPAddresses()
		}).
		WithSSHKeys().Only(sys)
	if err != nil {
		return "", fmt.Errorf("read VM %d for its config drive: %w", id, err)
	}
	spec := configdrive.Spec{
		InstanceID: fmt.Sprintf("vm-%d", vm.ID),
		Hostname:   hostname(vm.Name),
		UserData:   vm.UserData,
	}
	for _, p := range vm.Edges.Ports {
		if p.MAC == "" {
			continue
		}
		nic := configdrive.NIC{MAC: p.MAC}
		if n := p.Edges.Network; n != nil {
			prefix, err := netip.ParsePrefix(n.Cidr)
			if err != nil {
				return "", fmt.Errorf("network %s: %w", n.Name, err)
			}
			for _, a := range p.Edges.IPAddresses {
				ip, err := netip.ParseAddr(a.Address)
				if err != nil {
					return "", fmt.Errorf("address %s: %w", a.Address, err)
				}
				nic.Addresses = append(nic.Addresses, netip.PrefixFrom(ip, prefix.Bits()).String())
			}
			if n.Gateway != "" {
				nic.Gateways = []string{n.Gateway}
			}
			nic.DNS = n.DNSServers
		}
		spec.NICs = append(spec.NICs, nic)
	}
	for _, k := range vm.Edges.SSHKeys {
		spec.SSHKeys = append(spec.SSHKeys, k.PublicKey)
	}
	if _, err := configdrive.Render(spec); err != nil {
		return "", fmt.Errorf("config drive of VM %s: %w", vm.Name, err)
	}
	out, err := json.Marshal(spec)
	if err != nil {
		return "", err
	}
	return string(out), nil
}

// hostname is a VM name as a host name: characters a host name may not have become '-'.
func hostname(name string) string {
	h := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '.':
			return r
		}
		return '-'
	}, name)
	h = strings.Trim(h, "-.")
	if h == "" {
		return "vm"
	}
	return truncateHost(h)
}

func truncateHost(h string) string {
	if len(h) > 63 {
		h = strings.TrimRight(h[:63], "-.")
	}
	return h
}

// prepare does the provisioning work of vm:create before its assignment is written (see
// the list at the top of this file) and returns the config drive to put on it. An image in
// ERROR is a failure for good (SkipRetry, so Failed moves the VM to ERROR naming it).
func (h *Handlers) prepare(ctx context.Context, c *ent.Client, vm *ent.VirtualMachine) (string, error) {
	if err := waitForImage(ctx, c, vm); err != nil {
		var failed imageFailed
		if errors.As(err, &failed) {
			return "", fmt.Errorf("%s: %w", failed.reason, asynq.SkipRetry)
		}
		return "", err
	}
	drive, err := RenderConfigDrive(ctx, c, vm.ID)
	if err != nil {
		return "", err
	}
	return drive, nil
}
