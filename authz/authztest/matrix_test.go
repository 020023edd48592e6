package authztest

import (
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/identity"
	"github.com/virtflow/virtflow/ent"
	entalert "github.com/virtflow/virtflow/ent/alert"
	"github.com/virtflow/virtflow/ent/apitoken"
	"github.com/virtflow/virtflow/ent/datacenter"
	"github.com/virtflow/virtflow/ent/link"
	"github.com/virtflow/virtflow/ent/network"
	"github.com/virtflow/virtflow/ent/port"
	"github.com/virtflow/virtflow/ent/rolebinding"
	"github.com/virtflow/virtflow/ent/virtualmachine"
	"github.com/virtflow/virtflow/ent/volume"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
)

// entity is how the tests make, find, change and create records of one GraphQL type.
type entity struct {
	// make stores a fresh record owned the standard way (tenant A, node N1, maintained by M1,
	// as the type allows) through ent as the system, and says whom it belongs to.
	make func(w *world) (int, owner)
	// matrix, when set, is the record the matrix reads and updates instead of a fresh one.
	matrix func(w *world) (int, owner)
	// parentType and parentField name an edge into this type (a connection, or a unique
	// edge), and parent returns a record of parentType whose edge holds id, and its owner.
	parentType, parentField string
	parent                  func(w *world, id int) (int, owner)
	// update is a harmless UpdateXInput.
	update map[string]any
	// create returns a valid CreateXInput and whom the new record would belong to.
	create func(w *world) (map[string]any, owner)
}

// entities covers every type implementing Node; TestRoleMatrix fails for a type missing here.
var entities = map[string]entity{
	"APIToken": {
		make: func(w *world) (int, owner) {
			u := w.newUser("token-owner", w.tenantA)
			_, hash, prefix := identity.NewToken(apitoken.KindApi)
			id := w.c.APIToken.Create().SetName(uniq("token")).SetTokenHash(hash).SetPrefix(prefix).
				SetOwnerID(u).SetTenantID(w.tenantA).SaveX(w.ctx).ID
			return id, owner{tenant: w.tenantA}
		},
		parentType: "Tenant", parentField: "apiTokens",
		parent: func(w *world, _ int) (int, owner) { return w.tenantA, w.ownerOf(w.tenantA) },
	},
	"Alert": {
		make: func(w *world) (int, owner) {
			id := w.c.Alert.Create().SetName(uniq("alert")).SetSeverity("WARNING").SetHostID(w.hostM).SaveX(w.ctx).ID
			return id, owner{maintainer: w.m1}
		},
		parentType: "Host", parentField: "alerts",
		parent: func(w *world, _ int) (int, owner) { return w.hostM, w.ownerOf(w.hostM) },
		update: map[string]any{"message": "checked"},
		create: func(w *world) (map[string]any, owner) {
			return map[string]any{"name": uniq("alert"), "severity": "WARNING", "hostID": gid(w.hostM)}, owner{}
		},
	},
	"Assignment": {
		make: func(w *world) (int, owner) {
			return w.c.Assignment.Create().SetNodeID(w.node1).SaveX(w.ctx).ID, owner{node: w.node1}
		},
		parentType: "ComputeNode", parentField: "assignments",
		parent: func(w *world, _ int) (int, owner) { return w.node1, w.ownerOf(w.node1) },
	},
	"AuditLog": {
		make: func(w *world) (int, owner) {
			id := w.c.AuditLog.Create().SetActor("test").SetAction("test").SetTenantID(w.tenantA).SaveX(w.ctx).ID
			return id, owner{tenant: w.tenantA}
		},
	},
	"JoinToken": {
		make: func(w *world) (int, owner) {
			_, hash, prefix := identity.NewToken(apitoken.KindAgent)
			return w.c.JoinToken.Create().SetTokenHash(hash).SetPrefix(prefix).SetClusterID(w.cluster).
				SetExpiresAt(time.Now().Add(time.Hour)).SaveX(w.ctx).ID, owner{}
		},
	},
	"AvailabilityZone": {
		make: func(w *world) (int, owner) {
			return w.c.AvailabilityZone.Create().SetName(uniq("az")).SetRegionID(w.region).SaveX(w.ctx).ID, owner{}
		},
		parentType: "Region", parentField: "availabilityZones",
		parent: func(w *world, _ int) (int, owner) { return w.region, w.ownerOf(w.region) },
		update: map[string]any{"description": "updated"},
		create: func(w *world) (map[string]any, owner) {
			return map[string]any{"name": uniq("az"), "regionID": gid(w.region)}, owner{}
		},
	},
	"Cluster": {
		make: func(w *world) (int, owner) {
			id := w.c.Cluster.Create().SetName(uniq("cluster")).SetRegionID(w.region).SetDatacenterID(w.dc).
				AddMaintainerIDs(w.m1).SaveX(w.ctx).ID
			return id, owner{maintainer: w.m1}
		},
		parentType: "Region", parentField: "clusters",
		parent: func(w *world, _ int) (int, owner) { return w.region, w.ownerOf(w.region) },
		update: map[string]any{"description": "updated"},
		create: func(w *world) (map[string]any, owner) {
			return map[string]any{"name": uniq("cluster"), "regionID": gid(w.region), "datacenterID": gid(w.dc)}, owner{}
		},
	},
	"ComputeNode": {
		make: func(w *world) (int, owner) {
			id := w.newNode(w.m1)
			return id, owner{node: id, maintainer: w.m1}
		},
		matrix: func(w *world) (int, owner) { return w.node1, owner{node: w.node1, maintainer: w.m1} },
		// From a zone (a catalog record every signed-in user may read) into the nodes.
		parentType: "AvailabilityZone", parentField: "nodes",
		parent: func(w *world, _ int) (int, owner) { return w.az, w.ownerOf(w.az) },
		update: map[string]any{"osVersion": "24.04"},
		create: func(w *world) (map[string]any, owner) {
			host := w.c.Host.Create().SetName(uniq("node-host")).SaveX(w.ctx).ID
			return map[string]any{"name": uniq("node"), "hostID": gid(host), "clusterID": gid(w.cluster)}, owner{}
		},
	},
	"Datacenter": {
		make: func(w *world) (int, owner) {
			return w.c.Datacenter.Create().SetName(uniq("dc")).SetRegionID(w.region).SaveX(w.ctx).ID, owner{}
		},
		parentType: "Region", parentField: "datacenters",
		parent: func(w *world, _ int) (int, owner) { return w.region, w.ownerOf(w.region) },
		update: map[string]any{"description": "updated"},
		create: func(w *world) (map[string]any, owner) {
			return map[string]any{"name": uniq("dc"), "regionID": gid(w.region)}, owner{}
		},
	},
	"Event": {
		make: func(w *world) (int, owner) {
			id := w.c.Event.Create().SetCheckName(uniq("check")).SetStatus("SUCCESS").SetNodeID(w.node1).SaveX(w.ctx).ID
			return id, owner{node: w.node1}
		},
		parentType: "ComputeNode", parentField: "events",
		parent: func(w *world, _ int) (int, owner) { return w.node1, w.ownerOf(w.node1) },
	},
	"EventRule": {
		make: func(w *world) (int, owner) {
			return w.c.EventRule.Create().SetName(uniq("rule")).SetKind("FILTER").SaveX(w.ctx).ID, owner{}
		},
		update: map[string]any{"description": "updated"},
		create: func(w *world) (map[string]any, owner) {
			return map[string]any{"name": uniq("rule"), "kind": "FILTER"}, owner{}
		},
	},
	"Check": {
		make: func(w *world) (int, owner) {
			return w.c.Check.Create().SetName(uniq("check")).SetCommand("/bin/true").SaveX(w.ctx).ID, owner{}
		},
		update: map[string]any{"description": "updated"},
		create: func(w *world) (map[string]any, owner) {
			return map[string]any{"name": uniq("check"), "command": "/bin/true"}, owner{}
		},
	},
	"Silence": {
		make: func(w *world) (int, owner) {
			return w.c.Silence.Create().SetComment("reboot").SetEndsAt(time.Now().Add(time.Hour)).SaveX(w.ctx).ID, owner{}
		},
		update: map[string]any{"comment": "updated"},
		create: func(*world) (map[string]any, owner) {
			return map[string]any{"comment": "reboot", "endsAt": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}, owner{}
		},
	},
	"HookDelivery": {
		make: func(w *world) (int, owner) {
			return w.c.HookDelivery.Create().SetURL("http://127.0.0.1:9/").SetIdempotencyKey(uniq("key")).SetPayload("{}").
				SaveX(w.ctx).ID, owner{}
		},
	},
	"Flavor": {
		make: func(w *world) (int, owner) {
			id := w.c.Flavor.Create().SetName(uniq("flavor")).SetVcpus(1).SetMemoryMB(1024).SetProviderID(w.provider).SaveX(w.ctx).ID
			return id, owner{}
		},
		parentType: "Provider", parentField: "flavors",
		parent: func(w *world, _ int) (int, owner) { return w.provider, w.ownerOf(w.provider) },
		update: map[string]any{"description": "updated"},
		create: func(w *world) (map[string]any, owner) {
			return map[string]any{"name": uniq("flavor"), "vcpus": 1, "memoryMB": 1024}, owner{}
		},
	},
	"Floor": {
		make: func(w *world) (int, owner) {
			return w.c.Floor.Create().SetName(uniq("floor")).SetDatacenterID(w.dc).SaveX(w.ctx).ID, owner{}
		},
		parentType: "Datacenter", parentField: "floors",
		parent: func(w *world, _ int) (int, owner) { return w.dc, w.ownerOf(w.dc) },
		update: map[string]any{"description": "updated"},
		create: func(w *world) (map[string]any, owner) {
			return map[string]any{"name": uniq("floor"), "datacenterID": gid(w.dc)}, owner{}
		},
	},
	"GlobalService": {
		make: func(w *world) (int, owner) {
			return w.c.GlobalService.Create().SetName(uniq("gs")).SetTenantID(w.tenantA).SaveX(w.ctx).ID, owner{tenant: w.tenantA}
		},
		parentType: "Tenant", parentField: "globalServices",
		parent: func(w *world, _ int) (int, owner) { return w.tenantA, w.ownerOf(w.tenantA) },
		update: map[string]any{"description": "updated"},
		create: func(w *world) (map[string]any, owner) {
			return map[string]any{"name": uniq("gs"), "tenantID": gid(w.tenantA)}, owner{tenant: w.tenantA}
		},
	},
	"Host": {
		make: func(w *world) (int, owner) {
			id := w.c.Host.Create().SetName(uniq("host")).AddMaintainerIDs(w.m1).AddHostGroupIDs(w.hostGroup).SaveX(w.ctx).ID
			return id, owner{maintainer: w.m1}
		},
		parentType: "HostGroup", parentField: "hosts",
		parent: func(w *world, _ int) (int, owner) { return w.hostGroup, w.ownerOf(w.hostGroup) },
		update: map[string]any{"description": "updated"},
		create: func(*world) (map[string]any, owner) { return map[string]any{"name": uniq("host")}, owner{} },
	},
	"HostGroup": {
		make: func(w *world) (int, owner) {
			return w.c.HostGroup.Create().SetName(uniq("hg")).SaveX(w.ctx).ID, owner{}
		},
		parentType: "Host", parentField: "hostGroups",
		parent: func(w *world, id int) (int, owner) {
			w.c.HostGroup.UpdateOneID(id).AddHostIDs(w.hostM).ExecX(w.ctx)
			return w.hostM, w.ownerOf(w.hostM)
		},
		update: map[string]any{"description": "updated"},
		create: func(*world) (map[string]any, owner) { return map[string]any{"name": uniq("hg")}, owner{} },
	},
	"IPAddress": {
		make: func(w *world) (int, owner) {
			id := w.c.IPAddress.Create().SetAddress(w.nextIP()).SetNetworkID(w.netA).SetPortID(w.gonePort).SaveX(w.ctx).ID
			return id, owner{tenant: w.tenantA, node: w.node1}
		},
		parentType: "Port", parentField: "ipAddresses",
		parent: func(w *world, _ int) (int, owner) { return w.gonePort, w.ownerOf(w.gonePort) },
		update: map[string]any{"description": "updated"},
		create: func(w *world) (map[string]any, owner) {
			return map[string]any{"address": w.nextIP(), "networkID": gid(w.netA)}, owner{}
		},
	},
	"IPRange": {
		make: func(w *world) (int, owner) {
			ip := w.nextIP()
			id := w.c.IPRange.Create().SetStartAddress(ip).SetEndAddress(ip).SetNetworkID(w.netA).SaveX(w.ctx).ID
			return id, owner{}
		},
		parentType: "Network", parentField: "ipRanges",
		parent: func(w *world, _ int) (int, owner) { return w.netA, w.ownerOf(w.netA) },
		update: map[string]any{"description": "updated"},
		create: func(w *world) (map[string]any, owner) {
			ip := w.nextIP()
			return map[string]any{"startAddress": ip, "endAddress": ip, "networkID": gid(w.netA)}, owner{}
		},
	},
	"Image": {
		make: func(w *world) (int, owner) {
			return w.c.Image.Create().SetName(uniq("image")).SetSource("https://images.example.com/x.qcow2").SaveX(w.ctx).ID, owner{}
		},
		parentType: "VirtualMachine", parentField: "image",
		parent: func(w *world, id int) (int, owner) {
			vm := w.newVM(w.tenantA, w.node1)
			w.c.VirtualMachine.UpdateOneID(vm).SetImageID(id).ExecX(w.ctx)
			return vm, owner{tenant: w.tenantA, node: w.node1, maintainer: w.m1}
		},
		update: map[string]any{"description": "updated"},
		create: func(*world) (map[string]any, owner) {
			return map[string]any{"name": uniq("image"), "source": "https://images.example.com/y.qcow2"}, owner{}
		},
	},
	"KubernetesCluster": {
		make: func(w *world) (int, owner) {
			id := w.c.KubernetesCluster.Create().SetName(uniq("k8s")).SetVersion("1.30.1").SetTenantID(w.tenantA).
				SetRegionID(w.region).AddMaintainerIDs(w.m1).SaveX(w.ctx).ID
			return id, owner{tenant: w.tenantA, maintainer: w.m1}
		},
		parentType: "Region", parentField: "kubernetesClusters",
		parent: func(w *world, _ int) (int, owner) { return w.region, w.ownerOf(w.region) },
		update: map[string]any{"description": "updated"},
		create: func(w *world) (map[string]any, owner) {
			// The cluster's API VIP comes from a SERVICE network of its region.
			if !w.c.Network.Query().Where(network.PurposeEQ(network.PurposeService), network.HasDatacenterWith(datacenter.ID(w.dc))).ExistX(w.ctx) {
				w.c.Network.Create().SetName(uniq("svcnet")).SetCidr("10.99.0.0/24").SetVrf(uniq("vrf")).
					SetPurpose(network.PurposeService).SetDatacenterID(w.dc).SaveX(w.ctx)
			}
			return map[string]any{"name": uniq("k8s"), "version": "1.30.1", "tenantID": gid(w.tenantA), "regionID": gid(w.region), "flavorID": gid(w.flavor)},
				owner{tenant: w.tenantA}
		},
	},
	"Link": {
		make: func(w *world) (int, owner) {
			a := w.c.Port.Create().SetName(uniq("eth")).SetHostID(w.hostM).SaveX(w.ctx).ID
			b := w.c.Port.Create().SetName(uniq("eth")).SetHostID(w.hostM).SaveX(w.ctx).ID
			return w.c.Link.Create().SetAPortID(a).SetBPortID(b).SaveX(w.ctx).ID, owner{}
		},
		parentType: "Port", parentField: "linkA",
		parent: func(w *world, id int) (int, owner) {
			return w.c.Port.Query().Where(port.HasLinkAWith(link.ID(id))).OnlyIDX(w.ctx), owner{} // a host's port
		},
		update: map[string]any{"label": "patched"},
		create: func(w *world) (map[string]any, owner) {
			a := w.c.Port.Create().SetName(uniq("eth")).SetHostID(w.hostM).SaveX(w.ctx).ID
			b := w.c.Port.Create().SetName(uniq("eth")).SetHostID(w.hostM).SaveX(w.ctx).ID
			return map[string]any{"aPortID": gid(a), "bPortID": gid(b)}, owner{}
		},
	},
	"LoadBalancer": {
		make: func(w *world) (int, owner) {
			return w.c.LoadBalancer.Create().SetName(uniq("lb")).SetTenantID(w.tenantA).SaveX(w.ctx).ID, owner{tenant: w.tenantA}
		},
		parentType: "Tenant", parentField: "loadBalancers",
		parent: func(w *world, _ int) (int, owner) { return w.tenantA, w.ownerOf(w.tenantA) },
		update: map[string]any{"algorithm": "SOURCE_HASH"},
		create: func(w *world) (map[string]any, owner) {
			return map[string]any{"name": uniq("lb"), "tenantID": gid(w.tenantA)}, owner{tenant: w.tenantA}
		},
	},
	"Maintainer": {
		make: func(w *world) (int, owner) {
			return w.c.Maintainer.Create().SetName("Someone").SetAccount(uniq("ops")).SaveX(w.ctx).ID, owner{}
		},
		parentType: "MaintainerGroup", parentField: "members",
		parent: func(w *world, id int) (int, owner) {
			return w.c.MaintainerGroup.Create().SetName(uniq("team")).AddMemberIDs(id).SaveX(w.ctx).ID, owner{}
		},
		update: map[string]any{"name": "Someone Else"},
		create: func(*world) (map[string]any, owner) {
			return map[string]any{"name": "New Person", "account": uniq("ops")}, owner{}
		},
	},
	"MaintainerGroup": {
		make: func(w *world) (int, owner) {
			return w.c.MaintainerGroup.Create().SetName(uniq("team")).SaveX(w.ctx).ID, owner{}
		},
		parentType: "Maintainer", parentField: "groups",
		parent: func(w *world, id int) (int, owner) {
			return w.c.Maintainer.Create().SetName("Member").SetAccount(uniq("ops")).AddGroupIDs(id).SaveX(w.ctx).ID, owner{}
		},
		update: map[string]any{"description": "updated"},
		create: func(*world) (map[string]any, owner) { return map[string]any{"name": uniq("team")}, owner{} },
	},
	"Maintenance": {
		make: func(w *world) (int, owner) {
			return w.c.Maintenance.Create().SetTitle("swap disks").SetStartsAt(time.Now()).AddHostIDs(w.hostM).SaveX(w.ctx).ID, owner{}
		},
		parentType: "Host", parentField: "maintenances",
		parent: func(w *world, _ int) (int, owner) { return w.hostM, w.ownerOf(w.hostM) },
		update: map[string]any{"description": "updated"},
		create: func(*world) (map[string]any, owner) {
			return map[string]any{"title": "swap fans", "startsAt": time.Now().UTC().Format(time.RFC3339)}, owner{}
		},
	},
	"Network": {
		make: func(w *world) (int, owner) {
			id := w.c.Network.Create().SetName(uniq("net")).SetCidr(uniqCIDR()).SetTenantID(w.tenantA).SaveX(w.ctx).ID
			return id, owner{tenant: w.tenantA}
		},
		parentType: "Tenant", parentField: "networks",
		parent: func(w *world, _ int) (int, owner) { return w.tenantA, w.ownerOf(w.tenantA) },
		update: map[string]any{"description": "updated"},
		create: func(*world) (map[string]any, owner) {
			return map[string]any{"name": uniq("net"), "cidr": uniqCIDR()}, owner{}
		},
	},
	"NetworkZone": {
		make: func(w *world) (int, owner) {
			return w.c.NetworkZone.Create().SetName(uniq("nz")).SetDatacenterID(w.dc).SaveX(w.ctx).ID, owner{}
		},
		parentType: "Datacenter", parentField: "networkZones",
		parent: func(w *world, _ int) (int, owner) { return w.dc, w.ownerOf(w.dc) },
		update: map[string]any{"description": "updated"},
		create: func(w *world) (map[string]any, owner) {
			return map[string]any{"name": uniq("nz"), "datacenterID": gid(w.dc)}, owner{}
		},
	},
	"Notice": {
		make: func(w *world) (int, owner) {
			id := w.c.Notice.Create().SetTitle("for tenant A").SetAudience("TENANT").SetTenantID(w.tenantA).SaveX(w.ctx).ID
			return id, owner{tenant: w.tenantA}
		},
		parentType: "Tenant", parentField: "notices",
		parent: func(w *world, _ int) (int, owner) { return w.tenantA, w.ownerOf(w.tenantA) },
		update: map[string]any{"body": "updated"},
		create: func(*world) (map[string]any, owner) {
			return map[string]any{"title": "to everyone"}, owner{allTenants: true}
		},
	},
	"Port": {
		make: func(w *world) (int, owner) {
			id := w.c.Port.Create().SetName(uniq("vnic")).SetVirtualMachineID(w.vm1).SaveX(w.ctx).ID
			return id, owner{tenant: w.tenantA, node: w.node1}
		},
		parentType: "VirtualMachine", parentField: "ports",
		parent: func(w *world, _ int) (int, owner) { return w.vm1, w.ownerOf(w.vm1) },
		update: map[string]any{"description": "updated"},
		create: func(w *world) (map[string]any, owner) {
			return map[string]any{"name": uniq("eth"), "hostID": gid(w.hostM)}, owner{}
		},
	},
	"PowerZone": {
		make: func(w *world) (int, owner) {
			return w.c.PowerZone.Create().SetName(uniq("pz")).SetDatacenterID(w.dc).SaveX(w.ctx).ID, owner{}
		},
		parentType: "Datacenter", parentField: "powerZones",
		parent: func(w *world, _ int) (int, owner) { return w.dc, w.ownerOf(w.dc) },
		update: map[string]any{"description": "updated"},
		create: func(w *world) (map[string]any, owner) {
			return map[string]any{"name": uniq("pz"), "datacenterID": gid(w.dc)}, owner{}
		},
	},
	"Provider": {
		make: func(w *world) (int, owner) {
			return w.c.Provider.Create().SetName(uniq("provider")).SetKind("VIRTUAL_MACHINE").SetDriver("LIBVIRT").SaveX(w.ctx).ID, owner{}
		},
		parentType: "Flavor", parentField: "provider",
		parent: func(w *world, id int) (int, owner) {
			return w.c.Flavor.Create().SetName(uniq("flavor")).SetVcpus(1).SetMemoryMB(512).SetProviderID(id).SaveX(w.ctx).ID, owner{}
		},
		update: map[string]any{"description": "updated"},
		create: func(*world) (map[string]any, owner) {
			return map[string]any{"name": uniq("provider"), "kind": "VIRTUAL_MACHINE", "driver": "LIBVIRT"}, owner{}
		},
	},
	"Quota": {
		make: func(w *world) (int, owner) {
			hg := w.c.HostGroup.Create().SetName(uniq("hg")).SaveX(w.ctx).ID
			return w.c.Quota.Create().SetTenantID(w.tenantA).SetHostGroupID(hg).SaveX(w.ctx).ID, owner{tenant: w.tenantA}
		},
		parentType: "Tenant", parentField: "quotas",
		parent: func(w *world, _ int) (int, owner) { return w.tenantA, w.ownerOf(w.tenantA) },
		update: map[string]any{"vcpus": 8},
		create: func(w *world) (map[string]any, owner) {
			hg := w.c.HostGroup.Create().SetName(uniq("hg")).SaveX(w.ctx).ID
			return map[string]any{"tenantID": gid(w.tenantA), "hostGroupID": gid(hg)}, owner{tenant: w.tenantA}
		},
	},
	"Rack": {
		make: func(w *world) (int, owner) {
			id := w.c.Rack.Create().SetName(uniq("rack")).SetFloorID(w.floor).AddMaintainerIDs(w.m1).SaveX(w.ctx).ID
			return id, owner{maintainer: w.m1}
		},
		parentType: "Floor", parentField: "racks",
		parent: func(w *world, _ int) (int, owner) { return w.floor, w.ownerOf(w.floor) },
		update: map[string]any{"description": "updated"},
		create: func(w *world) (map[string]any, owner) {
			return map[string]any{"name": uniq("rack"), "floorID": gid(w.floor)}, owner{}
		},
	},
	"RackZone": {
		make: func(w *world) (int, owner) {
			return w.c.RackZone.Create().SetName(uniq("rz")).SetDatacenterID(w.dc).SaveX(w.ctx).ID, owner{}
		},
		parentType: "Datacenter", parentField: "rackZones",
		parent: func(w *world, _ int) (int, owner) { return w.dc, w.ownerOf(w.dc) },
		update: map[string]any{"description": "updated"},
		create: func(w *world) (map[string]any, owner) {
			return map[string]any{"name": uniq("rz"), "datacenterID": gid(w.dc)}, owner{}
		},
	},
	"Region": {
		make: func(w *world) (int, owner) {
			return w.c.Region.Create().SetName(uniq("region")).SaveX(w.ctx).ID, owner{}
		},
		parentType: "AvailabilityZone", parentField: "region",
		parent: func(w *world, id int) (int, owner) {
			return w.c.AvailabilityZone.Create().SetName(uniq("az")).SetRegionID(id).SaveX(w.ctx).ID, owner{}
		},
		update: map[string]any{"description": "updated"},
		create: func(*world) (map[string]any, owner) { return map[string]any{"name": uniq("region")}, owner{} },
	},
	"RegionService": {
		make: func(w *world) (int, owner) {
			id := w.c.RegionService.Create().SetName(uniq("svc")).SetTenantID(w.tenantA).SetRegionID(w.region).SaveX(w.ctx).ID
			return id, owner{tenant: w.tenantA}
		},
		parentType: "Region", parentField: "regionServices",
		parent: func(w *world, _ int) (int, owner) { return w.region, w.ownerOf(w.region) },
		update: map[string]any{"description": "updated"},
		create: func(w *world) (map[string]any, owner) {
			return map[string]any{"name": uniq("svc"), "tenantID": gid(w.tenantA), "regionID": gid(w.region), "flavorID": gid(w.flavor)},
				owner{tenant: w.tenantA}
		},
	},
	"RoleBinding": {
		make: func(w *world) (int, owner) {
			u := w.newUser("bound", w.tenantA)
			id := w.c.RoleBinding.Create().SetRole(rolebinding.RoleTenantMember).SetDomain(authz.TenantDomain(w.tenantA)).
				SetUserID(u).SetTenantID(w.tenantA).SaveX(w.ctx).ID
			return id, owner{tenant: w.tenantA}
		},
		parentType: "Tenant", parentField: "roleBindings",
		parent: func(w *world, _ int) (int, owner) { return w.tenantA, w.ownerOf(w.tenantA) },
	},
	"ServiceMesh": {
		make: func(w *world) (int, owner) {
			return w.c.ServiceMesh.Create().SetName(uniq("mesh")).SaveX(w.ctx).ID, owner{}
		},
		parentType: "KubernetesCluster", parentField: "serviceMesh",
		parent: func(w *world, id int) (int, owner) {
			return w.c.KubernetesCluster.Create().SetName(uniq("k8s")).SetVersion("1.30").SetTenantID(w.tenantA).
				SetRegionID(w.region).SetServiceMeshID(id).SaveX(w.ctx).ID, owner{tenant: w.tenantA}
		},
		update: map[string]any{"description": "updated"},
		create: func(*world) (map[string]any, owner) { return map[string]any{"name": uniq("mesh")}, owner{} },
	},
	"Tenant": {
		make: func(w *world) (int, owner) {
			id := w.c.Tenant.Create().SetName(uniq("tenant")).SaveX(w.ctx).ID
			return id, owner{tenant: id}
		},
		matrix:     func(w *world) (int, owner) { return w.tenantA, owner{tenant: w.tenantA} },
		parentType: "User", parentField: "tenants",
		parent: func(w *world, id int) (int, owner) { return w.newUser("member", id), owner{tenant: id} },
		update: map[string]any{"description": "updated"},
		create: func(*world) (map[string]any, owner) { return map[string]any{"name": uniq("tenant")}, owner{} },
	},
	"UsageRecord": {
		make: func(w *world) (int, owner) {
			id := w.c.UsageRecord.Create().SetResourceType("VirtualMachine").SetResourceID(w.vm1).
				SetStartedAt(time.Now()).SetPricePerHour(0.5).SetTenantID(w.tenantA).SaveX(w.ctx).ID
			return id, owner{tenant: w.tenantA}
		},
		parentType: "Tenant", parentField: "usageRecords",
		parent: func(w *world, _ int) (int, owner) { return w.tenantA, w.ownerOf(w.tenantA) },
	},
	"User": {
		make:       func(w *world) (int, owner) { return w.newUser("user", w.tenantA), owner{tenant: w.tenantA} },
		parentType: "Tenant", parentField: "members",
		parent: func(w *world, _ int) (int, owner) { return w.tenantA, w.ownerOf(w.tenantA) },
		update: map[string]any{"displayName": "Updated Name"},
		create: func(*world) (map[string]any, owner) { return map[string]any{"username": uniq("user")}, owner{} },
	},
	"VirtualMachine": {
		make: func(w *world) (int, owner) {
			return w.newVM(w.tenantA, w.node1), owner{tenant: w.tenantA, node: w.node1, maintainer: w.m1}
		},
		// From a region (a catalog record every signed-in user may read) into the VMs.
		parentType: "Region", parentField: "virtualMachines",
		parent: func(w *world, _ int) (int, owner) { return w.region, w.ownerOf(w.region) },
		update: map[string]any{"description": "updated"},
		create: func(w *world) (map[string]any, owner) {
			return map[string]any{"name": uniq("vm"), "tenantID": gid(w.tenantA), "regionID": gid(w.region), "flavorID": gid(w.flavor)},
				owner{tenant: w.tenantA}
		},
	},
	"SecurityRule": {
		make: func(w *world) (int, owner) {
			vm := w.newVM(w.tenantA, w.node1)
			id := w.c.SecurityRule.Create().SetDirection("INGRESS").SetTenantID(w.tenantA).SetVirtualMachineID(vm).SaveX(w.ctx).ID
			return id, owner{tenant: w.tenantA, node: w.node1}
		},
		parentType: "Tenant", parentField: "securityRules",
		parent: func(w *world, _ int) (int, owner) { return w.tenantA, w.ownerOf(w.tenantA) },
		update: map[string]any{"description": "updated"},
		create: func(w *world) (map[string]any, owner) {
			vm := w.newVM(w.tenantA, w.node1)
			return map[string]any{"direction": "INGRESS", "protocol": "TCP", "portFrom": 22, "tenantID": gid(w.tenantA), "virtualMachineID": gid(vm)},
				owner{tenant: w.tenantA}
		},
	},
	"SSHKey": {
		make: func(w *world) (int, owner) {
			id := w.c.SSHKey.Create().SetName(uniq("key")).SetPublicKey(testSSHKey).SetTenantID(w.tenantA).SaveX(w.ctx).ID
			return id, owner{tenant: w.tenantA}
		},
		parentType: "Tenant", parentField: "sshKeys",
		parent: func(w *world, _ int) (int, owner) { return w.tenantA, w.ownerOf(w.tenantA) },
		update: map[string]any{"description": "updated"},
		create: func(w *world) (map[string]any, owner) {
			return map[string]any{"name": uniq("key"), "publicKey": testSSHKey, "tenantID": gid(w.tenantA)}, owner{tenant: w.tenantA}
		},
	},
	"Snapshot": {
		make: func(w *world) (int, owner) {
			id := w.c.Snapshot.Create().SetName(uniq("snap")).SetTenantID(w.tenantA).SetVirtualMachineID(w.vm1).
				SetNodeID(w.node1).SaveX(w.ctx).ID
			return id, owner{tenant: w.tenantA, node: w.node1}
		},
		parentType: "Tenant", parentField: "snapshots",
		parent: func(w *world, _ int) (int, owner) { return w.tenantA, w.ownerOf(w.tenantA) },
	},
	"Backup": {
		make: func(w *world) (int, owner) {
			id := w.c.Backup.Create().SetName(uniq("backup")).SetTenantID(w.tenantA).SetRegionID(w.region).
				SetNodeID(w.node1).SetLocation("/srv/backups").SaveX(w.ctx).ID
			return id, owner{tenant: w.tenantA, node: w.node1}
		},
		parentType: "Tenant", parentField: "backups",
		parent: func(w *world, _ int) (int, owner) { return w.tenantA, w.ownerOf(w.tenantA) },
	},
	"Volume": {
		make: func(w *world) (int, owner) {
			id := w.c.Volume.Create().SetName(uniq("vol")).SetSizeGB(10).SetTenantID(w.tenantA).SetNodeID(w.node1).SaveX(w.ctx).ID
			return id, owner{tenant: w.tenantA, node: w.node1}
		},
		parentType: "Tenant", parentField: "volumes",
		parent: func(w *world, _ int) (int, owner) { return w.tenantA, w.ownerOf(w.tenantA) },
		update: map[string]any{"description": "updated"},
		create: func(w *world) (map[string]any, owner) {
			return map[string]any{"name": uniq("vol"), "sizeGB": 10, "tenantID": gid(w.tenantA)}, owner{tenant: w.tenantA}
		},
	},
}

// TestPolicyTableMatchesCasbin checks the test's policy model against the Casbin policy of
// package authz for every role, entity type and action: when policy.go changes, this test says
// exactly which cells of the model (and so of the matrix) to revisit.
func TestPolicyTableMatchesCasbin(t *testing.T) {
	domains := map[authz.Role]string{
		authz.RoleAdmin: authz.Platform, authz.RoleOperator: authz.Platform, authz.RoleViewer: authz.Platform,
		authz.RoleMaintainer: authz.Platform, authz.RoleTenantAdmin: authz.TenantDomain(7),
		authz.RoleTenantMember: authz.TenantDomain(7), authz.RoleAgent: authz.NodeDomain(7),
	}
	cells := 0
	for role, dom := range domains {
		for _, typ := range append(nodeTypes(), "Unknown") {
			for _, act := range []string{authz.ActRead, authz.ActWrite, authz.ActWriteOwn} {
				cells++
				want := policyModel[role].may(act, typ)
				if got := authz.Allowed(role, dom, typ, act); got != want {
					t.Errorf("authz.Allowed(%s, %s, %s, %s) = %v, the model says %v", role, dom, typ, act, got, want)
				}
			}
		}
		// Roles hold nothing outside their own kind of domain.
		if dom != authz.Platform && authz.Allowed(role, authz.Platform, "Region", authz.ActRead) {
			t.Errorf("%s reads in the platform domain", role)
		}
	}
	t.Logf("%d policy cells checked", cells)
}

// matrixOps are the operations of one matrix cell.
var matrixOps = []string{"list", "node", "edge", "update", "delete", "create"}

// TestRoleMatrix checks, for every type implementing Node and every viewer, a read by list, by
// node(id:) and through an edge, an update, a delete of a fresh record and a create, against
// the policy model: allowed, hidden (filtered rows: an empty list, NOT_FOUND by id, NOT_FOUND
// on write), FORBIDDEN or UNAUTHENTICATED, exactly.
func TestRoleMatrix(t *testing.T) {
	w := newWorld(t)
	type target struct {
		typ       string
		id        int
		own       owner
		parent    int
		parentOwn owner
	}
	var targets []target
	for _, typ := range nodeTypes() {
		e, ok := entities[typ]
		if !ok {
			t.Errorf("%s implements Node but the matrix has no entity for it: add one to entities", typ)
			continue
		}
		if connectionField(typ) == nil {
			t.Errorf("%s has no Query connection field", typ)
			continue
		}
		for op, has := range map[string]bool{"update": e.update != nil, "create": e.create != nil} {
			if in := crudField(op, typ); (in != nil) != has {
				t.Errorf("%s: schema has %s%s(input: %s%sInput) = %v, but the entity has an input = %v",
					typ, op, typ, strings.ToUpper(op[:1])+op[1:], typ, in != nil, has)
			}
		}
		if e.make == nil {
			t.Errorf("%s: entity has no make", typ)
			continue
		}
		mk := e.make
		if e.matrix != nil {
			mk = e.matrix
		}
		id, own := mk(w)
		tg := target{typ: typ, id: id, own: own}
		if e.parentType != "" {
			f := gqlSchema().Types[e.parentType].Fields.ForName(e.parentField)
			if f == nil || (f.Type.Name() != typ && f.Type.Name() != typ+"Connection") {
				t.Errorf("%s: %s.%s is not an edge into %s", typ, e.parentType, e.parentField, typ)
				continue
			}
			tg.parent, tg.parentOwn = e.parent(w, id)
		}
		targets = append(targets, tg)
	}
	if t.Failed() {
		t.FailNow()
	}

	var cases, skipped atomic.Int64
	for _, v := range w.viewers {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			for _, tg := range targets {
				e := entities[tg.typ]
				t.Run(tg.typ, func(t *testing.T) {
					for _, op := range matrixOps {
						if !applies(tg.typ, e, op) {
							skipped.Add(1)
							continue
						}
						cases.Add(1)
						t.Run(op, func(t *testing.T) { runCell(t, w, v, tg.typ, e, tg.id, tg.own, tg.parent, tg.parentOwn, op) })
					}
				})
			}
		})
	}
	t.Cleanup(func() {
		t.Logf("role matrix: %d types x %d viewers: %d cases run, %d not applicable (no such mutation or edge)",
			len(targets), len(w.viewers), cases.Load(), skipped.Load())
	})
}

// crudField is the generic createX or updateX mutation of typ (generated into ent.graphqls,
// taking CreateXInput or UpdateXInput), or nil; createAPIToken, for one, is hand-written.
func crudField(op, typ string) *ast.FieldDefinition {
	f := mutationField(op + typ)
	if f == nil || f.Position == nil || f.Position.Src == nil || !strings.HasSuffix(f.Position.Src.Name, "ent.graphqls") {
		return nil
	}
	in := f.Arguments.ForName("input")
	if in == nil || in.Type.Name() != strings.ToUpper(op[:1])+op[1:]+typ+"Input" {
		return nil
	}
	return f
}

// applies reports whether the matrix operation op exists for typ: an edge into it, an
// update, delete or create mutation.
func applies(typ string, e entity, op string) bool {
	switch op {
	case "edge":
		return e.parentType != ""
	case "update":
		return e.update != nil
	case "delete":
		return mutationField("delete"+typ) != nil
	case "create":
		return e.create != nil
	}
	return true
}

// runCell runs one operation of the matrix.
func runCell(t *testing.T, w *world, v *viewer, typ string, e entity, id int, own owner, parent int, pown owner, op string) {
	t.Helper()
	what := fmt.Sprintf("%s %s %s", v.name, op, typ)
	switch op {
	case "list":
		conn := connectionField(typ).Name
		q := fmt.Sprintf(`query($id: ID!) { %s(where: {id: $id}) { totalCount } }`, conn)
		r := w.do(t, v, q, map[string]any{"id": gid(id)})
		checkOutcome(t, what, r, v.read(typ, own), func() (outcome, string) {
			var out map[string]struct{ TotalCount int }
			if len(r.Errors) > 0 || json.Unmarshal(r.Data, &out) != nil {
				return "error", string(r.Data)
			}
			switch out[conn].TotalCount {
			case 1:
				return allowed, "totalCount 1"
			case 0:
				return hidden, "totalCount 0"
			}
			return "wrong", string(r.Data)
		})
	case "node":
		r := w.do(t, v, `query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": gid(id)})
		checkOutcome(t, what, r, v.read(typ, own), func() (outcome, string) {
			var out struct{ Node *struct{ ID string } }
			_ = json.Unmarshal(r.Data, &out)
			switch {
			case len(r.Errors) == 0 && out.Node != nil && out.Node.ID == gid(id):
				return allowed, "the node"
			case onlyCode(r, "NOT_FOUND") && out.Node == nil:
				return hidden, "NOT_FOUND"
			}
			return "wrong", string(r.Data)
		})
	case "edge":
		checkEdge(t, w, v, typ, e, id, own, parent, pown)
	case "update":
		q := fmt.Sprintf(`mutation($id: ID!, $input: Update%sInput!) { update%s(id: $id, input: $input) { id } }`, typ, typ)
		r := w.do(t, v, q, map[string]any{"id": gid(id), "input": e.update})
		checkWrite(t, what, r, v.write(typ, own, false))
	case "delete":
		fresh, fown := e.make(w)
		r := w.do(t, v, fmt.Sprintf(`mutation($id: ID!) { delete%s(id: $id) }`, typ), map[string]any{"id": gid(fresh)})
		want := v.delete(typ, fown)
		checkWrite(t, what, r, want)
		_, err := w.c.Noder(w.ctx, fresh)
		if gone := ent.IsNotFound(err); gone != (want == allowed) {
			t.Errorf("%s: record %d gone = %v after the delete, want %v (err %v)", what, fresh, gone, want == allowed, err)
		}
	case "create":
		in, cown := e.create(w)
		q := fmt.Sprintf(`mutation($input: Create%sInput!) { create%s(input: $input) { id } }`, typ, typ)
		r := w.do(t, v, q, map[string]any{"input": in})
		checkWrite(t, what, r, v.write(typ, cown, true))
	}
}

// checkWrite asserts a mutation answered want: allowed returns data, hidden is NOT_FOUND.
func checkWrite(t *testing.T, what string, r gqltest.Response, want outcome) {
	t.Helper()
	checkOutcome(t, what, r, want, func() (outcome, string) {
		switch {
		case len(r.Errors) == 0 && len(r.Data) > 0 && string(r.Data) != "null":
			return allowed, "done"
		case onlyCode(r, "NOT_FOUND"):
			return hidden, "NOT_FOUND"
		}
		return "wrong", strings.Join(codes(r), ",")
	})
}

// checkEdge reads typ's record through its parent's edge: node(id: parent) { ... on P {
// field(where: {id}) { totalCount } } } for a connection, field { id } for a unique edge. The
// parent must be readable first (else FORBIDDEN, or NOT_FOUND when filtered out), then the
// record is read as by a list (a connection counts it or not) or by id (a hidden record of a
// nullable unique edge is null; of a required edge NOT_FOUND).
func checkEdge(t *testing.T, w *world, v *viewer, typ string, e entity, id int, own owner, parent int, pown owner) {
	t.Helper()
	what := fmt.Sprintf("%s edge %s.%s -> %s", v.name, e.parentType, e.parentField, typ)
	f := gqlSchema().Types[e.parentType].Fields.ForName(e.parentField)
	conn := f.Type.Name() == typ+"Connection"
	sel := fmt.Sprintf(`%s { id }`, f.Name)
	if conn {
		sel = fmt.Sprintf(`%s(where: {id: $id}) { totalCount }`, f.Name)
	}
	q := fmt.Sprintf(`query($p: ID!) { node(id: $p) { ... on %s { %s } } }`, e.parentType, sel)
	vars := map[string]any{"p": gid(parent)}
	if conn {
		q = strings.Replace(q, "($p: ID!)", "($p: ID!, $id: ID!)", 1)
		vars["id"] = gid(id)
	}
	r := w.do(t, v, q, vars)

	want := v.read(e.parentType, pown)
	child := v.read(typ, own)
	switch {
	case want == allowed && child == denied:
		want = denied
	case want == hidden:
		// node(id:) of a filtered parent: NOT_FOUND.
		if !onlyCode(r, "NOT_FOUND") {
			t.Errorf("%s: parent %s %d is hidden from %s, want NOT_FOUND, got data %s errors %s", what, e.parentType, parent, v.name, r.Data, r.ErrorsString())
		}
		return
	case want == allowed:
		want = child
	}
	checkOutcome(t, what, r, want, func() (outcome, string) {
		var out struct{ Node map[string]json.RawMessage }
		if err := json.Unmarshal(r.Data, &out); err != nil || out.Node == nil {
			return "error", string(r.Data)
		}
		raw := out.Node[f.Name]
		if conn {
			var c struct{ TotalCount int }
			_ = json.Unmarshal(raw, &c)
			switch {
			case len(r.Errors) > 0:
				return "error", string(r.Data)
			case c.TotalCount == 1:
				return allowed, "totalCount 1"
			case c.TotalCount == 0:
				return hidden, "totalCount 0"
			}
			return "wrong", string(raw)
		}
		var n *struct{ ID string }
		_ = json.Unmarshal(raw, &n)
		switch {
		case len(r.Errors) == 0 && n != nil && n.ID == gid(id):
			return allowed, "the record"
		case len(r.Errors) == 0 && n == nil && !f.Type.NonNull:
			return hidden, "null"
		case n == nil && f.Type.NonNull && onlyCode(r, "NOT_FOUND"):
			return hidden, "NOT_FOUND"
		}
		return "wrong", string(r.Data)
	})
}

// TestTenantIsolation checks that a tenant never sees another tenant's rows, by any path:
// lists and their totalCount, node(id:), nodes(ids:), nested edges and where filters on edges.
func TestTenantIsolation(t *testing.T) {
	w := newWorld(t)
	c, ctx := w.c, w.ctx
	nameA, nameB := c.Tenant.GetX(ctx, w.tenantA).Name, c.Tenant.GetX(ctx, w.tenantB).Name
	vmA := w.newVM(w.tenantA, w.node1)
	vmB := w.newVM(w.tenantB, w.node2)
	vmBName := c.VirtualMachine.GetX(ctx, vmB).Name
	volB := c.Volume.Create().SetName(uniq("vol")).SetSizeGB(5).SetTenantID(w.tenantB).SaveX(ctx).ID
	portB := c.Port.Create().SetName(uniq("vnic")).SetVirtualMachineID(vmB).SaveX(ctx).ID
	memberA := w.viewer("tenant-member")
	adminA := w.viewer("tenant-admin")

	run := func(t *testing.T, v *viewer, q string, vars map[string]any) map[string]any {
		t.Helper()
		var out map[string]any
		mustData(t, w.do(t, v, q, vars), &out)
		return out
	}
	num := func(m any, path ...string) float64 {
		for _, p := range path {
			mm, _ := m.(map[string]any)
			m = mm[p]
		}
		f, _ := m.(float64)
		return f
	}

	t.Run("lists count only the own tenant", func(t *testing.T) {
		for _, v := range []*viewer{memberA, adminA} {
			out := run(t, v, `query($ids: [ID!]) { virtualMachines(where: {idIn: $ids}) { totalCount edges { node { id tenant { id } } } } }`,
				map[string]any{"ids": []string{gid(vmA), gid(vmB)}})
			if n := num(out, "virtualMachines", "totalCount"); n != 1 {
				t.Errorf("%s: virtualMachines(idIn: [A's, B's]) totalCount = %v, want 1: %s", v.name, n, jsonString(out))
			}
			all := run(t, v, `{ virtualMachines(first: 1000) { totalCount edges { node { tenant { id } } } } volumes(first: 1000) { edges { node { tenant { id } } } } }`, nil)
			for _, conn := range []string{"virtualMachines", "volumes"} {
				for _, e := range all[conn].(map[string]any)["edges"].([]any) {
					tid := e.(map[string]any)["node"].(map[string]any)["tenant"].(map[string]any)["id"]
					if tid != gid(w.tenantA) {
						t.Errorf("%s: %s lists a row of tenant %v", v.name, conn, tid)
					}
				}
			}
		}
	})
	t.Run("where filters on edges cannot reach another tenant", func(t *testing.T) {
		out := run(t, memberA, `query($b: String!) { virtualMachines(where: {hasTenantWith: {name: $b}}) { totalCount } }`, map[string]any{"b": nameB})
		if n := num(out, "virtualMachines", "totalCount"); n != 0 {
			t.Errorf("virtualMachines(where: {hasTenantWith: {name: B}}) totalCount = %v, want 0", n)
		}
		out = run(t, memberA, `query($a: String!) { virtualMachines(where: {hasTenantWith: {name: $a}}) { totalCount } }`, map[string]any{"a": nameA})
		if n := num(out, "virtualMachines", "totalCount"); n < 1 {
			t.Errorf("virtualMachines(where: {hasTenantWith: {name: A}}) totalCount = %v, want at least 1 (the control)", n)
		}
		// A where filter through an edge must not reveal rows the viewer may not read: region
		// and flavor are catalog records everyone reads, B's VM is not. The edge's sub-query
		// sees only the viewer's rows (graph.whereGuard), so B's VM matches nothing and A's
		// VM (the control) matches.
		vmAName := w.c.VirtualMachine.GetX(w.ctx, vmA).Name
		for _, where := range []string{
			`{id: $r, hasVirtualMachinesWith: {name: $vm}}`,
			`{id: $r, hasVirtualMachinesWith: {name: $vm, hasTenantWith: {nameNEQ: ""}}}`,
		} {
			for vm, want := range map[string]float64{vmBName: 0, vmAName: 1} {
				out := run(t, memberA, `query($r: ID!, $vm: String!) { regions(where: `+where+`) { totalCount } }`, map[string]any{"r": gid(w.region), "vm": vm})
				if n := num(out, "regions", "totalCount"); n != want {
					t.Errorf("member of A: regions(where: %s) with $vm = %q: totalCount %v, want %v", where, vm, n, want)
				}
			}
		}
		for tenant, want := range map[string]float64{nameB: 0, nameA: 1} {
			out := run(t, memberA, `query($f: ID!, $b: String!) { flavors(where: {id: $f, hasVirtualMachinesWith: {hasTenantWith: {name: $b}}}) { totalCount } }`,
				map[string]any{"f": gid(w.flavor), "b": tenant})
			if n := num(out, "flavors", "totalCount"); n != want {
				t.Errorf("member of A: flavors(where: {hasVirtualMachinesWith: {hasTenantWith: {name: %q}}}): totalCount %v, want %v", tenant, n, want)
			}
		}
		// A type the viewer may not read at all stays off limits.
		r := w.do(t, memberA, `query($r: ID!) { regions(where: {id: $r, hasClustersWith: {nameNEQ: ""}}) { totalCount } }`, map[string]any{"r": gid(w.region)})
		if !onlyCode(r, "FORBIDDEN") || strings.Contains(string(r.Data), "totalCount") {
			t.Errorf("member of A: regions(where: {hasClustersWith: ...}): want FORBIDDEN and no count, got %s %s", r.Data, r.ErrorsString())
		}
	})
	t.Run("node and nodes by id", func(t *testing.T) {
		r := w.do(t, memberA, `query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": gid(vmB)})
		if !onlyCode(r, "NOT_FOUND") || strings.Contains(string(r.Data), gid(vmB)) {
			t.Errorf("node(B's VM): want NOT_FOUND, got %s %s", r.Data, r.ErrorsString())
		}
		r = w.do(t, memberA, `query($ids: [ID!]!) { nodes(ids: $ids) { id } }`, map[string]any{"ids": []string{gid(vmA), gid(vmB), gid(volB), gid(portB)}})
		var out struct{ Nodes []*struct{ ID string } }
		_ = json.Unmarshal(r.Data, &out)
		if len(out.Nodes) != 4 || out.Nodes[0] == nil || out.Nodes[0].ID != gid(vmA) || out.Nodes[1] != nil || out.Nodes[2] != nil || out.Nodes[3] != nil {
			t.Errorf("nodes([A's VM, B's VM, B's volume, B's port]) = %s, want [A's VM, null, null, null]", r.Data)
		}
		if len(r.Errors) != 3 || !onlyCode(r, "NOT_FOUND") {
			t.Errorf("nodes(...): want 3 NOT_FOUND errors, got %s", r.ErrorsString())
		}
	})
	t.Run("nested edges", func(t *testing.T) {
		out := run(t, memberA, `{ tenants { totalCount edges { node { id virtualMachines { totalCount } } } } }`, nil)
		if n := num(out, "tenants", "totalCount"); n != 1 {
			t.Errorf("tenants totalCount = %v, want 1 (own tenant only)", n)
		}
		for _, e := range out["tenants"].(map[string]any)["edges"].([]any) {
			if id := e.(map[string]any)["node"].(map[string]any)["id"]; id != gid(w.tenantA) {
				t.Errorf("tenants lists tenant %v", id)
			}
		}
		// Catalog and shared records lead to other tenants' rows through their edges.
		for _, q := range []struct{ query, path string }{
			{`query($id: ID!) { node(id: $id) { ... on Region { virtualMachines(where: {hasTenantWith: {idNEQ: "0"}}) { edges { node { tenant { id } } } } } } }`, "Region.virtualMachines"},
			{`query($id: ID!) { node(id: $id) { ... on Flavor { virtualMachines { edges { node { tenant { id } } } } } } }`, "Flavor.virtualMachines"},
			{`query($id: ID!) { node(id: $id) { ... on Image { virtualMachines { edges { node { tenant { id } } } } } } }`, "Image.virtualMachines"},
		} {
			id := w.region
			switch {
			case strings.HasPrefix(q.path, "Flavor"):
				id = w.flavor
			case strings.HasPrefix(q.path, "Image"):
				id = w.image
			}
			out := run(t, memberA, q.query, map[string]any{"id": gid(id)})
			b, _ := json.Marshal(out)
			var rows []string
			for _, part := range strings.Split(string(b), `"tenant":{"id":"`)[1:] {
				rows = append(rows, part[:strings.IndexByte(part, '"')])
			}
			if len(rows) == 0 {
				t.Errorf("%s: no VM of tenant A listed (the control): %s", q.path, b)
			}
			for _, tid := range rows {
				if tid != gid(w.tenantA) {
					t.Errorf("%s lists a VM of tenant %s to a member of tenant A", q.path, tid)
				}
			}
		}
		// Totals through a shared parent count only the viewer's rows.
		admin := run(t, w.viewer("admin"), `query($id: ID!) { node(id: $id) { ... on Flavor { virtualMachines { totalCount } } } }`, map[string]any{"id": gid(w.flavor)})
		mine := run(t, memberA, `query($id: ID!) { node(id: $id) { ... on Flavor { virtualMachines { totalCount } } } }`, map[string]any{"id": gid(w.flavor)})
		if num(mine, "node", "virtualMachines", "totalCount") >= num(admin, "node", "virtualMachines", "totalCount") {
			t.Errorf("Flavor.virtualMachines totalCount: member of A sees %v, admin %v: the member's count includes other tenants",
				num(mine, "node", "virtualMachines", "totalCount"), num(admin, "node", "virtualMachines", "totalCount"))
		}
	})
	t.Run("another tenant's rows stay out of reach", func(t *testing.T) {
		other := w.viewer("member-other-tenant")
		out := run(t, other, `query($ids: [ID!], $a: ID!) { virtualMachines(where: {idIn: $ids}) { totalCount } volumes(where: {hasTenantWith: {id: $a}}) { totalCount } }`,
			map[string]any{"ids": []string{gid(vmA), gid(vmB)}, "a": gid(w.tenantA)})
		if n := num(out, "virtualMachines", "totalCount"); n != 1 {
			t.Errorf("member of B: virtualMachines(idIn: [A's, B's]) totalCount = %v, want 1", n)
		}
		if n := num(out, "volumes", "totalCount"); n != 0 {
			t.Errorf("member of B: volumes(where: {hasTenantWith: {id: A}}) totalCount = %v, want 0", n)
		}
	})
}

// TestTenantEdgeWrites checks that a tenant cannot reach another tenant's records by naming
// them in the edges of its own: attaching B's volume or port to A's VM, moving a record to
// tenant B, or pointing A's records at B's.
func TestTenantEdgeWrites(t *testing.T) {
	w := newWorld(t)
	c, ctx := w.c, w.ctx
	member := w.viewer("tenant-member")
	vm := func(tenant, node int) int { return w.newVM(tenant, node) }
	vol := func(tenant int) int {
		return c.Volume.Create().SetName(uniq("vol")).SetSizeGB(5).SetTenantID(tenant).SaveX(ctx).ID
	}
	rs := func(tenant int) int {
		return c.RegionService.Create().SetName(uniq("svc")).SetTenantID(tenant).SetRegionID(w.region).SaveX(ctx).ID
	}
	// Each case makes its own records: a mutation that wrongly succeeds must not change what
	// the next case starts from. It returns the mutation and what changed, read as the system.
	type mutation struct {
		typ, op string // op: create or update
		id      int
		input   map[string]any
		changed func() string
	}
	cases := []struct {
		name  string
		setup func() mutation
		want  []string // acceptable codes
	}{
		{"move A's VM to tenant B", func() mutation {
			a := vm(w.tenantA, w.node1)
			return mutation{"VirtualMachine", "update", a, map[string]any{"tenantID": gid(w.tenantB)}, func() string {
				if got := c.VirtualMachine.GetX(ctx, a).QueryTenant().OnlyIDX(ctx); got != w.tenantA {
					return fmt.Sprintf("VM %d moved to tenant %d", a, got)
				}
				return ""
			}}
		}, []string{"FORBIDDEN", "GRAPHQL_VALIDATION_FAILED"}}, // tenantID is not an update input
		{"create a VM in tenant B", func() mutation {
			name := uniq("vm")
			return mutation{"VirtualMachine", "create", 0, map[string]any{"name": name, "tenantID": gid(w.tenantB), "regionID": gid(w.region), "flavorID": gid(w.flavor)}, func() string {
				if n := c.VirtualMachine.Query().Where(virtualmachine.Name(name)).CountX(ctx); n > 0 {
					return "a VM was created in tenant B"
				}
				return ""
			}}
		}, []string{"FORBIDDEN"}},
		{"attach B's volume to A's VM", func() mutation {
			a, b := vm(w.tenantA, w.node1), vol(w.tenantB)
			return mutation{"VirtualMachine", "update", a, map[string]any{"addVolumeIDs": []string{gid(b)}}, volumeVM(w, b, 0)}
		}, []string{"FORBIDDEN", "NOT_FOUND"}},
		{"create a VM holding B's volume", func() mutation {
			b := vol(w.tenantB)
			return mutation{"VirtualMachine", "create", 0, map[string]any{"name": uniq("vm"), "tenantID": gid(w.tenantA), "regionID": gid(w.region),
				"flavorID": gid(w.flavor), "volumeIDs": []string{gid(b)}}, volumeVM(w, b, 0)}
		}, []string{"FORBIDDEN", "NOT_FOUND"}},
		{"attach A's volume to B's VM", func() mutation {
			a, b := vol(w.tenantA), vm(w.tenantB, w.node2)
			return mutation{"Volume", "update", a, map[string]any{"virtualMachineID": gid(b)}, volumeVM(w, a, 0)}
		}, []string{"FORBIDDEN", "NOT_FOUND", "GRAPHQL_VALIDATION_FAILED"}}, // attachVolume, not updateVolume, attaches
		{"take B's VM port into A's VM", func() mutation {
			a, b := vm(w.tenantA, w.node1), vm(w.tenantB, w.node2)
			p := c.Port.Create().SetName(uniq("vnic")).SetVirtualMachineID(b).SaveX(ctx).ID
			return mutation{"VirtualMachine", "update", a, map[string]any{"addPortIDs": []string{gid(p)}}, portVM(w, p, b)}
		}, []string{"FORBIDDEN", "NOT_FOUND"}},
		{"take a host's port into A's VM", func() mutation {
			a := vm(w.tenantA, w.node1)
			p := c.Port.Create().SetName(uniq("eth")).SetHostID(w.hostM).SaveX(ctx).ID
			return mutation{"VirtualMachine", "update", a, map[string]any{"addPortIDs": []string{gid(p)}}, portVM(w, p, 0)}
		}, []string{"FORBIDDEN", "NOT_FOUND"}},
		{"put B's region service under A's global service", func() mutation {
			gs := c.GlobalService.Create().SetName(uniq("gs")).SetTenantID(w.tenantA).SaveX(ctx).ID
			b := rs(w.tenantB)
			return mutation{"GlobalService", "update", gs, map[string]any{"addRegionServiceIDs": []string{gid(b)}}, func() string {
				if got := c.RegionService.GetX(ctx, b).QueryGlobalService().IDsX(ctx); len(got) > 0 {
					return fmt.Sprintf("B's region service %d now under global service %v", b, got)
				}
				return ""
			}}
		}, []string{"FORBIDDEN", "NOT_FOUND"}},
		{"put B's VM into A's region service", func() mutation {
			a, b := rs(w.tenantA), vm(w.tenantB, w.node2)
			return mutation{"RegionService", "update", a, map[string]any{"addVirtualMachineIDs": []string{gid(b)}}, func() string {
				if got := c.VirtualMachine.GetX(ctx, b).QueryRegionService().IDsX(ctx); len(got) > 0 {
					return fmt.Sprintf("B's VM %d now in region service %v", b, got)
				}
				return ""
			}}
			// Replicas are created by placement only: the schema has no such input any more.
		}, []string{"FORBIDDEN", "NOT_FOUND", "GRAPHQL_VALIDATION_FAILED"}},
		{"take B's load balancer into A's region service", func() mutation {
			a := rs(w.tenantA)
			lb := c.LoadBalancer.Create().SetName(uniq("lb")).SetTenantID(w.tenantB).SaveX(ctx).ID
			return mutation{"RegionService", "update", a, map[string]any{"loadBalancerID": gid(lb)}, func() string {
				if got := c.LoadBalancer.GetX(ctx, lb).QueryRegionService().IDsX(ctx); len(got) > 0 {
					return fmt.Sprintf("B's load balancer %d now serves region service %v", lb, got)
				}
				return ""
			}}
		}, []string{"FORBIDDEN", "NOT_FOUND"}},
		{"put B's VM into A's Kubernetes cluster", func() mutation {
			kc := c.KubernetesCluster.Create().SetName(uniq("k8s")).SetVersion("1.30").SetTenantID(w.tenantA).SetRegionID(w.region).SaveX(ctx).ID
			b := vm(w.tenantB, w.node2)
			return mutation{"KubernetesCluster", "update", kc, map[string]any{"addVirtualMachineIDs": []string{gid(b)}}, func() string {
				if got := c.VirtualMachine.GetX(ctx, b).QueryKubernetesCluster().IDsX(ctx); len(got) > 0 {
					return fmt.Sprintf("B's VM %d now in Kubernetes cluster %v", b, got)
				}
				return ""
			}}
		}, []string{"FORBIDDEN", "NOT_FOUND"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.setup()
			var r gqltest.Response
			if m.op == "create" {
				r = w.do(t, member, fmt.Sprintf(`mutation($input: Create%sInput!) { create%s(input: $input) { id } }`, m.typ, m.typ), map[string]any{"input": m.input})
			} else {
				r = w.do(t, member, fmt.Sprintf(`mutation($id: ID!, $input: Update%sInput!) { update%s(id: $id, input: $input) { id } }`, m.typ, m.typ),
					map[string]any{"id": gid(m.id), "input": m.input})
			}
			ok := false
			for _, code := range tc.want {
				ok = ok || onlyCode(r, code)
			}
			if !ok {
				t.Errorf("tenant member of A: %s: want %s, got data %s errors %s", tc.name, strings.Join(tc.want, " or "), r.Data, r.ErrorsString())
			}
			if msg := m.changed(); msg != "" {
				t.Errorf("tenant member of A: %s: %s", tc.name, msg)
			}
		})
	}
}

// volumeVM reports a change of the VM volume vol is attached to (want: none when 0).
func volumeVM(w *world, vol, want int) func() string {
	return func() string {
		got := w.c.Volume.Query().Where(volume.ID(vol)).QueryVirtualMachine().IDsX(w.ctx)
		if len(got) == 0 && want == 0 || len(got) == 1 && got[0] == want {
			return ""
		}
		return fmt.Sprintf("volume %d now attached to VM %v", vol, got)
	}
}

// portVM reports a change of the VM port p belongs to (want: none when 0).
func portVM(w *world, p, want int) func() string {
	return func() string {
		got := w.c.Port.Query().Where(port.ID(p)).QueryVirtualMachine().IDsX(w.ctx)
		if len(got) == 0 && want == 0 || len(got) == 1 && got[0] == want {
			return ""
		}
		return fmt.Sprintf("port %d now belongs to VM %v", p, got)
	}
}

// TestDeleteDependentsBeforeAuthorization checks that a delete the viewer may not make is
// FORBIDDEN (or UNAUTHENTICATED) whether or not the record has dependents: the dependents
// check (ent's SafeDelete, which counts them unrestricted) must not answer first and tell the
// caller what it may not see.
func TestDeleteDependentsBeforeAuthorization(t *testing.T) {
	w := newWorld(t)
	rack := w.c.Rack.Create().SetName(uniq("rack")).SetFloorID(w.floor).SaveX(w.ctx).ID
	w.c.Host.Create().SetName(uniq("host")).SetRackID(rack).SetPosition(1).SaveX(w.ctx)
	vmB := w.newVM(w.tenantB, w.node2)
	w.c.Port.Create().SetName(uniq("vnic")).SetVirtualMachineID(vmB).SaveX(w.ctx)
	for _, tc := range []struct {
		viewer, typ string
		id          int
		want        string
	}{
		{"viewer", "Rack", rack, "FORBIDDEN"},
		{"tenant-member", "Rack", rack, "FORBIDDEN"},
		{"no-token", "Rack", rack, "UNAUTHENTICATED"},
		{"tenant-member", "Floor", w.floor, "FORBIDDEN"},
		{"member-other-tenant", "Region", w.region, "FORBIDDEN"},
		{"tenant-member", "VirtualMachine", vmB, "NOT_FOUND"}, // B's VM does not exist for A
	} {
		r := w.do(t, w.viewer(tc.viewer), fmt.Sprintf(`mutation($id: ID!) { delete%s(id: $id) }`, tc.typ), map[string]any{"id": gid(tc.id)})
		if !onlyCode(r, tc.want) {
			t.Errorf("%s: delete%s(%d) with dependents: want %s, got %s", tc.viewer, tc.typ, tc.id, tc.want, r.ErrorsString())
		}
	}
	if _, err := w.c.Rack.Get(w.ctx, rack); err != nil {
		t.Errorf("rack gone: %v", err)
	}
}

// TestFatalAlertsReachAffectedTenants: a tenant member reads the fatal alerts of the nodes that
// run its tenant's live VMs (raised on the node or on the node's host), and no other alert:
// not a warning on the same node, not a fatal alert on another tenant's node, not one on a node
// where its VM is deleted. The alert's node and host stay off limits.
func TestFatalAlertsReachAffectedTenants(t *testing.T) {
	w := newWorld(t)
	c, ctx := w.c, w.ctx
	hostOf := func(node int) int { return c.ComputeNode.GetX(ctx, node).QueryHost().OnlyIDX(ctx) }
	alert := func(sev string, node, host int) int {
		q := c.Alert.Create().SetName(uniq("alert")).SetSeverity(entalert.Severity(sev))
		if node != 0 {
			q.SetNodeID(node)
		}
		if host != 0 {
			q.SetHostID(host)
		}
		return q.SaveX(ctx).ID
	}
	// w.vm1 is tenant A's VM on node1; tenant B gets a VM on node2; a third node had A's VM, deleted.
	w.newVM(w.tenantB, w.node2)
	gone := w.newNode(0)
	c.VirtualMachine.UpdateOneID(w.newVM(w.tenantA, gone)).SetStatus(virtualmachine.StatusDeleted).ExecX(ctx)

	fatalOnNode := alert("FATAL", w.node1, 0)
	fatalOnHost := alert("FATAL", 0, hostOf(w.node1))
	warningOnNode := alert("WARNING", w.node1, 0)
	criticalOnHost := alert("CRITICAL", 0, hostOf(w.node1))
	fatalOnB := alert("FATAL", w.node2, 0)
	fatalWhereGone := alert("FATAL", gone, 0)
	all := []int{fatalOnNode, fatalOnHost, warningOnNode, criticalOnHost, fatalOnB, fatalWhereGone}
	ids := make([]string, len(all))
	for i, id := range all {
		ids[i] = gid(id)
	}

	listed := func(v *viewer) map[string]bool {
		var out struct {
			Alerts struct {
				TotalCount int
				Edges      []struct{ Node struct{ ID string } }
			}
		}
		mustData(t, w.do(t, v, `query($ids: [ID!]) { alerts(where: {idIn: $ids}) { totalCount edges { node { id } } } }`,
			map[string]any{"ids": ids}), &out)
		got := map[string]bool{}
		for _, e := range out.Alerts.Edges {
			got[e.Node.ID] = true
		}
		if out.Alerts.TotalCount != len(got) {
			t.Errorf("%s: totalCount %d for %d alerts listed", v.name, out.Alerts.TotalCount, len(got))
		}
		return got
	}
	want := map[string]bool{gid(fatalOnNode): true, gid(fatalOnHost): true}
	for _, name := range []string{"tenant-member", "tenant-admin"} {
		if got := listed(w.viewer(name)); !maps.Equal(got, want) {
			t.Errorf("%s of A lists alerts %v, want the two fatal ones on its VM's node %v", name, got, want)
		}
	}
	if got := listed(w.viewer("member-other-tenant")); !maps.Equal(got, map[string]bool{gid(fatalOnB): true}) {
		t.Errorf("member of B lists alerts %v, want only the fatal one on its VM's node %s", got, gid(fatalOnB))
	}
	if got := listed(w.viewer("viewer")); len(got) != len(all) {
		t.Errorf("viewer lists %d of the %d alerts", len(got), len(all))
	}

	memberA := w.viewer("tenant-member")
	r := w.do(t, memberA, `query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": gid(warningOnNode)})
	if !onlyCode(r, "NOT_FOUND") {
		t.Errorf("member of A, node(warning on its node): want NOT_FOUND, got %s %s", r.Data, r.ErrorsString())
	}
	var one struct {
		Node *struct{ ID, Severity string }
	}
	mustData(t, w.do(t, memberA, `query($id: ID!) { node(id: $id) { ... on Alert { id severity } } }`, map[string]any{"id": gid(fatalOnNode)}), &one)
	if one.Node == nil || one.Node.ID != gid(fatalOnNode) || one.Node.Severity != "FATAL" {
		t.Errorf("member of A, node(the fatal alert on its node) = %+v", one.Node)
	}
	r = w.do(t, memberA, `query($id: ID!) { node(id: $id) { ... on Alert { id node { id } host { id } } } }`, map[string]any{"id": gid(fatalOnNode)})
	if !onlyCode(r, "FORBIDDEN") || strings.Contains(string(r.Data), gid(w.node1)) {
		t.Errorf("member of A, the fatal alert with its node: want FORBIDDEN and no node, got %s %s", r.Data, r.ErrorsString())
	}
	r = w.do(t, memberA, `mutation($id: ID!) { updateAlert(id: $id, input: {message: "closed by a tenant"}) { id } }`, map[string]any{"id": gid(fatalOnNode)})
	if len(r.Errors) == 0 {
		t.Errorf("member of A changed a fatal alert: %s", r.Data)
	}
}

// testSSHKey is a valid ed25519 public key for SSHKey rows.
const testSSHKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl test@example"
