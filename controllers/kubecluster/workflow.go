package kubecluster

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/hibiken/asynq"

	"github.com/virtflow/virtflow/controllers/provision"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/domain/placement"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/availabilityzone"
	"github.com/virtflow/virtflow/ent/kubernetescluster"
	"github.com/virtflow/virtflow/ent/region"
	"github.com/virtflow/virtflow/ent/schema/fieldtype"
	"github.com/virtflow/virtflow/ent/sshkey"
	"github.com/virtflow/virtflow/ent/tenant"
	"github.com/virtflow/virtflow/ent/virtualmachine"
	"github.com/virtflow/virtflow/store/rowlock"
	"github.com/virtflow/virtflow/store/truncate"
)

// Node states (KubernetesNode.state).
const (
	StatePending       = "PENDING"
	StateBootstrapping = "BOOTSTRAPPING"
	StateReady         = "READY"
	StateFailed        = "FAILED"
	StateRemoving      = "REMOVING"
)

// MaxReason bounds a status reason (the schema's limit).
const MaxReason = 1024

// Label is the label every VM of a cluster carries, with the cluster's name.
const Label = "virtflow.io/kubernetes-cluster"

// TaskOptions are the Asynq options of k8s:step: a step is short (one transaction) and
// idempotent, so it is retried often.
func TaskOptions() []asynq.Option {
	return []asynq.Option{asynq.MaxRetry(25), asynq.Timeout(2 * time.Minute)}
}

// Register serves k8s:step on mux.
func (s *Service) Register(mux *asynq.ServeMux) { mux.HandleFunc(TypeStep, s.handle) }

func (s *Service) handle(ctx context.Context, t *asynq.Task) error {
	var p Payload
	if err := json.Unmarshal(t.Payload(), &p); err != nil || p.Cluster <= 0 {
		return fmt.Errorf("decode %s payload %q: %v: %w", t.Type(), t.Payload(), err, asynq.SkipRetry)
	}
	return s.Step(ctx, p.Cluster)
}

// row is a cluster with its foreign keys.
type row struct {
	*ent.KubernetesCluster
	Tenant, Region, Flavor, Image, Mesh int
	MeshType                            string
}

// load reads and locks cluster id in c's transaction; nil when it is gone.
func load(ctx context.Context, c *ent.Client, id int) (*row, error) {
	k, err := c.KubernetesCluster.Query().Where(kubernetescluster.ID(id)).
		WithTenant(func(q *ent.TenantQuery) { q.Select(tenant.FieldID) }).
		WithRegion(func(q *ent.RegionQuery) { q.Select(region.FieldID, region.FieldName) }).
		WithFlavor().WithImage().WithServiceMesh().
		Modify(rowlock.ForUpdate).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("load kubernetes cluster %d: %w", id, err)
	}
	r := &row{KubernetesCluster: k, Tenant: k.Edges.Tenant.ID, Region: k.Edges.Region.ID}
	if k.Edges.Flavor != nil {
		r.Flavor = k.Edges.Flavor.ID
	}
	if k.Edges.Image != nil {
		r.Image = k.Edges.Image.ID
	}
	if m := k.Edges.ServiceMesh; m != nil {
		r.Mesh, r.MeshType = m.ID, m.Type.String()
	}
	return r, nil
}

// result is what a step leaves behind: the cluster's new state to write, and when to look
// again (0: when something reports).
type result struct {
	nodes  []fieldtype.KubernetesNode
	update func(*ent.KubernetesClusterUpdateOne)
	again  bool          // run the next step at once
	poll   time.Duration // look again after this long
	gone   bool          // the cluster was deleted
}

// Step runs the next step of cluster id's workflow in one transaction holding the cluster's
// row lock, records its progress on the row, and queues the next step. Every step is
// idempotent: it looks at what exists (VMs by their deterministic names, the VIP, the
// PKI) before it creates anything, so a worker killed at any point is resumed by the task's
// retry, or by the next worker, without creating anything twice.
func (s *Service) Step(ctx context.Context, id int) error {
	sys := system(ctx)
	var failure error
	err := s.inTx(sys, func(ctx context.Context, c *ent.Client) error {
		r, err := load(ctx, c, id)
		if err != nil || r == nil {
			return err
		}
		if s.fault != nil {
			if err := s.fault(r.Phase.String()); err != nil {
				return err
			}
		}
		res, err := s.step(ctx, c, r)
		if err != nil {
			return err
		}
		if res.gone {
			return nil
		}
		nodes := res.nodes
		if nodes == nil {
			nodes = r.Nodes
		}
		u := c.KubernetesCluster.UpdateOneID(id).SetNodes(nodes)
		if res.update != nil {
			res.update(u)
		}
		status, reason := aggregate(r, nodes)
		u.SetStatus(status).SetStatusReason(truncate.String(reason, MaxReason))
		updated, err := u.Save(ctx)
		if err != nil {
			return err
		}
		if res.again {
			return enqueue(ctx, c, updated, 0)
		}
		if res.poll > 0 {
			return enqueue(ctx, c, updated, res.poll)
		}
		return nil
	})
	var ae *apierr.Error
	if errors.As(err, &ae) && (ae.Code == apierr.CodeQuotaExceeded || ae.Code == apierr.CodeNoCapacity || ae.Code == apierr.CodeValidation) {
		failure = err
	} else if err != nil {
		return fmt.Errorf("kubernetes cluster %d: %w", id, err)
	}
	if failure == nil {
		return nil
	}
	// Placement refused the cluster: nothing of the step was written (its transaction rolled
	// back); say why on the cluster, which stays where it was until it is changed or deleted.
	s.log.Warn("kubernetes cluster step refused", "cluster", id, "err", failure)
	_, uerr := s.client.KubernetesCluster.Update().Where(kubernetescluster.ID(id)).
		SetStatus(kubernetescluster.StatusError).SetStatusReason(truncate.String(failure.Error(), MaxReason)).Save(sys)
	return uerr
}

// inTx runs fn in a transaction of its own, carried by ctx so that placement joins it.
func (s *Service) inTx(ctx context.Context, fn func(context.Context, *ent.Client) error) error {
	tx, err := s.client.Tx(ctx)
	if err != nil {
		return err
	}
	ctx = ent.NewTxContext(ctx, tx)
	if err := fn(ctx, tx.Client()); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// step dispatches on the cluster's phase.
func (s *Service) step(ctx context.Context, c *ent.Client, r *row) (result, error) {
	switch r.Phase {
	case kubernetescluster.PhasePending:
		return s.place(ctx, c, r)
	case kubernetescluster.PhasePlacing:
		return s.vip(ctx, c, r)
	case kubernetescluster.PhasePki:
		return s.pki(ctx, c, r)
	case kubernetescluster.PhaseBootstrapping:
		return s.bootstrap(ctx, c, r)
	case kubernetescluster.PhaseReady:
		return s.converge(ctx, c, r)
	case kubernetescluster.PhaseDeleting:
		return s.remove(ctx, c, r)
	}
	return result{}, fmt.Errorf("unknown phase %s", r.Phase)
}

// nodeName is the deterministic name of a node and its VM.
func nodeName(cluster, role string, index int) string {
	switch role {
	case RoleControlPlane:
		return fmt.Sprintf("%s-cp-%d", cluster, index)
	case RoleWorker:
		return fmt.Sprintf("%s-w-%d", cluster, index)
	}
	return cluster + "-bastion"
}

// vmType is the VM type of a role.
func vmType(role string) virtualmachine.Type {
	switch role {
	case RoleControlPlane:
		return virtualmachine.TypeControlPlane
	case RoleWorker:
		return virtualmachine.TypeWorker
	}
	return virtualmachine.TypeManagement
}

// place is the first step: every node of the cluster recorded and its VM placed and
// created, control planes as one group with hard anti-affinity across racks and power
// zones, workers spread over the region's availability zones (SPREAD) or as one group
// (PACK), and the bastion. All in this one transaction: the tenant's quota and the nodes'
// capacity are checked by the database for the whole cluster, and a cluster that does not
// fit in full creates nothing. VMs that exist already (found by name) are kept.
func (s *Service) place(ctx context.Context, c *ent.Client, r *row) (result, error) {
	if r.Flavor == 0 {
		return result{}, apierr.Validation("flavorID", "cluster %s has no flavor for its VMs", r.Name)
	}
	now := s.now()
	var nodes []fieldtype.KubernetesNode
	for i := range r.ControlPlaneCount {
		nodes = append(nodes, fieldtype.KubernetesNode{Name: nodeName(r.Name, RoleControlPlane, i), Role: RoleControlPlane, Index: i, Version: r.Version, State: StatePending, UpdatedAt: now})
	}
	for i := range r.WorkerCount {
		nodes = append(nodes, fieldtype.KubernetesNode{Name: nodeName(r.Name, RoleWorker, i), Role: RoleWorker, Index: i, Version: r.Version, State: StatePending, UpdatedAt: now})
	}
	if r.BastionEnabled {
		nodes = append(nodes, fieldtype.KubernetesNode{Name: nodeName(r.Name, RoleBastion, 0), Role: RoleBastion, Version: r.Version, State: StatePending, UpdatedAt: now})
	}
	if err := s.createVMs(ctx, c, r, nodes, nil, false); err != nil {
		return result{}, err
	}
	cps, ws := r.ControlPlaneCount, r.WorkerCount
	return result{nodes: nodes, again: true, update: func(u *ent.KubernetesClusterUpdateOne) {
		u.SetPhase(kubernetescluster.PhasePlacing).SetNextControlPlaneIndex(cps).SetNextWorkerIndex(ws)
	}}, nil
}

// existing returns the cluster's VMs by name.
func existing(ctx context.Context, c *ent.Client, r *row) (map[string]*ent.VirtualMachine, error) {
	vms, err := c.VirtualMachine.Query().Where(virtualmachine.HasKubernetesClusterWith(kubernetescluster.ID(r.ID))).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("VMs of cluster %s: %w", r.Name, err)
	}
	out := make(map[string]*ent.VirtualMachine, len(vms))
	for _, vm := range vms {
		out[vm.Name] = vm
	}
	return out, nil
}

// createVMs creates the VMs of the nodes that have none yet (check before create: a VM of
// the node's name is adopted), group by role, and writes their ids into nodes. With render,
// each VM gets its bootstrap user-data and its vm:create task at once (day two); otherwise
// the bootstrap step does it once the PKI exists. keepOff are VMs of the role group that
// are about to go (an upgrade's old node): they do not count for zone rules.
func (s *Service) createVMs(ctx context.Context, c *ent.Client, r *row, nodes []fieldtype.KubernetesNode, keepOff []int, render bool) error {
	have, err := existing(ctx, c, r)
	if err != nil {
		return err
	}
	var keys []int
	if r.BastionEnabled || render {
		if keys, err = c.SSHKey.Query().Where(sshkey.HasTenantWith(tenant.ID(r.Tenant))).IDs(ctx); err != nil {
			return err
		}
	}
	byRole := map[string][]int{}
	for i := range nodes {
		n := &nodes[i]
		if vm, ok := have[n.Name]; ok {
			n.VMID = vm.ID
			if n.State == StatePending && vm.UserData != "" {
				n.State = StateBootstrapping
			}
			continue
		}
		if n.VMID == 0 && n.State != StateRemoving {
			byRole[n.Role] = append(byRole[n.Role], i)
		}
	}
	// Nodes of the role that run already (zone rules count them).
	groupNodes := func(role string) ([]int, error) {
		var ids []int
		for _, n := range nodes {
			if n.Role != role || n.VMID == 0 || slices.Contains(keepOff, n.VMID) || n.State == StateRemoving {
				continue
			}
			vm := have[n.Name]
			if vm == nil {
				continue
			}
			node, err := vm.QueryNode().OnlyID(ctx)
			if err == nil {
				ids = append(ids, node)
			}
		}
		return ids, nil
	}
	var zones []string
	if r.SchedulingMode == kubernetescluster.SchedulingModeSpread && len(byRole[RoleWorker]) > 0 {
		if zones, err = c.AvailabilityZone.Query().Where(availabilityzone.HasRegionWith(region.ID(r.Region))).
			Order(ent.Asc(availabilityzone.FieldName)).Select(availabilityzone.FieldName).Strings(ctx); err != nil {
			return err
		}
	}
	type group struct {
		role, zone string
		idx        []int
	}
	var groups []group
	if idx := byRole[RoleControlPlane]; len(idx) > 0 {
		groups = append(groups, group{role: RoleControlPlane, idx: idx})
	}
	if idx := byRole[RoleWorker]; len(idx) > 0 {
		if len(zones) == 0 {
			groups = append(groups, group{role: RoleWorker, idx: idx})
		} else {
			byZone := map[string][]int{}
			for _, i := range idx {
				z := zones[nodes[i].Index%len(zones)]
				byZone[z] = append(byZone[z], i)
			}
			for _, z := range zones {
				if len(byZone[z]) > 0 {
					groups = append(groups, group{role: RoleWorker, zone: z, idx: byZone[z]})
				}
			}
		}
	}
	if idx := byRole[RoleBastion]; len(idx) > 0 {
		groups = append(groups, group{role: RoleBastion, idx: idx})
	}
	var toProvision []int
	for _, g := range groups {
		pg := placement.Group{TenantID: r.Tenant, RegionID: r.Region, FlavorID: r.Flavor, ImageID: r.Image,
			AvailabilityZone: g.zone, KubernetesClusterID: r.ID}
		if g.role == RoleControlPlane {
			// Control planes: one per rack and per power zone, whatever the scheduling mode
			// (a quorum that one rack or one power feed can take down is no quorum).
			pg.Policy.Zones = []fieldtype.ZoneRule{{Kind: fieldtype.ZoneRack, Mode: fieldtype.ZoneAntiAffinity}, {Kind: fieldtype.ZonePower, Mode: fieldtype.ZoneAntiAffinity}}
			if pg.GroupNodeIDs, err = groupNodes(RoleControlPlane); err != nil {
				return err
			}
		}
		if g.role == RoleBastion {
			pg.SSHKeyIDs = keys
		}
		for _, i := range g.idx {
			n := nodes[i]
			vm := placement.GroupVM{Name: n.Name, Type: vmType(n.Role), Labels: fieldtype.Labels{Label: r.Name},
				Description: fmt.Sprintf("%s %d of Kubernetes cluster %s", strings.ToLower(strings.ReplaceAll(n.Role, "_", " ")), n.Index, r.Name)}
			if render {
				if vm.UserData, err = s.userData(ctx, c, r, n, keys); err != nil {
					return err
				}
			}
			pg.VMs = append(pg.VMs, vm)
		}
		vms, err := s.placer.CreateGroup(ctx, c, pg)
		if err != nil {
			return err
		}
		for k, vm := range vms {
			i := g.idx[k]
			nodes[i].VMID = vm.ID
			if render {
				nodes[i].State = StateBootstrapping
				toProvision = append(toProvision, vm.ID)
			}
		}
	}
	for _, id := range toProvision {
		if err := provision.EnqueueCreate(ctx, c, id); err != nil {
			return err
		}
	}
	return nil
}

// vip is the second step: the API's VIP from IPAM, on a load balancer named
// <cluster>-api, linked to the cluster by id. An existing one is kept.
func (s *Service) vip(ctx context.Context, c *ent.Client, r *row) (result, error) {
	next := func(u *ent.KubernetesClusterUpdateOne) { u.SetPhase(kubernetescluster.PhasePki) }
	if r.APILoadBalancerID != nil && r.APIVip != "" {
		return result{again: true, update: next}, nil
	}
	lb, vip, err := s.placer.CreateVIPLoadBalancer(ctx, c, r.Name+"-api", "API endpoint of Kubernetes cluster "+r.Name, "regionID", r.Tenant, r.Region)
	if err != nil {
		return result{}, err
	}
	if err := c.LoadBalancer.UpdateOneID(lb.ID).SetListeners([]fieldtype.LBListener{APIListener}).Exec(system(ctx)); err != nil {
		return result{}, fmt.Errorf("API listener: %w", err)
	}
	addr := vip.Address
	if p, err := netip.ParsePrefix(addr); err == nil {
		addr = p.Addr().String()
	}
	return result{again: true, update: func(u *ent.KubernetesClusterUpdateOne) {
		next(u)
		u.SetAPILoadBalancerID(lb.ID).SetAPIVip(addr).SetAPIEndpoint("https://" + netip.AddrPortFrom(netip.MustParseAddr(addr), 6443).String())
	}}, nil
}

// pki is the third step: the cluster's CA, API server and admin certificates and its first
// join token, sealed. An existing PKI is kept.
func (s *Service) pki(ctx context.Context, c *ent.Client, r *row) (result, error) {
	next := func(u *ent.KubernetesClusterUpdateOne) { u.SetPhase(kubernetescluster.PhaseBootstrapping) }
	if r.PkiSealed != "" {
		return result{again: true, update: next}, nil
	}
	vip, err := netip.ParseAddr(r.APIVip)
	if err != nil {
		return result{}, fmt.Errorf("VIP of cluster %s: %w", r.Name, err)
	}
	svc, _ := netip.ParsePrefix(r.ServiceCidr)
	var names []string
	for _, n := range r.Nodes {
		if n.Role == RoleControlPlane {
			names = append(names, n.Name)
		}
	}
	p, err := NewPKI(PKIRequest{Cluster: r.Name, VIP: vip, ServiceCIDR: svc, Names: names, Now: s.now()})
	if err != nil {
		return result{}, err
	}
	sealed, err := p.Seal(s.keys)
	if err != nil {
		return result{}, err
	}
	tok, err := NewJoinToken(s.now())
	if err != nil {
		return result{}, err
	}
	st, err := sealToken(s.keys, tok)
	if err != nil {
		return result{}, err
	}
	return result{again: true, update: func(u *ent.KubernetesClusterUpdateOne) {
		next(u)
		u.SetPkiSealed(sealed).SetCaCertificate(p.CACert).SetJoinTokenID(tok.ID).SetJoinTokenSealed(st).SetJoinTokenExpiresAt(tok.Expires)
	}}, nil
}

// bootstrap is the fourth step: every node's user-data rendered onto its VM and its
// vm:create task queued. VMs that have their user-data already are skipped.
func (s *Service) bootstrap(ctx context.Context, c *ent.Client, r *row) (result, error) {
	have, err := existing(ctx, c, r)
	if err != nil {
		return result{}, err
	}
	keys, err := c.SSHKey.Query().Where(sshkey.HasTenantWith(tenant.ID(r.Tenant))).IDs(ctx)
	if err != nil {
		return result{}, err
	}
	nodes := slices.Clone(r.Nodes)
	for i := range nodes {
		n := &nodes[i]
		vm := have[n.Name]
		if vm == nil {
			return result{}, fmt.Errorf("node %s has no VM", n.Name)
		}
		if vm.UserData == "" {
			ud, err := s.userData(ctx, c, r, *n, keys)
			if err != nil {
				return result{}, err
			}
			if err := c.VirtualMachine.UpdateOne(vm).SetUserData(ud).Exec(ctx); err != nil {
				return result{}, fmt.Errorf("user-data of %s: %w", n.Name, err)
			}
		}
		if err := provision.EnqueueCreate(ctx, c, vm.ID); err != nil {
			return result{}, err
		}
		if n.State == StatePending {
			n.State, n.UpdatedAt = StateBootstrapping, s.now()
		}
	}
	return result{nodes: nodes, update: func(u *ent.KubernetesClusterUpdateOne) { u.SetPhase(kubernetescluster.PhaseReady) }}, nil
}

// userData renders node n's #cloud-config, replacing the cluster's join token first when
// it is due (the new one is sealed onto the row in c's transaction).
func (s *Service) userData(ctx context.Context, c *ent.Client, r *row, n fieldtype.KubernetesNode, keyIDs []int) (string, error) {
	p, err := OpenPKI(s.keys, r.PkiSealed)
	if err != nil {
		return "", err
	}
	exp := time.Time{}
	if r.JoinTokenExpiresAt != nil {
		exp = *r.JoinTokenExpiresAt
	}
	tok := JoinToken{Expires: exp}
	if r.JoinTokenSealed != "" {
		if tok, err = openToken(s.keys, r.JoinTokenSealed, exp); err != nil {
			return "", err
		}
	}
	if tok.Due(s.now()) {
		if tok, err = NewJoinToken(s.now()); err != nil {
			return "", err
		}
		sealed, err := sealToken(s.keys, tok)
		if err != nil {
			return "", err
		}
		if err := c.KubernetesCluster.UpdateOneID(r.ID).SetJoinTokenID(tok.ID).SetJoinTokenSealed(sealed).SetJoinTokenExpiresAt(tok.Expires).Exec(ctx); err != nil {
			return "", err
		}
		r.JoinTokenSealed, r.JoinTokenExpiresAt = sealed, &tok.Expires
	}
	hash, err := p.CAHash()
	if err != nil {
		return "", err
	}
	cni, addons, err := Plugins(r.Plugins)
	if err != nil {
		return "", err
	}
	var keys []string
	if len(keyIDs) > 0 {
		if keys, err = c.SSHKey.Query().Where(sshkey.IDIn(keyIDs...)).Order(ent.Asc(sshkey.FieldID)).Select(sshkey.FieldPublicKey).Strings(ctx); err != nil {
			return "", err
		}
	}
	var sans []string
	for _, o := range r.Nodes {
		if o.Role == RoleControlPlane {
			sans = append(sans, o.Name)
		}
	}
	node := Node{Cluster: r.Name, Name: n.Name, Role: n.Role, First: n.Role == RoleControlPlane && n.Index == 0,
		Version: n.Version, PodCIDR: r.PodCidr, ServiceCIDR: r.ServiceCidr, CNI: cni, Addons: addons,
		Endpoint: netip.AddrPortFrom(netip.MustParseAddr(r.APIVip), 6443).String(), Token: tok.String(),
		CAHash: hash, ExtraSANs: sans, SSHKeys: keys}
	if n.Role == RoleControlPlane {
		node.CertKey = p.CertificateKey
	}
	if node.First {
		node.CACert, node.CAKey, node.Mesh = p.CACert, p.CAKey, r.MeshType
	}
	return UserData(node)
}

// byIndex orders nodes by role (control planes, workers, bastion) and index.
func byIndex(a, b fieldtype.KubernetesNode) int {
	rank := map[string]int{RoleControlPlane: 0, RoleWorker: 1, RoleBastion: 2}
	return cmp.Or(cmp.Compare(rank[a.Role], rank[b.Role]), cmp.Compare(a.Index, b.Index))
}
