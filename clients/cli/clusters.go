package cli

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/virtflow/virtflow/clients/apiclient"
)

// clusterColumns are the table columns of a Kubernetes cluster.
var clusterColumns = []string{"id", "name", "version", "status", "controlPlaneCount", "workerCount", "apiEndpoint", "statusReason"}

// runClusters creates, lists and changes Kubernetes clusters and prints their kubeconfig:
//
//	clusters create --name NAME --tenant ID --region ID --flavor ID [--image ID] [--version V]
//	         [--control-planes N] [--workers N] [--bastion] [--plugins calico,metrics-server] [--mesh ID]
//	clusters list [--first N]
//	clusters kubeconfig CLUSTER_ID   (tenant admins; the YAML on stdout)
//	clusters scale CLUSTER_ID --workers N
//	clusters upgrade CLUSTER_ID --version V
func runClusters(ctx context.Context, a *app, args []string) error {
	const usage = "clusters create --name NAME --tenant ID --region ID --flavor ID [--image ID] [--version V] [--control-planes N] [--workers N] [--bastion] [--plugins P,..] [--mesh ID] | clusters list | clusters kubeconfig ID | clusters scale ID --workers N | clusters upgrade ID --version V"
	if len(args) == 0 {
		return usagef(usage)
	}
	verb, args := args[0], args[1:]
	fs := flag.NewFlagSet("clusters "+verb, flag.ContinueOnError)
	name := fs.String("name", "", "cluster name (create)")
	tenant := fs.String("tenant", "", "tenant ID (create)")
	region := fs.String("region", "", "region ID (create)")
	flavor := fs.String("flavor", "", "flavor ID of the VMs (create)")
	image := fs.String("image", "", "image ID of the VMs (create)")
	version := fs.String("version", "", "Kubernetes version, e.g. v1.31.2 (create, upgrade)")
	cps := fs.Int("control-planes", 3, "control planes (create)")
	workers := fs.Int("workers", -1, "workers (create, scale)")
	bastion := fs.Bool("bastion", false, "a bastion VM with the tenant's SSH keys (create)")
	plugins := fs.String("plugins", "", "comma-separated: one CNI (calico, flannel, cilium) and add-ons (metrics-server)")
	mesh := fs.String("mesh", "", "service mesh ID (create)")
	first := fs.Int("first", 100, "how many (list)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	c, err := a.api()
	if err != nil {
		return err
	}
	opt := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	switch {
	case verb == "create" && len(pos) == 0 && *name != "" && *tenant != "" && *region != "" && *flavor != "":
		v := *version
		if v == "" {
			v = "v1.31.2"
		}
		var in apiclient.CreateKubernetesClusterInput
		if in.TenantID, err = a.ref(ctx, c, "tenant", *tenant); err != nil {
			return err
		}
		if in.RegionID, err = a.ref(ctx, c, "region", *region); err != nil {
			return err
		}
		if in.FlavorID, err = a.optRef(ctx, c, "flavor", opt(*flavor)); err != nil {
			return err
		}
		if in.ImageID, err = a.optRef(ctx, c, "image", opt(*image)); err != nil {
			return err
		}
		in.Name, in.Version, in.ControlPlaneCount, in.BastionEnabled, in.ServiceMeshID = *name, v, cps, bastion, opt(*mesh)
		if *workers >= 0 {
			in.WorkerCount = workers
		}
		if *plugins != "" {
			in.Plugins = strings.Split(*plugins, ",")
		}
		r, err := apiclient.CreateKubernetesCluster(ctx, c, in)
		if err != nil {
			return err
		}
		return a.show(&r.CreateKubernetesCluster.KubernetesClusterFields, clusterColumns)
	case verb == "list" && len(pos) == 0:
		r, err := apiclient.ListKubernetesClusters(ctx, c, first)
		if err != nil {
			return err
		}
		rows := []*apiclient.KubernetesClusterFields{}
		for _, e := range r.KubernetesClusters.Edges {
			rows = append(rows, &e.Node.KubernetesClusterFields)
		}
		return a.show(rows, clusterColumns)
	case verb == "kubeconfig" && len(pos) == 1:
		r, err := apiclient.KubernetesClusterKubeconfig(ctx, c, pos[0])
		if err != nil {
			return err
		}
		if r.Node == nil {
			return fmt.Errorf("cluster %s not found", pos[0])
		}
		k, ok := (*r.Node).(*apiclient.KubernetesClusterKubeconfigNodeKubernetesCluster)
		if !ok {
			return fmt.Errorf("%s is not a Kubernetes cluster", pos[0])
		}
		if k.Kubeconfig == nil {
			return fmt.Errorf("cluster %s has no kubeconfig yet: its certificates are issued while it is created", pos[0])
		}
		_, err = fmt.Fprint(a.io.Stdout, *k.Kubeconfig)
		return err
	case verb == "scale" && len(pos) == 1 && *workers >= 0:
		r, err := apiclient.ScaleKubernetesCluster(ctx, c, pos[0], *workers)
		if err != nil {
			return err
		}
		return a.show(&r.ScaleKubernetesCluster.KubernetesClusterFields, clusterColumns)
	case verb == "upgrade" && len(pos) == 1 && *version != "":
		r, err := apiclient.UpgradeKubernetesCluster(ctx, c, pos[0], *version)
		if err != nil {
			return err
		}
		return a.show(&r.UpgradeKubernetesCluster.KubernetesClusterFields, clusterColumns)
	}
	return usagef(usage)
}
