package kubecluster

import (
	"context"
	"slices"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/assignment"
	"github.com/virtflow/virtflow/ent/kubernetescluster"
	"github.com/virtflow/virtflow/ent/virtualmachine"
)

// mayReadKubeconfig reports whether v may read the kubeconfig of a cluster of tenantID:
// the system, admins and operators of the platform, and the tenant's admins.
func mayReadKubeconfig(v *authz.Viewer, tenantID int) bool {
	return v.IsSystem() || v.Can(ObjKubeconfig, authz.ActRead) ||
		slices.Contains(v.Domains("tenant", ObjKubeconfig, authz.ActRead), tenantID)
}

// MayReadNodeBootstrap reports whether the viewer in ctx may read what VM vmID's config
// drive carries (the VM's userData, its assignments' configDrive). A Kubernetes cluster's
// node carries the cluster's secrets there — the CA key on the first control plane, a join
// token (and the certificate key) on the others — so for those VMs it is the kubeconfig's
// policy (ObjKubeconfig): the tenant's admins, operators and admins; tenant members and
// platform viewers may read the VM but not that. Any other VM's is readable by whoever may
// read the VM. The lookup runs as the system: the caller has read the VM already.
func MayReadNodeBootstrap(ctx context.Context, client *ent.Client, vmID int) (bool, error) {
	v := authz.FromContext(ctx)
	if v.IsSystem() || v.Can(ObjKubeconfig, authz.ActRead) {
		return true, nil
	}
	c, err := client.KubernetesCluster.Query().
		Where(kubernetescluster.HasVirtualMachinesWith(virtualmachine.ID(vmID))).
		WithTenant().Only(system(ctx))
	if ent.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	return mayReadKubeconfig(v, c.Edges.Tenant.ID), nil
}

// MayReadAssignmentDrive reports whether the viewer in ctx may read assignment a's
// configDrive: the agent of its node always (it builds the drive from it), anyone else as
// MayReadNodeBootstrap says for its VM.
func MayReadAssignmentDrive(ctx context.Context, client *ent.Client, a *ent.Assignment) (bool, error) {
	if a.VMID == nil {
		return true, nil
	}
	v := authz.FromContext(ctx)
	if nodes := v.Domains("node", "Assignment", authz.ActRead); len(nodes) > 0 {
		node, err := client.Assignment.Query().Where(assignment.ID(a.ID)).QueryNode().OnlyID(system(ctx))
		if err != nil {
			return false, err
		}
		if slices.Contains(nodes, node) {
			return true, nil
		}
	}
	return MayReadNodeBootstrap(ctx, client, *a.VMID)
}
