package metering

import (
	"context"
	"slices"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/apierr"
)

// Authorize says whether the viewer in ctx may read the usage and invoices of the tenant:
// operators (and admins, viewers) every tenant's, a tenant's admins their own tenant's,
// nobody else — UNAUTHENTICATED without a viewer, FORBIDDEN otherwise, so that a tenant
// learns nothing of another tenant's usage. The ledger's and the invoices' rows are also
// filtered by the authorization policy, whatever this says.
func Authorize(ctx context.Context, tenantID int) error {
	v := authz.FromContext(ctx)
	switch {
	case v == nil:
		return apierr.Unauthenticated("sign in: send Authorization: Bearer <token>")
	case v.Can("Invoice", authz.ActRead):
		return nil
	case slices.Contains(v.Domains("tenant", "Invoice", authz.ActRead), tenantID):
		return nil
	}
	return apierr.Forbidden("only the tenant's admins and operators may read its usage and invoices")
}
