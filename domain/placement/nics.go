package placement

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"entgo.io/ent/dialect/sql"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/domain/ipam"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/ipaddress"
	"github.com/virtflow/virtflow/ent/network"
	"github.com/virtflow/virtflow/ent/port"
	"github.com/virtflow/virtflow/ent/region"
	"github.com/virtflow/virtflow/ent/sshkey"
	"github.com/virtflow/virtflow/ent/tenant"
	"github.com/virtflow/virtflow/ent/virtualmachine"
	"github.com/virtflow/virtflow/store/rowlock"
)

// MaxNICs is the most networks one VM may be created on (the MAC scheme below has room for
// 64 NICs per VM).
const MaxNICs = 16

// NICDriver is the NIC model of the ports placement creates.
const NICDriver = "virtio"

// networksFor resolves the networks a VM (or every replica of a service) of tenant in region
// is created on: the requested ones, in the order given, or else the tenant's default VM
// network, or else none (the VM then has no NIC; see Tenant.defaultVMNetwork). A requested
// network must exist, be a VM network, belong to the region (through its datacenter, when it
// has one) and be shared or the tenant's own: anything else is VALIDATION on field.
func networksFor(ctx context.Context, c *ent.Client, tenantID, regionID int, requested []int, field string) ([]*ent.Network, error) {
	sys := authz.Unrestricted(ctx)
	if len(requested) == 0 {
		n, err := c.Tenant.Query().Where(tenant.ID(tenantID)).QueryDefaultVMNetwork().Only(sys)
		if ent.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("default VM network of tenant %d: %w", tenantID, err)
		}
		requested = []int{n.ID}
	}
	if len(requested) > MaxNICs {
		return nil, apierr.Validation(field, "a VM may be on at most %d networks", MaxNICs)
	}
	for i, id := range requested {
		if slices.Contains(requested[:i], id) {
			return nil, apierr.Validation(field, "network %d is named twice", id)
		}
	}
	nets, err := c.Network.Query().Where(network.IDIn(requested...)).WithTenant().WithDatacenter(func(q *ent.DatacenterQuery) {
		q.WithRegion(func(q *ent.RegionQuery) { q.Select(region.FieldID) })
	}).All(sys)
	if err != nil {
		return nil, fmt.Errorf("read networks: %w", err)
	}
	byID := map[int]*ent.Network{}
	for _, n := range nets {
		byID[n.ID] = n
	}
	out := make([]*ent.Network, 0, len(requested))
	for _, id := range requested {
		n := byID[id]
		switch {
		case n == nil:
			return nil, apierr.Validation(field, "network %d does not exist", id)
		case n.Edges.Tenant != nil && n.Edges.Tenant.ID != tenantID:
			// Another tenant's (read as the system): refused before anything about it is
			// said, and not named (errors name only records the viewer may read).
			return nil, apierr.Validation(field, "network %d does not exist", id)
		case n.Purpose != network.PurposeVm:
			return nil, apierr.Validation(field, "network %s is a %s network; VMs go on VM networks", n.Name, n.Purpose)
		case n.Edges.Datacenter != nil && n.Edges.Datacenter.Edges.Region != nil && n.Edges.Datacenter.Edges.Region.ID != regionID:
			return nil, apierr.Validation(field, "network %s is not in the VM's region", n.Name)
		}
		out = append(out, n)
	}
	return out, nil
}

// sshKeysFor checks that the viewer may read every key of ids (its tenant's keys, or its
// own) and that they belong to tenant or to a user: VALIDATION on sshKeyIDs otherwise.
func sshKeysFor(ctx context.Context, c *ent.Client, tenantID int, ids []int) error {
	if len(ids) == 0 {
		return nil
	}
	keys, err := c.SSHKey.Query().Where(sshkey.IDIn(ids...)).WithTenant().All(ctx)
	if err != nil {
		return fmt.Errorf("read SSH keys: %w", err)
	}
	found := map[int]*ent.SSHKey{}
	for _, k := range keys {
		found[k.ID] = k
	}
	for _, id := range ids {
		k := found[id]
		if k == nil {
			return apierr.Validation("sshKeyIDs", "SSH key %d does not exist", id)
		}
		if k.Edges.Tenant != nil && k.Edges.Tenant.ID != tenantID {
			return apierr.Validation("sshKeyIDs", "SSH key %s belongs to another tenant", k.Name)
		}
	}
	return nil
}

// nicMAC is the MAC of NIC index of VM vm: locally administered and unicast (the first
// octet's two low bits are 1 and 0), the index in the first octet's upper six bits, 0x76
// ('v') next, then the low 32 bits of the VM's id. VM ids are never reused, so no two NICs
// placement creates share a MAC; the unique index on ports.mac is the backstop.
func nicMAC(vm, index int) string {
	id := uint32(vm)
	return fmt.Sprintf("%02x:76:%02x:%02x:%02x:%02x", byte(index<<2)|0x02, byte(id>>24), byte(id>>16), byte(id>>8), byte(id))
}

// attachNICs gives every VM of vms a NIC on each of nets: a port eth<i> with its MAC, bound
// to an address IPAM allocates, in the placement's transaction, so a VM never exists without
// its addresses and a failed allocation leaves nothing behind. The networks are locked in id
// order before anything is written to them (then the ports and addresses), so concurrent
// creates take turns per network and never wait on each other in a cycle. A network without
// a free address is RESOURCE_EXHAUSTED on field, naming it.
func (t *txn) attachNICs(ctx context.Context, vms []int, nets []*ent.Network, field string) error {
	if len(vms) == 0 || len(nets) == 0 {
		return nil
	}
	sys := system(ctx)
	order := make([]int, len(nets))
	for i := range nets {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return nets[a].ID - nets[b].ID })
	for _, i := range order {
		n := nets[i]
		if _, err := t.c.Network.Query().Where(network.ID(n.ID)).Modify(rowlock.ForUpdate).Only(sys); err != nil {
			return fmt.Errorf("lock network %s: %w", n.Name, err)
		}
		for _, vm := range vms {
			p, err := t.c.Port.Create().SetName(fmt.Sprintf("eth%d", i)).SetKind(port.KindVirtual).
				SetDriver(NICDriver).SetMAC(nicMAC(vm, i)).SetNetworkID(n.ID).SetVirtualMachineID(vm).
				SetNillableVlan(nilIfZero(n.Vlan)).Save(sys)
			if err != nil {
				return fmt.Errorf("create NIC on network %s: %w", n.Name, err)
			}
			pid := p.ID
			if _, err := ipam.Allocate(sys, t.c, ipam.Request{NetworkID: n.ID, PortID: &pid}); err != nil {
				var ae *apierr.Error
				if errors.As(err, &ae) && ae.Code == apierr.CodeExhausted {
					return apierr.Exhausted(field, "network %s (%s) has no free address for the VM", n.Name, n.Cidr)
				}
				return fmt.Errorf("address on network %s: %w", n.Name, err)
			}
		}
	}
	if err := t.c.VirtualMachine.Update().Where(virtualmachine.IDIn(vms...)).
		AddNetworkIDs(networkIDs(nets)...).Exec(sys); err != nil {
		return fmt.Errorf("record the networks of VMs: %w", err)
	}
	return nil
}

// releaseNICs deletes the NICs of vms (ports placement created, and any other port of the
// VMs) and the addresses bound to them, which frees the addresses for the next allocation.
func (t *txn) releaseNICs(ctx context.Context, vms []int) error {
	sys := system(ctx)
	ofVMs := func(s *sql.Selector) { s.Where(sql.InInts(s.C(port.VirtualMachineColumn), vms...)) }
	if _, err := t.c.IPAddress.Delete().Where(ipaddress.HasPortWith(ofVMs)).Exec(sys); err != nil {
		return fmt.Errorf("release addresses of VMs %v: %w", vms, err)
	}
	if _, err := t.c.Port.Delete().Where(ofVMs).Exec(sys); err != nil {
		return fmt.Errorf("delete NICs of VMs %v: %w", vms, err)
	}
	return nil
}

func networkIDs(nets []*ent.Network) []int {
	ids := make([]int, len(nets))
	for i, n := range nets {
		ids[i] = n.ID
	}
	return ids
}

func nilIfZero(v int) *int {
	if v == 0 {
		return nil
	}
	return &v
}
