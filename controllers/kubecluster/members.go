package kubecluster

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/ipaddress"
	"github.com/virtflow/virtflow/ent/kubernetescluster"
	"github.com/virtflow/virtflow/ent/port"
	"github.com/virtflow/virtflow/ent/schema/fieldtype"
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

// APIListener is the one listener of a cluster's API load balancer: TCP on APIPort, passed
// through to APIPort on the control planes (TLS ends on the API servers, whose certificate
// names the VIP).
var APIListener = fieldtype.LBListener{Port: APIPort, Protocol: "TCP", TargetPort: APIPort}

// APILoadBalancerIDs are the load balancers that serve a Kubernetes cluster's API.
func APILoadBalancerIDs(ctx context.Context, c *ent.Client) ([]int, error) {
	ks, err := c.KubernetesCluster.Query().Where(kubernetescluster.APILoadBalancerIDNotNil()).
		Select(kubernetescluster.FieldAPILoadBalancerID).All(system(ctx))
	if err != nil {
		return nil, fmt.Errorf("API load balancers: %w", err)
	}
	ids := make([]int, 0, len(ks))
	for _, k := range ks {
		ids = append(ids, *k.APILoadBalancerID)
	}
	return ids, nil
}

// APILoadBalancerMembers returns the backends of API load balancer lbID (see
// apiLoadBalancerMembers); none when no cluster's API uses it. The traffic loop makes them
// the load balancer's members, so the API VIP forwards to the control planes.
func APILoadBalancerMembers(ctx context.Context, c *ent.Client, lbID int) ([]Member, error) {
	k, err := c.KubernetesCluster.Query().Where(kubernetescluster.APILoadBalancerID(lbID)).First(system(ctx))
	if ent.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cluster of load balancer %d: %w", lbID, err)
	}
	return apiLoadBalancerMembers(ctx, c, k.ID)
}

// apiLoadBalancerMembers returns the backends of cluster id's API load balancer: every
// control plane that is not being removed, on APIPort.
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
