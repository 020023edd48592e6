package provider

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/virtflow/virtflow/clients/apiclient"
)

// ---------------------------------------------------------------- virtflow_kubernetes_cluster

type kubernetesClusterModel struct {
	ID            types.String   `tfsdk:"id"`
	Name          types.String   `tfsdk:"name"`
	TenantID      types.String   `tfsdk:"tenant_id"`
	RegionID      types.String   `tfsdk:"region_id"`
	FlavorID      types.String   `tfsdk:"flavor_id"`
	ImageID       types.String   `tfsdk:"image_id"`
	ServiceMeshID types.String   `tfsdk:"service_mesh_id"`
	Version       types.String   `tfsdk:"version"`
	ControlPlanes types.Int64    `tfsdk:"control_planes"`
	Workers       types.Int64    `tfsdk:"workers"`
	Bastion       types.Bool     `tfsdk:"bastion"`
	Plugins       types.List     `tfsdk:"plugins"`
	Status        types.String   `tfsdk:"status"`
	APIEndpoint   types.String   `tfsdk:"api_endpoint"`
	Kubeconfig    types.String   `tfsdk:"kubeconfig"`
	Timeouts      timeouts.Value `tfsdk:"timeouts"`
}

func (m *kubernetesClusterModel) set(f *apiclient.KubernetesClusterFields) {
	tm, kc := m.Timeouts, m.Kubeconfig
	m.ID, m.Name, m.Version = types.StringValue(f.Id), types.StringValue(f.Name), types.StringValue(f.Version)
	m.TenantID, m.RegionID, m.FlavorID, m.ImageID = types.StringValue(f.Tenant.Id), types.StringValue(f.Region.Id), ref(f.Flavor), ref(f.Image)
	m.ServiceMeshID = ref(f.ServiceMesh)
	m.ControlPlanes, m.Workers, m.Bastion = types.Int64Value(int64(f.ControlPlaneCount)), types.Int64Value(int64(f.WorkerCount)), types.BoolValue(f.BastionEnabled)
	if len(f.Plugins) > 0 || !m.Plugins.IsNull() {
		m.Plugins = stringsList(f.Plugins)
	}
	m.Status, m.APIEndpoint, m.Timeouts, m.Kubeconfig = types.StringValue(string(f.Status)), str(f.ApiEndpoint), tm, kc
	if m.Kubeconfig.IsUnknown() {
		m.Kubeconfig = types.StringNull()
	}
}

func getKubernetesCluster(ctx context.Context, c *apiclient.Client, id string) (*apiclient.KubernetesClusterFields, error) {
	r, err := apiclient.GetKubernetesCluster(ctx, c, id)
	if err != nil || len(r.KubernetesClusters.Edges) == 0 || r.KubernetesClusters.Edges[0].Node == nil {
		return nil, err
	}
	return &r.KubernetesClusters.Edges[0].Node.KubernetesClusterFields, nil
}

// waitKubernetesCluster waits until the cluster is ACTIVE (its control planes reported
// ready and any day-two change settled) and reads its kubeconfig, or fails on ERROR.
func waitKubernetesCluster(ctx context.Context, c *apiclient.Client, m *kubernetesClusterModel, timeout time.Duration) error {
	id := m.ID.ValueString()
	err := waitFor(ctx, timeout, "Kubernetes cluster "+id+" to be ACTIVE", func() (bool, error) {
		f, err := getKubernetesCluster(ctx, c, id)
		if err != nil || f == nil {
			return false, err
		}
		m.set(f)
		switch f.Status {
		case apiclient.KubernetesClusterStatusActive:
			return true, nil
		case apiclient.KubernetesClusterStatusError:
			return false, fmt.Errorf("kubernetes cluster %s went to ERROR: %s", id, deref(f.StatusReason))
		}
		return false, nil
	})
	if err != nil {
		return err
	}
	r, err := apiclient.KubernetesClusterKubeconfig(ctx, c, id)
	if err != nil {
		return err
	}
	if r.Node != nil {
		if k, ok := (*r.Node).(*apiclient.KubernetesClusterKubeconfigNodeKubernetesCluster); ok {
			m.Kubeconfig = str(k.Kubeconfig)
		}
	}
	return nil
}

func kubernetesClusterResource() resource.Resource {
	ctx := context.Background()
	return newResource(crud[kubernetesClusterModel]{
		name: "kubernetes_cluster",
		schema: schema.Schema{Description: "A Kubernetes cluster on VirtFlow's VMs (kubeadm through cloud-init). Create, " +
			"scale (workers) and upgrade (version, one node at a time) wait until it is ACTIVE.", Attributes: map[string]schema.Attribute{
			"id":              idAttribute(),
			"name":            stringAttr("Name (also the prefix of its VMs' names).", required, replace),
			"tenant_id":       stringAttr("The tenant.", required, replace),
			"region_id":       stringAttr("The region.", required, replace),
			"flavor_id":       stringAttr("The flavor of the cluster's VMs.", required, replace),
			"image_id":        stringAttr("The image of the cluster's VMs.", optional, replace),
			"service_mesh_id": stringAttr("A service mesh (Istio or Linkerd) the first control plane installs.", optional, replace),
			"version":         stringAttr("Kubernetes version, e.g. v1.31.2; a change is a rolling upgrade.", required),
			"control_planes":  intAttr("Control planes (default 3).", optional, computed, replace),
			"workers":         intAttr("Workers (default 3); a change scales the cluster.", optional, computed),
			"bastion":         boolAttr("A bastion VM with the tenant's SSH keys.", optional, computed, replace),
			"plugins": schema.ListAttribute{Description: "One CNI (calico, flannel, cilium) and add-ons (metrics-server).",
				ElementType: types.StringType, Optional: true},
			"status":       stringAttr("Lifecycle status.", computed),
			"api_endpoint": stringAttr("https://<VIP>:6443.", computed),
			"kubeconfig":   stringAttr("The admin kubeconfig (tenant admins only).", computed, sensitive),
			"timeouts":     timeouts.Attributes(ctx, timeouts.Opts{Create: true, Update: true, Delete: true}),
		}},
		fields: map[string]string{"controlPlaneCount": "control_planes", "workerCount": "workers", "bastionEnabled": "bastion"},
		id:     func(m *kubernetesClusterModel) string { return m.ID.ValueString() },
		create: func(ctx context.Context, c *apiclient.Client, m *kubernetesClusterModel) error {
			timeout, _ := m.Timeouts.Create(ctx, defaultCreateTimeout)
			r, err := apiclient.CreateKubernetesCluster(ctx, c, apiclient.CreateKubernetesClusterInput{Name: m.Name.ValueString(),
				Version: m.Version.ValueString(), TenantID: m.TenantID.ValueString(), RegionID: m.RegionID.ValueString(),
				FlavorID: strPtr(m.FlavorID), ImageID: strPtr(m.ImageID), ServiceMeshID: strPtr(m.ServiceMeshID),
				ControlPlaneCount: intPtr(m.ControlPlanes), WorkerCount: intPtr(m.Workers), BastionEnabled: boolPtr(m.Bastion),
				Plugins: stringList(ctx, m.Plugins)})
			if err != nil {
				return err
			}
			m.set(&r.CreateKubernetesCluster.KubernetesClusterFields)
			if err := waitKubernetesCluster(ctx, c, m, timeout); err != nil {
				return &partialError{err}
			}
			return nil
		},
		read: func(ctx context.Context, c *apiclient.Client, m *kubernetesClusterModel) (bool, error) {
			f, err := getKubernetesCluster(ctx, c, m.ID.ValueString())
			if err != nil || f == nil {
				return false, err
			}
			m.set(f)
			return true, nil
		},
		update: func(ctx context.Context, c *apiclient.Client, p, s *kubernetesClusterModel) error {
			id := s.ID.ValueString()
			p.ID, p.Kubeconfig = s.ID, s.Kubeconfig
			changed := false
			if !p.Workers.IsNull() && !p.Workers.IsUnknown() && !p.Workers.Equal(s.Workers) {
				if _, err := apiclient.ScaleKubernetesCluster(ctx, c, id, int(p.Workers.ValueInt64())); err != nil {
					return err
				}
				changed = true
			}
			if !p.Version.Equal(s.Version) {
				if _, err := apiclient.UpgradeKubernetesCluster(ctx, c, id, p.Version.ValueString()); err != nil {
					return err
				}
				changed = true
			}
			if !changed {
				f, err := getKubernetesCluster(ctx, c, id)
				if err != nil || f == nil {
					return err
				}
				p.set(f)
				return nil
			}
			timeout, _ := p.Timeouts.Update(ctx, defaultCreateTimeout)
			return waitKubernetesCluster(ctx, c, p, timeout)
		},
		delete: func(ctx context.Context, c *apiclient.Client, s *kubernetesClusterModel) error {
			timeout, _ := s.Timeouts.Delete(ctx, defaultDeleteTimeout)
			id := s.ID.ValueString()
			if _, err := apiclient.DeleteKubernetesCluster(ctx, c, id); err != nil {
				return err
			}
			return waitFor(ctx, timeout, "Kubernetes cluster "+id+" to be deleted", func() (bool, error) {
				f, err := getKubernetesCluster(ctx, c, id)
				return f == nil, err
			})
		},
	})
}
