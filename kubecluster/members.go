package kubecluster

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/ipaddress"
	"github.com/virtflow/virtflow/ent/kubernetescluster"
	"github.com/virtflow/virtflow/ent/port"
	"github.com/virtflow/virtflow/ent/virtualmachine"
)

// APIPort is the port of the Kubernetes API on the VIP and on every control plane.
const APIPort = 6443

// Member is a control plane behind the API's load balancer.
type Member struct {
	VMID int
	Name string
	// Address is the VM's first address (from IPAM, else what its guest reported); empty
	// while it has none.
	Address string
	Port    int
}

// apiLoadBalancerMembers returns the backends of cluster id's API load balancer: every
// control plane that is not being removed, on APIPort. The load balancer itself carries
// only the VIP today (its schema has no members or listeners yet); when it gets them, the
// cluster's workflow sets them from this list after each change of the control plane.
func apiLoadBalancerMembers(ctx context.Context, c *ent.Client, id int) ([]Member, error) {
	ctx = system(ctx)
	k, err := c.KubernetesCluster.Query().Where(kubernetescluster.ID(id)).Only(ctx)
	if err != nil {
		return nil, fmt.Errorf("cluster %d: %w", id, err)
	}
	var out []Member
	for _, n := range k.Nodes {
		if n.Role != RoleControlPlane || n.State == StateRemoving || n.VMID == 0 {
			continue
		}
		m := Member{VMID: n.VMID, Name: n.Name, Port: APIPort}
		addrs, err := c.IPAddress.Query().Where(ipaddress.HasPortWith(port.HasVirtualMachineWith(virtualmachine.ID(n.VMID)))).
			Order(ent.Asc(ipaddress.FieldID)).All(ctx)
		if err != nil {
			return nil, err
		}
		if len(addrs) > 0 {
			m.Address = addrs[0].Address
			if p, err := netip.ParsePrefix(m.Address); err == nil {
				m.Address = p.Addr().String()
			}
		} else if vm, err := c.VirtualMachine.Get(ctx, n.VMID); err == nil && len(vm.GuestAddresses) > 0 {
			m.Address = vm.GuestAddresses[0]
		}
		out = append(out, m)
	}
	return out, nil
}
