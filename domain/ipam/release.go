package ipam

import (
	"context"
	"fmt"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/hook"
	"github.com/virtflow/virtflow/ent/ipaddress"
	"github.com/virtflow/virtflow/ent/loadbalancer"
	"github.com/virtflow/virtflow/ent/port"
	"github.com/virtflow/virtflow/ent/virtualmachine"
	"github.com/virtflow/virtflow/store/dbtx"
	"github.com/virtflow/virtflow/store/rowlock"
)

// Release deletes address id, which frees it: the next allocation in its network may hand it
// out again (the lowest free address first, so often at once). It returns id.
//
// Decisions:
//   - An address bound to a VM — to a port (NIC) of a VM that is not DELETED — is not
//     released: CONFLICT on id, naming the VM. The guest still uses the address, and handing
//     it out again would put it on two machines. It is released with its VM (deleting the VM
//     frees its NICs' addresses), or with force by an operator or admin who knows the VM is
//     gone for good (force from anyone else, tenant members included, is FORBIDDEN on force,
//     whatever the address). BoundHook enforces the same for deleteIPAddress.
//   - An address that is a load balancer's VIP is not released, force or not: CONFLICT on id,
//     naming the load balancer. Taking the VIP away from a running load balancer cuts its
//     service, so it must be an explicit step first (updateLoadBalancer(input: {clearVip:
//     true}), or deleting the load balancer). The address row is locked while this is checked,
//     so the VIP cannot be set between the check and the delete.
//   - An address bound to a port of a host, or of a deleted VM, is released; the binding goes
//     with the row.
//   - An address that does not exist or that the viewer may not see is NOT_FOUND, as for
//     deleteIPAddress; whether the viewer may delete it is ent privacy's decision.
//
// It runs in the caller's transaction when there is one (see dbtx.Run) and in its own otherwise.
func Release(ctx context.Context, client *ent.Client, id int, force bool) (int, error) {
	if force {
		if v := authz.FromContext(ctx); !v.IsSystem() && (v == nil || !v.Can("IPAddress", authz.ActWrite)) {
			return 0, &apierr.Error{Code: apierr.CodeForbidden, Field: "force",
				Message: "only an operator or admin may force the release of an address in use"}
		}
		ctx = context.WithValue(ctx, forceKey{}, true)
	}
	_, err := dbtx.Run(ctx, client, func(c *ent.Client) error {
		ip, err := c.IPAddress.Query().Where(ipaddress.ID(id)).Modify(rowlock.ForUpdate).Only(ctx)
		if err != nil {
			return err // NOT_FOUND through dberr.Classify
		}
		lb, err := c.LoadBalancer.Query().Where(loadbalancer.HasVipWith(ipaddress.ID(id))).
			Select(loadbalancer.FieldName).Only(authz.Unrestricted(ctx))
		switch {
		case err == nil:
			return &apierr.Error{Code: apierr.CodeConflict, Field: "id", Message: fmt.Sprintf(
				"%s is the VIP of load balancer %s; clear it first (updateLoadBalancer with clearVip) or delete the load balancer",
				ip.Address, lb.Name)}
		case !ent.IsNotFound(err):
			return fmt.Errorf("read the load balancer of address %s: %w", ip.Address, err)
		}
		return c.IPAddress.DeleteOneID(id).Exec(ctx) // BoundHook refuses a bound address unless forced
	})
	if err != nil {
		return 0, err
	}
	return id, nil
}

// forceKey marks a context in which Release was asked, by an operator or admin, to release an
// address even if a VM uses it.
type forceKey struct{}

// BoundHook refuses to delete, one at a time (releaseIPAddress, deleteIPAddress), an address
// bound to a VM that is not DELETED: CONFLICT on id, naming the VM and the way out. Release
// with force (operators and admins only) passes. Deleting a VM frees its addresses in one
// bulk delete of its NICs' addresses (package placement), which this hook leaves alone: that
// is the address going with its VM.
func BoundHook() ent.Hook {
	return hook.On(func(next ent.Mutator) ent.Mutator {
		return hook.IPAddressFunc(func(ctx context.Context, m *ent.IPAddressMutation) (ent.Value, error) {
			if forced, _ := ctx.Value(forceKey{}).(bool); forced {
				return next.Mutate(ctx, m)
			}
			id, ok := m.ID()
			if !ok {
				return next.Mutate(ctx, m)
			}
			sys := authz.Unrestricted(ctx)
			vm, err := m.Client().VirtualMachine.Query().
				Where(virtualmachine.HasPortsWith(port.HasIPAddressesWith(ipaddress.ID(id))),
					virtualmachine.StatusNEQ(virtualmachine.StatusDeleted)).
				Select(virtualmachine.FieldName, virtualmachine.FieldStatus).First(sys)
			switch {
			case ent.IsNotFound(err):
				return next.Mutate(ctx, m)
			case err != nil:
				return nil, fmt.Errorf("read the VM of address %d: %w", id, err)
			}
			addr, err := m.Client().IPAddress.Query().Where(ipaddress.ID(id)).Select(ipaddress.FieldAddress).String(sys)
			if err != nil {
				return nil, fmt.Errorf("read address %d: %w", id, err)
			}
			return nil, &apierr.Error{Code: apierr.CodeConflict, Field: "id", Message: fmt.Sprintf(
				"%s is in use by VM %s (%s); it is released when the VM is deleted, or by an operator with force: true",
				addr, vm.Name, vm.Status)}
		})
	}, ent.OpDeleteOne)
}
