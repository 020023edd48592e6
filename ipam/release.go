package ipam

import (
	"context"
	"fmt"

	"github.com/virtflow/virtflow/apierr"
	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/ipaddress"
	"github.com/virtflow/virtflow/ent/loadbalancer"
	"github.com/virtflow/virtflow/internal/dbtx"
	"github.com/virtflow/virtflow/internal/rowlock"
)

// Release deletes address id, which frees it: the next allocation in its network may hand it
// out again (the lowest free address first, so often at once). It returns id.
//
// Decisions:
//   - An address that is a load balancer's VIP is not released: CONFLICT on id, naming the
//     load balancer. Taking the VIP away from a running load balancer cuts its service, so it
//     must be an explicit step first (updateLoadBalancer(input: {clearVip: true}), or deleting
//     the load balancer). The address row is locked while this is checked, so the VIP cannot
//     be set between the check and the delete.
//   - An address bound to a port is released; the binding goes with the row.
//   - An address that does not exist or that the viewer may not see is NOT_FOUND, as for
//     deleteIPAddress; whether the viewer may delete it is ent privacy's decision.
//
// It runs in the caller's transaction when there is one (see dbtx.Run) and in its own otherwise.
func Release(ctx context.Context, client *ent.Client, id int) (int, error) {
	_, err := dbtx.Run(ctx, client, func(c *ent.Client) error {
		ip, err := c.IPAddress.Query().Where(ipaddress.ID(id)).Modify(rowlock.ForUpdate).Only(ctx)
		if err != nil {
			return err // NOT_FOUND through apierr.Classify
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
		return c.IPAddress.DeleteOneID(id).Exec(ctx)
	})
	if err != nil {
		return 0, err
	}
	return id, nil
}
