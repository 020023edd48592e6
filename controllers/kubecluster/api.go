package kubecluster

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"strconv"
	"time"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/controllers/outbox"
	"github.com/virtflow/virtflow/controllers/provision"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/domain/audit"
	"github.com/virtflow/virtflow/domain/identity"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/datacenter"
	"github.com/virtflow/virtflow/ent/kubernetescluster"
	"github.com/virtflow/virtflow/ent/network"
	"github.com/virtflow/virtflow/ent/region"
	"github.com/virtflow/virtflow/ent/servicemesh"
)

// ObjKubeconfig is the authz object of a cluster's admin kubeconfig: tenant admins (for
// their tenant), operators and admins may read it.
const ObjKubeconfig = "Kubeconfig"

// Create records the cluster of input as the viewer in ctx (who must be allowed to) and
// queues its workflow, in client's transaction. It refuses, with VALIDATION naming the
// field, a cluster without a flavor, unknown or two network plugins, bad or overlapping
// CIDRs, and a service mesh that is neither Istio nor Linkerd.
func (s *Service) Create(ctx context.Context, client *ent.Client, input ent.CreateKubernetesClusterInput) (*ent.KubernetesCluster, error) {
	if _, _, err := KubeadmVersion(input.Version); err != nil {
		return nil, apierr.Validation("version", "%v", err)
	}
	if _, _, err := Plugins(input.Plugins); err != nil {
		return nil, apierr.Validation("plugins", "%v", err)
	}
	if input.FlavorID == nil {
		return nil, apierr.Validation("flavorID", "a cluster needs the flavor of its VMs")
	}
	pod, svc := "10.244.0.0/16", "10.96.0.0/12"
	if input.PodCidr != nil {
		pod = *input.PodCidr
	}
	if input.ServiceCidr != nil {
		svc = *input.ServiceCidr
	}
	pp, err := netip.ParsePrefix(pod)
	if err != nil || pp.Bits() > 24 {
		return nil, apierr.Validation("podCidr", "want a CIDR of at least a /24, e.g. 10.244.0.0/16")
	}
	sp, err := netip.ParsePrefix(svc)
	if err != nil || sp.Bits() > 28 {
		return nil, apierr.Validation("serviceCidr", "want a CIDR of at least a /28, e.g. 10.96.0.0/12")
	}
	if pp.Overlaps(sp) {
		return nil, apierr.Validation("serviceCidr", "overlaps the pod network %s", pod)
	}
	if input.ServiceMeshID != nil {
		m, err := client.ServiceMesh.Query().Where(servicemesh.ID(*input.ServiceMeshID)).Only(ctx)
		if err != nil {
			return nil, apierr.Validation("serviceMeshID", "service mesh %d not found", *input.ServiceMeshID)
		}
		if _, ok := Meshes[m.Type.String()]; !ok {
			return nil, apierr.Validation("serviceMeshID", "service mesh %s is %s: clusters install ISTIO or LINKERD", m.Name, m.Type)
		}
	}
	if ok, err := client.Network.Query().Where(network.PurposeEQ(network.PurposeService),
		network.HasDatacenterWith(datacenter.HasRegionWith(region.ID(input.RegionID)))).Exist(authz.Unrestricted(ctx)); err != nil {
		return nil, err
	} else if !ok {
		return nil, apierr.Validation("regionID", "the region has no SERVICE network for the cluster's API VIP: an operator creates one first")
	}
	c, err := client.KubernetesCluster.Create().SetInput(input).SetStatusReason("queued: waiting for a worker to place the cluster").Save(ctx)
	if err != nil {
		return nil, err
	}
	if input.ServiceMeshID != nil {
		if c, err = client.KubernetesCluster.UpdateOne(c).SetServiceMeshStatus(kubernetescluster.ServiceMeshStatusInstalling).Save(system(ctx)); err != nil {
			return nil, err
		}
	}
	return c, enqueue(ctx, client, c, 0)
}

// Scale sets the cluster's workers; the workflow adds or removes them (highest index first).
func (s *Service) Scale(ctx context.Context, client *ent.Client, id, workers int) (*ent.KubernetesCluster, error) {
	if workers < 0 || workers > 1000 {
		return nil, apierr.Validation("workers", "between 0 and 1000")
	}
	return s.change(ctx, client, id, func(u *ent.KubernetesClusterUpdateOne) { u.SetWorkerCount(workers) })
}

// Upgrade sets the cluster's version; the workflow replaces its nodes one at a time.
func (s *Service) Upgrade(ctx context.Context, client *ent.Client, id int, version string) (*ent.KubernetesCluster, error) {
	if _, _, err := KubeadmVersion(version); err != nil {
		return nil, apierr.Validation("version", "%v", err)
	}
	return s.change(ctx, client, id, func(u *ent.KubernetesClusterUpdateOne) { u.SetVersion(version) })
}

// Updated queues the workflow of a cluster updateKubernetesCluster changed (its worker
// count or version may have changed).
func (s *Service) Updated(ctx context.Context, client *ent.Client, c *ent.KubernetesCluster) error {
	return enqueue(ctx, client, c, 0)
}

// change applies set to cluster id as the viewer (NOT_FOUND for a cluster the viewer does not
// see; a DELETING cluster is a CONFLICT) and queues the workflow.
func (s *Service) change(ctx context.Context, client *ent.Client, id int, set func(*ent.KubernetesClusterUpdateOne)) (*ent.KubernetesCluster, error) {
	c, err := client.KubernetesCluster.Query().Where(kubernetescluster.ID(id)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, apierr.NotFound("kubernetes cluster %d not found", id)
	}
	if err != nil {
		return nil, err
	}
	if c.Phase == kubernetescluster.PhaseDeleting {
		return nil, apierr.Conflict("kubernetes cluster %s is being deleted", c.Name)
	}
	u := client.KubernetesCluster.UpdateOneID(id)
	set(u)
	if c, err = u.Save(ctx); err != nil {
		return nil, err
	}
	return c, enqueue(ctx, client, c, 0)
}

// Delete starts deleting cluster id as the viewer: DELETING at once; the workflow removes
// its VMs, then its VIP and load balancer, then its PKI and the record itself.
func (s *Service) Delete(ctx context.Context, client *ent.Client, id int) error {
	c, err := client.KubernetesCluster.Query().Where(kubernetescluster.ID(id)).Only(ctx)
	if ent.IsNotFound(err) {
		return apierr.NotFound("kubernetes cluster %d not found", id)
	}
	if err != nil {
		return err
	}
	if c.Phase == kubernetescluster.PhasePending {
		// Nothing was placed yet: nothing to take down.
		return client.KubernetesCluster.SafeDelete(ctx, id)
	}
	c, err = client.KubernetesCluster.UpdateOneID(id).SetPhase(kubernetescluster.PhaseDeleting).
		SetStatus(kubernetescluster.StatusDeleting).SetStatusReason("deleting: removing the nodes").Save(ctx)
	if err != nil {
		return err
	}
	return enqueue(ctx, client, c, 0)
}

// Kubeconfig returns cluster id's admin kubeconfig for the viewer in ctx and audits the
// read: NOT_FOUND when the viewer cannot see the cluster, FORBIDDEN unless the viewer is an
// admin or operator of the platform or a tenant admin of the cluster's tenant, nil while
// the cluster has no PKI yet.
func (s *Service) Kubeconfig(ctx context.Context, client *ent.Client, id int) (*string, error) {
	c, err := client.KubernetesCluster.Query().Where(kubernetescluster.ID(id)).WithTenant().Only(ctx)
	if ent.IsNotFound(err) {
		return nil, apierr.NotFound("kubernetes cluster %d not found", id)
	}
	if err != nil {
		return nil, err
	}
	v := authz.FromContext(ctx)
	tenantID := c.Edges.Tenant.ID
	if !mayReadKubeconfig(v, tenantID) {
		return nil, apierr.Forbidden("only the tenant's admins may read the kubeconfig of cluster %s", c.Name)
	}
	if c.PkiSealed == "" || c.APIEndpoint == "" {
		return nil, nil
	}
	p, err := OpenPKI(s.keys, c.PkiSealed)
	if err != nil {
		return nil, err
	}
	kc, err := Kubeconfig(c.Name, c.APIEndpoint, p)
	if err != nil {
		return nil, err
	}
	if err := audit.Write(ctx, client, audit.Entry{Action: "readKubeconfig", Subject: c, TenantID: tenantID,
		SourceIP: identity.SourceIP(ctx)}); err != nil {
		return nil, fmt.Errorf("audit the kubeconfig read: %w", err)
	}
	return &kc, nil
}

// Payload is the payload of k8s:step.
type Payload struct {
	Cluster int `json:"cluster"`
}

// TypeStep runs one step of a cluster's workflow (Handlers.step).
const TypeStep = "k8s:step"

// enqueue records k8s:step for c in client's transaction, on its region's queue, once per
// state of the row (the dedup key names its updated_at), after delay.
func enqueue(ctx context.Context, client *ent.Client, c *ent.KubernetesCluster, delay time.Duration) error {
	reg, err := client.Region.Query().Where(region.HasKubernetesClustersWith(kubernetescluster.ID(c.ID))).Only(system(ctx))
	if err != nil {
		return fmt.Errorf("region of kubernetes cluster %d: %w", c.ID, err)
	}
	payload, _ := json.Marshal(Payload{Cluster: c.ID})
	key := TypeStep + ":" + strconv.Itoa(c.ID) + ":" + strconv.FormatInt(c.UpdatedAt.UnixNano(), 10)
	if delay > 0 {
		key += ":poll"
	}
	return outbox.Enqueue(ctx, client, outbox.Task{Kind: TypeStep, Queue: provision.Queue(reg.Name), Payload: payload,
		DedupKey: key, Delay: delay})
}
