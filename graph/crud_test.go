package graph_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/assignment"
	"github.com/virtflow/virtflow/ent/event"
	"github.com/virtflow/virtflow/ent/rolebinding"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
)

// crudCase describes how to exercise one entity with createX/updateX/deleteX mutations.
type crudCase struct {
	// create returns a minimal valid CreateXInput, building required parents through GraphQL.
	// Every non-list key is read back after the create: scalars as themselves, xID as the edge
	// x { id }.
	create func(f *fx) map[string]any
	// defaults are fields the server fills in when the input leaves them out.
	defaults map[string]any
	// where finds the created row in the list query (default: {name: input.name}).
	where func(in map[string]any) map[string]any
	// update returns an UpdateXInput changing at least one field; its keys are read back too.
	update func(f *fx) map[string]any
}

func byName(in map[string]any) map[string]any { return map[string]any{"name": in["name"]} }

func by(field string) func(map[string]any) map[string]any {
	return func(in map[string]any) map[string]any { return map[string]any{field: in[field]} }
}

func set(kv ...any) func(*fx) map[string]any {
	return func(*fx) map[string]any {
		m := map[string]any{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
}

// crudCases has an entry for every type with a createX mutation, keyed by type name;
// TestCRUDCoversEveryCreateMutation fails when one is missing.
var crudCases = map[string]crudCase{
	"Alert": {
		create: func(f *fx) map[string]any {
			return map[string]any{"name": uniq("disk-full"), "severity": "WARNING", "message": "disk / is 95% full", "hostID": f.Host()}
		},
		defaults: map[string]any{"status": "OPEN", "occurrences": 1, "closedAt": nil},
		update:   set("status", "CLOSED", "closedBy", "ops", "closedAt", "2030-01-01T10:00:00Z"),
	},
	"AvailabilityZone": {
		create: func(f *fx) map[string]any {
			return map[string]any{"name": uniq("az"), "description": "zone a", "regionID": f.Region()}
		},
		update: set("description", "zone a, renamed"),
	},
	"Cluster": {
		create: func(f *fx) map[string]any {
			region := f.Region()
			return map[string]any{"name": uniq("cluster"), "regionID": region,
				"datacenterID": f.Datacenter(map[string]any{"regionID": region}), "labels": map[string]any{"tier": "gold"}}
		},
		defaults: map[string]any{"weight": 100},
		update:   set("weight", 250, "description", "bigger"),
	},
	"ComputeNode": {
		create: func(f *fx) map[string]any {
			return map[string]any{"name": uniq("node"), "hostID": f.Host(), "clusterID": f.Cluster(), "cpuCapacity": 64, "osName": "Ubuntu"}
		},
		defaults: map[string]any{"status": "UNKNOWN", "schedulable": true, "cpuAllocated": 0, "autoCordonIntervalSeconds": 300},
		update:   set("schedulable", false, "osVersion", "24.04"),
	},
	"Datacenter": {
		create: func(f *fx) map[string]any {
			return map[string]any{"name": uniq("dc"), "regionID": f.Region(), "building": "B1", "mail": "dc-ops@example.com"}
		},
		update: set("phase", "2", "postcode", "100-0001"),
	},
	"EventRule": {
		create: func(*fx) map[string]any {
			return map[string]any{"name": uniq("rule"), "kind": "ACTION", "action": "CREATE_ALERT", "checkNamePattern": "disk-*"}
		},
		defaults: map[string]any{"priority": 100, "enabled": true, "aggregateWindowSeconds": 0},
		update:   set("priority", 10, "enabled", false, "hookURL", "https://hooks.example.com/x"),
	},
	"Check": {
		create: func(*fx) map[string]any {
			return map[string]any{"name": uniq("disk"), "command": "/usr/lib/nagios/plugins/check_disk -w 10%", "intervalSeconds": 30}
		},
		defaults: map[string]any{"timeoutSeconds": 10, "occurrences": 1, "enabled": true, "reissueDurationSeconds": 3600},
		update:   set("intervalSeconds", 120, "enabled", false),
	},
	"Silence": {
		create: func(*fx) map[string]any {
			return map[string]any{"nodePattern": uniq("node-r1") + "-*", "startsAt": "2030-01-01T00:00:00Z", "endsAt": "2030-01-02T00:00:00Z",
				"comment": "kernel update"}
		},
		where:    by("nodePattern"),
		defaults: map[string]any{"checkNamePattern": "*", "hostPattern": "*"},
		update:   set("comment", "kernel update, extended", "endsAt", "2030-01-03T00:00:00Z"),
	},
	"Flavor": {
		create: func(f *fx) map[string]any {
			return map[string]any{"name": uniq("m1-small"), "vcpus": 2, "memoryMB": 4096, "providerID": f.Provider()}
		},
		defaults: map[string]any{"cpuPolicy": "SHARED", "cpuLimitPercent": 100, "diskGB": 0, "pricePerHour": 0, "disabled": false},
		update:   set("vcpus", 4, "disabled", true, "pricePerHour", 0.25),
	},
	"Floor": {
		create: func(f *fx) map[string]any {
			return map[string]any{"name": uniq("floor"), "datacenterID": f.Datacenter(), "building": 1, "level": -1, "number": 3}
		},
		update: set("description", "machine room 3", "level", 2),
	},
	"GlobalService": {
		create: func(f *fx) map[string]any {
			return map[string]any{"name": uniq("gsvc"), "tenantID": f.Tenant(), "fqdn": "www.example.com"}
		},
		defaults: map[string]any{"mode": "GSLB", "status": "INITIALIZING"},
		update:   set("mode", "ANYCAST"),
	},
	"Host": {
		create: func(f *fx) map[string]any {
			return map[string]any{"name": uniq("host"), "serialNumber": uniq("SN"), "vendor": "Dell", "model": "R760",
				"rackID": f.Rack(), "position": 5, "height": 2, "memoryMB": 524288}
		},
		defaults: map[string]any{"kind": "SERVER", "face": "FRONT", "fullDepth": true, "lifecycle": "ACTIVE", "cpuSockets": 0},
		update:   set("lifecycle", "MAINTENANCE", "position", 7),
	},
	"HostGroup": {
		create:   func(*fx) map[string]any { return map[string]any{"name": uniq("hg"), "description": "gpu hosts"} },
		defaults: map[string]any{},
		update:   set("description", "all gpu hosts"),
	},
	"IPAddress": {
		create: func(f *fx) map[string]any {
			cidr := uniqCIDR()
			return map[string]any{"address": strings.TrimSuffix(cidr, "0/24") + "10", "networkID": f.Network(map[string]any{"cidr": cidr}),
				"dnsName": "web1.example.com"}
		},
		defaults: map[string]any{"status": "ALLOCATED"},
		where: func(in map[string]any) map[string]any {
			return map[string]any{"address": in["address"], "hasNetworkWith": []any{map[string]any{"id": in["networkID"]}}}
		},
		update: set("status", "RESERVED", "dnsName", "web2.example.com"),
	},
	"IPRange": {
		create: func(f *fx) map[string]any {
			base := strings.TrimSuffix(uniqCIDR(), "0/24")
			return map[string]any{"startAddress": base + "100", "endAddress": base + "199",
				"networkID": f.Network(map[string]any{"cidr": base + "0/24"}), "description": "DHCP pool"}
		},
		where: func(in map[string]any) map[string]any {
			return map[string]any{"startAddress": in["startAddress"], "hasNetworkWith": []any{map[string]any{"id": in["networkID"]}}}
		},
		update: set("description", "appliances"),
	},
	"Image": {
		create: func(*fx) map[string]any {
			return map[string]any{"name": uniq("noble"), "source": "https://cloud-images.example.com/noble.img", "osName": "Ubuntu"}
		},
		// A new image waits for its bytes (fetched from the URL by the worker): PENDING.
		defaults: map[string]any{"osType": "LINUX", "format": "QCOW2", "status": "PENDING", "minVcpus": 1, "minMemoryMB": 512},
		update:   set("description", "noble cloud image", "checksum", "sha256:"+strings.Repeat("ab", 32)),
	},
	"KubernetesCluster": {
		create: func(f *fx) map[string]any {
			// The cluster's API VIP comes from a SERVICE network of its region.
			region := f.Region()
			f.Network(map[string]any{"purpose": "SERVICE", "datacenterID": f.Datacenter(map[string]any{"regionID": region})})
			return map[string]any{"name": uniq("k8s"), "version": "v1.31.2", "tenantID": f.Tenant(), "regionID": region, "serviceMeshID": f.ServiceMesh(), "flavorID": f.Flavor()}
		},
		defaults: map[string]any{"status": "INITIALIZING", "schedulingMode": "SPREAD", "controlPlaneCount": 3, "workerCount": 3},
		update:   set("workerCount", 5, "version", "1.32"),
	},
	"Link": {
		create: func(f *fx) map[string]any {
			host := f.Host()
			return map[string]any{"label": uniq("cable"), "aPortID": f.Port(map[string]any{"hostID": host}),
				"bPortID": f.Port(map[string]any{"hostID": f.Host()}), "kind": "DAC"}
		},
		// lengthM is optional but not nillable: unset, it reads as 0, not null.
		defaults: map[string]any{"status": "CONNECTED", "lengthM": 0},
		where:    by("label"),
		update:   set("status", "PLANNED", "lengthM", 2.5),
	},
	"LoadBalancer": {
		create: func(f *fx) map[string]any {
			tenant := f.Tenant()
			return map[string]any{"name": uniq("lb"), "tenantID": tenant, "regionServiceID": f.RegionService(map[string]any{"tenantID": tenant})}
		},
		defaults: map[string]any{"algorithm": "ROUND_ROBIN", "status": "INITIALIZING"},
		update:   set("algorithm", "LEAST_CONNECTIONS"),
	},
	"Maintainer": {
		create: func(f *fx) map[string]any {
			return map[string]any{"name": "Jane Ops", "account": uniq("jane"), "email": "jane@example.com", "userID": f.User()}
		},
		defaults: map[string]any{"status": "ACTIVE"},
		where:    by("account"),
		update:   set("status", "INACTIVE", "name", "Jane Q. Ops"),
	},
	"MaintainerGroup": {
		create: func(f *fx) map[string]any {
			return map[string]any{"name": uniq("sre"), "adminID": f.Maintainer()}
		},
		defaults: map[string]any{"status": "ACTIVE"},
		update:   set("status", "INACTIVE", "description", "retired"),
	},
	"Maintenance": {
		create: func(*fx) map[string]any {
			return map[string]any{"title": uniq("replace PSU"), "startsAt": "2030-01-02T03:04:05Z", "endsAt": "2030-01-02T05:00:00Z"}
		},
		defaults: map[string]any{"status": "PLANNED", "automatic": false},
		where:    by("title"),
		update:   set("status", "IN_PROGRESS", "endsAt", "2030-01-02T06:30:00Z"),
	},
	"Network": {
		create: func(*fx) map[string]any {
			cidr := uniqCIDR()
			return map[string]any{"name": uniq("net"), "cidr": cidr, "vlan": 100, "gateway": strings.TrimSuffix(cidr, "0/24") + "1", "purpose": "MANAGEMENT"}
		},
		update: set("vlan", 200, "description", "mgmt"),
	},
	"NetworkZone": {
		create: func(f *fx) map[string]any {
			return map[string]any{"name": uniq("nz"), "datacenterID": f.Datacenter()}
		},
		update: set("description", "leaf pair 1"),
	},
	"Notice": {
		create: func(*fx) map[string]any {
			return map[string]any{"title": uniq("maintenance window"), "body": "tonight", "severity": "IMPORTANT"}
		},
		defaults: map[string]any{"audience": "ALL", "expiresAt": nil},
		where:    by("title"),
		update:   set("severity", "FAULT", "body", "now"),
	},
	"Port": {
		create: func(f *fx) map[string]any {
			return map[string]any{"name": uniq("eth"), "hostID": f.Host(), "mac": uniqMAC(), "speedMbps": 25000, "vlan": 10}
		},
		defaults: map[string]any{"mtu": 1500, "kind": "PHYSICAL"},
		update:   set("vlan", 20, "mtu", 9000),
	},
	"PowerZone": {
		create: func(f *fx) map[string]any {
			return map[string]any{"name": uniq("pz"), "datacenterID": f.Datacenter()}
		},
		update: set("description", "feed A"),
	},
	"Provider": {
		create: func(*fx) map[string]any {
			return map[string]any{"name": uniq("libvirt"), "kind": "VIRTUAL_MACHINE", "driver": "LIBVIRT"}
		},
		defaults: map[string]any{"supportsLiveMigration": false},
		update:   set("supportsLiveMigration", true),
	},
	"Quota": {
		create: func(f *fx) map[string]any {
			return map[string]any{"tenantID": f.Tenant(), "hostGroupID": f.HostGroup(), "vcpus": 16, "cpuPercent": 50.5}
		},
		defaults: map[string]any{"memoryMB": 0, "usedVcpus": 0},
		where: func(in map[string]any) map[string]any {
			return map[string]any{"hasTenantWith": []any{map[string]any{"id": in["tenantID"]}}}
		},
		update: set("memoryMB", 65536, "vcpus", 32),
	},
	"Rack": {
		create: func(f *fx) map[string]any {
			dc := f.Datacenter()
			return map[string]any{"name": uniq("rack"), "floorID": f.Floor(map[string]any{"datacenterID": dc}),
				"powerZoneID": f.PowerZone(map[string]any{"datacenterID": dc}), "row": "A", "position": 3}
		},
		defaults: map[string]any{"height": 42, "status": "ACTIVE"},
		update:   set("status", "RESERVED", "height", 48),
	},
	"RackZone": {
		create: func(f *fx) map[string]any {
			return map[string]any{"name": uniq("rz"), "datacenterID": f.Datacenter()}
		},
		update: set("description", "pair 1"),
	},
	"Region": {
		create:   func(*fx) map[string]any { return map[string]any{"name": uniq("tokyo"), "description": "Tokyo"} },
		defaults: map[string]any{"status": "OPEN"},
		update:   set("status", "CLOSED"),
	},
	"RegionService": {
		create: func(f *fx) map[string]any {
			return map[string]any{"name": uniq("svc"), "tenantID": f.Tenant(), "regionID": f.PlaceableRegion(), "flavorID": f.Flavor(), "replicas": 2}
		},
		defaults: map[string]any{"status": "INITIALIZING", "allowPartial": false},
		// replicas changes through scaleRegionService (placement_test.go).
		update: set("description", "web tier", "allowPartial", true),
	},
	"ServiceMesh": {
		create:   func(*fx) map[string]any { return map[string]any{"name": uniq("mesh")} },
		defaults: map[string]any{"type": "ISTIO", "status": "INITIALIZING"},
		update:   set("type", "LINKERD"),
	},
	"Tenant": {
		create:   func(*fx) map[string]any { return map[string]any{"name": uniq("acme"), "displayName": "Acme Inc."} },
		defaults: map[string]any{"status": "ACTIVE"},
		update:   set("status", "SUSPENDED", "displayName", "Acme Corp."),
	},
	"User": {
		create: func(*fx) map[string]any {
			return map[string]any{"username": uniq("alice"), "email": "alice@example.com"}
		},
		defaults: map[string]any{"status": "ACTIVE", "lastLoginAt": nil},
		where:    by("username"),
		update:   set("displayName", "Alice", "status", "DISABLED"),
	},
	"VirtualMachine": {
		create: func(f *fx) map[string]any {
			return map[string]any{"name": uniq("vm"), "tenantID": f.Tenant(), "regionID": f.PlaceableRegion(), "flavorID": f.Flavor(), "imageID": f.Image()}
		},
		defaults: map[string]any{"type": "GENERAL", "bootDevice": "DISK", "status": "INITIALIZING", "revision": 1, "maxRevisionHistory": 10},
		update:   set("description", "web server", "maxRevisionHistory", 20),
	},
	"SecurityRule": {
		create: func(f *fx) map[string]any {
			return map[string]any{"tenantID": f.Tenant(), "virtualMachineID": f.VirtualMachine(), "direction": "INGRESS",
				"protocol": "TCP", "portFrom": 443, "cidr": "10.0.0.0/8", "description": uniq("https")}
		},
		defaults: map[string]any{"action": "ALLOW", "priority": 100, "portTo": nil},
		where:    by("description"),
		update:   set("portTo", 444, "action", "DENY"),
	},
	"SSHKey": {
		create: func(f *fx) map[string]any {
			return map[string]any{"name": uniq("key"), "tenantID": f.Tenant(),
				"publicKey": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl"}
		},
		update: set("description", "deploy key"),
	},
	"Volume": {
		create: func(f *fx) map[string]any {
			return map[string]any{"name": uniq("vol"), "sizeGB": 10, "tenantID": f.Tenant()}
		},
		defaults: map[string]any{"type": "SSD", "status": "PENDING"},
		update:   set("description", "scratch space"), // size, type and pool are fixed once created (no resize yet)
	},
}

// wantFromInput turns a create or update input into the fields to read back: xID becomes the
// edge x { id }, list inputs (xIDs, addXIDs, …) are left out. Every key must be a field of typ.
func wantFromInput(t testing.TB, typ string, in map[string]any) map[string]any {
	t.Helper()
	obj := gqlSchema().Types[typ]
	want := map[string]any{}
	for k, v := range in {
		if _, isList := v.([]any); isList || strings.HasSuffix(k, "IDs") {
			continue
		}
		name := k
		if edge, ok := strings.CutSuffix(k, "ID"); ok && edge != "" {
			name, v = edge, map[string]any{"id": v}
		}
		if obj.Fields.ForName(name) == nil {
			t.Fatalf("%s has no field %s (from input %s)", typ, name, k)
		}
		want[name] = v
	}
	return want
}

func TestCRUD(t *testing.T) {
	t.Parallel()
	env, _ := newEnv(t)
	for _, typ := range slices.Sorted(maps.Keys(crudCases)) {
		c := crudCases[typ]
		t.Run(typ, func(t *testing.T) {
			f := newFx(t, env)
			in := c.create(f)
			want := wantFromInput(t, typ, in)
			maps.Copy(want, c.defaults)
			sel := selectionOf(want) + " createdAt updatedAt"

			// Create, reading the fields back from the mutation's own answer.
			var created map[string]map[string]any
			env.MustDo(t, fmt.Sprintf(`mutation($input: Create%sInput!) { create%s(input: $input) { id %s } }`, typ, typ, sel),
				map[string]any{"input": in}, &created)
			got := created["create"+typ]
			id, _ := got["id"].(string)
			if id == "" {
				t.Fatalf("create%s returned no id: %v", typ, got)
			}
			checkFields(t, "create"+typ, got, want)

			// Read it back by node(id:).
			n := f.node(id, fmt.Sprintf("__typename ... on %s { %s }", typ, sel))
			if n["__typename"] != typ {
				t.Errorf("node(%s).__typename = %v, want %s", id, n["__typename"], typ)
			}
			checkFields(t, "node", n, want)

			// Find it through the list query with a where filter.
			where := byName
			if c.where != nil {
				where = c.where
			}
			conn := list(t, env, typ, map[string]any{"where": where(in)}, "")
			if conn.TotalCount != 1 || !slices.Equal(conn.ids(), []string{id}) {
				t.Errorf("%s(where: %v): totalCount %d, ids %v; want 1, [%s]", connectionField(t, typ).Name, where(in), conn.TotalCount, conn.ids(), id)
			}

			// Update some fields and read them back.
			upd := c.update(f)
			wantUpd := wantFromInput(t, typ, upd)
			var updated map[string]map[string]any
			env.MustDo(t, fmt.Sprintf(`mutation($id: ID!, $input: Update%sInput!) { update%s(id: $id, input: $input) { id updatedAt %s } }`,
				typ, typ, selectionOf(wantUpd)), map[string]any{"id": id, "input": upd}, &updated)
			checkFields(t, "update"+typ, updated["update"+typ], wantUpd)
			n = f.node(id, fmt.Sprintf("... on %s { %s }", typ, selectionOf(wantUpd)))
			checkFields(t, "node after update", n, wantUpd)
			before, _ := time.Parse(time.RFC3339Nano, fmt.Sprint(got["updatedAt"]))
			after, _ := time.Parse(time.RFC3339Nano, fmt.Sprint(updated["update"+typ]["updatedAt"]))
			if !after.After(before) {
				t.Errorf("updatedAt did not advance on update: %v then %v", got["updatedAt"], updated["update"+typ]["updatedAt"])
			}

			// Delete it: node(id:) is then null with NOT_FOUND, the list no longer has it, and a
			// second delete is NOT_FOUND too.
			var deleted map[string]string
			env.MustDo(t, fmt.Sprintf(`mutation($id: ID!) { delete%s(id: $id) }`, typ), map[string]any{"id": id}, &deleted)
			if deleted["delete"+typ] != id {
				t.Errorf("delete%s returned %q, want %q", typ, deleted["delete"+typ], id)
			}
			r := env.Do(t, `query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": id})
			r.ExpectError(t, "NOT_FOUND", "")
			if string(r.Data) != `{"node":null}` {
				t.Errorf("node(%s) after delete: data %s, want {\"node\":null}", id, r.Data)
			}
			if conn := list(t, env, typ, map[string]any{"where": map[string]any{"id": id}}, ""); conn.TotalCount != 0 {
				t.Errorf("%s still lists the deleted row: totalCount %d", connectionField(t, typ).Name, conn.TotalCount)
			}
			f.tryDelete(typ, id).ExpectError(t, "NOT_FOUND", "")
		})
	}
}

// TestCRUDCoversEveryCreateMutation walks the schema's Mutation fields so that a new entity
// cannot be exposed without a CRUD case: every createX needs an entry in crudCases (and comes
// with updateX and deleteX), and every entry needs its createX.
func TestCRUDCoversEveryCreateMutation(t *testing.T) {
	t.Parallel()
	s := gqlSchema()
	creates := map[string]bool{}
	for _, fd := range s.Mutation.Fields {
		typ, ok := strings.CutPrefix(fd.Name, "create")
		if !ok || identityMutations[fd.Name] {
			continue
		}
		creates[typ] = true
		if _, ok := crudCases[typ]; !ok {
			t.Errorf("Mutation.%s has no entry in crudCases (graph/crud_test.go): add a CRUD case for %s", fd.Name, typ)
		}
		for _, op := range []string{"update", "delete"} {
			if s.Mutation.Fields.ForName(op+typ) == nil {
				t.Errorf("Mutation.%s exists but Mutation.%s%s does not", fd.Name, op, typ)
			}
		}
		if s.Types[typ] == nil || s.Types["Create"+typ+"Input"] == nil || s.Types["Update"+typ+"Input"] == nil {
			t.Errorf("Mutation.%s: type %s or its Create/Update inputs are missing", fd.Name, typ)
		}
	}
	for typ := range crudCases {
		if !creates[typ] {
			t.Errorf("crudCases has %s but the schema has no Mutation.create%s", typ, typ)
		}
	}
	if len(creates) < 30 {
		t.Errorf("found only %d createX mutations; is the schema walk broken?", len(creates))
	}
}

// identityMutations are domain mutations whose names look like CRUD but are not: tokens are
// made by package identity (and tested there and in authz/authztest), never through inputs.
var identityMutations = map[string]bool{"createAPIToken": true, "createJoinToken": true,
	// Snapshots and backups are taken and deleted by package provision (a record with its
	// own assignment, quota and metering), tested there and in nodeagent's end-to-end test.
	"createSnapshot": true, "deleteSnapshot": true, "createBackup": true, "deleteBackup": true,
	// An image made from a VM is a catalog Image (its CRUD case is Image's) written with an
	// assignment for the VM's node: package provision tests it, with nodeagent's real guest.
	"createImageFromVirtualMachine": true}

// readOnlyCase creates a row of a type that has no GraphQL mutations directly through the ent
// client and says how to find it and what to read back.
type readOnlyCase func(t *testing.T, c *ent.Client, f *fx) (id int, where, want map[string]any)

var readOnlyCases = map[string]readOnlyCase{
	"Snapshot": func(t *testing.T, c *ent.Client, f *fx) (int, map[string]any, map[string]any) {
		tenant := f.Tenant()
		name := uniq("snap")
		s := c.Snapshot.Create().SetName(name).SetTenantID(atoi(t, tenant)).SetSizeGB(20).SaveX(gqltest.System())
		return s.ID, map[string]any{"name": name},
			map[string]any{"name": name, "status": "PENDING", "sizeGB": 20, "tenant": map[string]any{"id": tenant}}
	},
	"Backup": func(t *testing.T, c *ent.Client, f *fx) (int, map[string]any, map[string]any) {
		tenant, region := f.Tenant(), f.Region()
		name := uniq("backup")
		b := c.Backup.Create().SetName(name).SetTenantID(atoi(t, tenant)).SetRegionID(atoi(t, region)).SetSizeGB(20).
			SetLocation("/srv/backups").SaveX(gqltest.System())
		return b.ID, map[string]any{"name": name},
			map[string]any{"name": name, "status": "PENDING", "sizeGB": 20, "location": "/srv/backups", "region": map[string]any{"id": region}}
	},
	"HookDelivery": func(t *testing.T, c *ent.Client, f *fx) (int, map[string]any, map[string]any) {
		key := uniq("rule:1:event:1")
		d := c.HookDelivery.Create().SetURL("https://hooks.example.com/x").SetIdempotencyKey(key).SetPayload("{}").
			SetAttempts(2).SetResponseStatus(500).SaveX(gqltest.System())
		return d.ID, map[string]any{"idempotencyKey": key},
			map[string]any{"idempotencyKey": key, "url": "https://hooks.example.com/x", "status": "PENDING", "attempts": 2, "responseStatus": 500}
	},
	"JoinToken": func(t *testing.T, c *ent.Client, f *fx) (int, map[string]any, map[string]any) {
		cluster := f.Cluster()
		prefix := uniq("vf_j")
		jt := c.JoinToken.Create().SetTokenHash(uniq("hash")).SetPrefix(prefix).SetNodeName("joined").
			SetClusterID(atoi(t, cluster)).SetExpiresAt(time.Now().Add(time.Hour)).SaveX(gqltest.System())
		return jt.ID, map[string]any{"prefix": prefix},
			map[string]any{"prefix": prefix, "nodeName": "joined", "usedAt": nil, "cluster": map[string]any{"id": cluster}}
	},
	"APIToken": func(t *testing.T, c *ent.Client, f *fx) (int, map[string]any, map[string]any) {
		owner := f.User()
		name := uniq("ci-token")
		tok := c.APIToken.Create().SetName(name).SetTokenHash(uniq("hash")).SetPrefix("vf_ab12").
			SetOwnerID(atoi(t, owner)).SetAllowedCidrs([]string{"10.0.0.0/8"}).SaveX(gqltest.System())
		return tok.ID, map[string]any{"name": name},
			map[string]any{"name": name, "prefix": "vf_ab12", "scope": "READ_ONLY", "allowedCidrs": []string{"10.0.0.0/8"}, "owner": map[string]any{"id": owner}}
	},
	"Assignment": func(t *testing.T, c *ent.Client, f *fx) (int, map[string]any, map[string]any) {
		node := f.ComputeNode()
		reason := uniq("waiting for image")
		a := c.Assignment.Create().SetNodeID(atoi(t, node)).SetStatusReason(reason).SetDesiredState(assignment.DesiredStateStopped).SaveX(gqltest.System())
		return a.ID, map[string]any{"statusReason": reason, "hasNodeWith": []any{map[string]any{"id": node}}},
			map[string]any{"statusReason": reason, "desiredState": "STOPPED", "status": "PENDING", "generation": 1, "node": map[string]any{"id": node}}
	},
	"AuditLog": func(t *testing.T, c *ent.Client, f *fx) (int, map[string]any, map[string]any) {
		actor := uniq("alice")
		l := c.AuditLog.Create().SetActor(actor).SetAction("createRack").SetObjectType("Rack").SetObjectID(42).SaveX(gqltest.System())
		return l.ID, map[string]any{"actor": actor},
			map[string]any{"actor": actor, "action": "createRack", "objectType": "Rack", "objectID": 42}
	},
	"Event": func(t *testing.T, c *ent.Client, f *fx) (int, map[string]any, map[string]any) {
		host := f.Host()
		check := uniq("check-disk")
		e := c.Event.Create().SetCheckName(check).SetStatus(event.StatusWarning).SetOutput("95%").SetHostID(atoi(t, host)).SaveX(gqltest.System())
		return e.ID, map[string]any{"checkName": check, "status": "WARNING"},
			map[string]any{"checkName": check, "status": "WARNING", "output": "95%", "occurrences": 1, "silenced": false, "host": map[string]any{"id": host}}
	},
	"RoleBinding": func(t *testing.T, c *ent.Client, f *fx) (int, map[string]any, map[string]any) {
		user := f.User()
		b := c.RoleBinding.Create().SetRole(rolebinding.RoleViewer).SetDomain("platform").SetUserID(atoi(t, user)).
			SaveX(gqltest.System())
		return b.ID, map[string]any{"hasUserWith": []any{map[string]any{"id": user}}},
			map[string]any{"role": "VIEWER", "domain": "platform", "user": map[string]any{"id": user}}
	},
	"UsageRecord": func(t *testing.T, c *ent.Client, f *fx) (int, map[string]any, map[string]any) {
		tenant := f.Tenant()
		name := uniq("vm")
		start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
		u := c.UsageRecord.Create().SetTenantID(atoi(t, tenant)).SetResourceType("VirtualMachine").SetResourceID(7).
			SetResourceName(name).SetStartedAt(start).SetPricePerHour(0.5).SaveX(gqltest.System())
		return u.ID, map[string]any{"resourceName": name},
			map[string]any{"resourceType": "VirtualMachine", "resourceID": 7, "resourceName": name, "startedAt": "2030-01-01T00:00:00Z",
				"pricePerHour": 0.5, "amount": 0, "tenant": map[string]any{"id": tenant}}
	},
}

// computedConnections are the Query connections that list no stored entity but what a domain
// package computes, paged forward only and tested with that package: invoices (DRAFT invoices
// are computed when read, beside the stored FINAL ones; metering and TestUsageAPI).
var computedConnections = map[string]bool{"invoices": true}

// TestEveryConnectionIsCovered lists every Query connection field: its type must have a CRUD
// case (it has mutations) or a read-only case (it has none), never both or neither.
func TestEveryConnectionIsCovered(t *testing.T) {
	t.Parallel()
	s := gqlSchema()
	n := 0
	for _, fd := range s.Query.Fields {
		typ, ok := strings.CutSuffix(fd.Type.Name(), "Connection")
		if !ok || computedConnections[fd.Name] {
			continue
		}
		n++
		for _, arg := range []string{"after", "first", "before", "last", "orderBy", "where"} {
			if fd.Arguments.ForName(arg) == nil {
				t.Errorf("Query.%s has no %s argument", fd.Name, arg)
			}
		}
		_, crud := crudCases[typ]
		_, ro := readOnlyCases[typ]
		hasCreate := s.Mutation.Fields.ForName("create"+typ) != nil && !identityMutations["create"+typ]
		switch {
		case crud && ro:
			t.Errorf("Query.%s: %s is in both crudCases and readOnlyCases", fd.Name, typ)
		case !crud && !ro:
			t.Errorf("Query.%s: %s is in neither crudCases nor readOnlyCases", fd.Name, typ)
		case ro && hasCreate:
			t.Errorf("Query.%s: %s is read-only here but the schema has create%s", fd.Name, typ, typ)
		}
		if ro {
			for _, op := range []string{"create", "update", "delete"} {
				if s.Mutation.Fields.ForName(op+typ) != nil && !identityMutations[op+typ] {
					t.Errorf("read-only %s has Mutation.%s%s", typ, op, typ)
				}
			}
		}
	}
	if n != len(crudCases)+len(readOnlyCases) {
		t.Errorf("%d connection fields, but %d CRUD and %d read-only cases", n, len(crudCases), len(readOnlyCases))
	}
}

// TestReadOnlyLists creates a row of each read-only type through the ent client and finds it
// through its connection field (with a where filter) and through node(id:).
func TestReadOnlyLists(t *testing.T) {
	t.Parallel()
	env, _ := newEnv(t)
	for _, typ := range slices.Sorted(maps.Keys(readOnlyCases)) {
		t.Run(typ, func(t *testing.T) {
			f := newFx(t, env)
			id, where, want := readOnlyCases[typ](t, env.Client, f)
			gid := gqltest.ID(id)
			conn := list(t, env, typ, map[string]any{"where": where}, selectionOf(want))
			if conn.TotalCount != 1 || !slices.Equal(conn.ids(), []string{gid}) {
				t.Fatalf("%s(where: %v): totalCount %d, ids %v; want 1, [%s]", connectionField(t, typ).Name, where, conn.TotalCount, conn.ids(), gid)
			}
			checkFields(t, connectionField(t, typ).Name, conn.Edges[0].Node, want)
			checkFields(t, "node", f.node(gid, fmt.Sprintf("... on %s { %s }", typ, selectionOf(want))), want)
			// A filter that matches nothing gives an empty page, not an error.
			empty := list(t, env, typ, map[string]any{"where": map[string]any{"and": []any{where, map[string]any{"idNEQ": gid}}}}, "")
			if empty.TotalCount != 0 || len(empty.Edges) != 0 {
				t.Errorf("filter excluding the row: totalCount %d, %d edges", empty.TotalCount, len(empty.Edges))
			}
		})
	}
}

// TestSecretsNotExposed checks that token and password hashes are not fields of the types,
// their where inputs, orders or mutation inputs, and never appear in a response.
func TestSecretsNotExposed(t *testing.T) {
	t.Parallel()
	env, f := newEnv(t)
	typeFields := func(name string) []string {
		var out struct {
			Type *struct {
				Fields      []struct{ Name string }
				InputFields []struct{ Name string }
				EnumValues  []struct{ Name string }
			} `json:"__type"`
		}
		env.MustDo(t, `query($n: String!) { __type(name: $n) { fields { name } inputFields { name } enumValues { name } } }`,
			map[string]any{"n": name}, &out)
		if out.Type == nil {
			t.Fatalf("__type(name: %q) is null", name)
		}
		var names []string
		for _, f := range out.Type.Fields {
			names = append(names, f.Name)
		}
		for _, f := range out.Type.InputFields {
			names = append(names, f.Name)
		}
		for _, f := range out.Type.EnumValues {
			names = append(names, f.Name)
		}
		return names
	}
	for _, tc := range []struct {
		typ, secret string
		mustHave    string
	}{
		{"APIToken", "tokenhash", "prefix"},
		{"APITokenWhereInput", "tokenhash", "prefix"},
		{"APITokenOrderField", "token_hash", "EXPIRES_AT"},
		{"User", "passwordhash", "username"},
		{"UserWhereInput", "passwordhash", "username"},
		{"UserOrderField", "password_hash", "USERNAME"},
		{"CreateUserInput", "password", "username"},
		{"UpdateUserInput", "password", "username"},
	} {
		t.Run(tc.typ, func(t *testing.T) {
			names := typeFields(tc.typ)
			if !slices.Contains(names, tc.mustHave) {
				t.Fatalf("%s has no %s (fields %v); is introspection working?", tc.typ, tc.mustHave, names)
			}
			for _, n := range names {
				if strings.Contains(strings.ToLower(n), tc.secret) {
					t.Errorf("%s exposes %s", tc.typ, n)
				}
			}
		})
	}
	t.Run("no hash in responses", func(t *testing.T) {
		user := f.User()
		hash := "argon2id$" + uniq("secret")
		env.Client.User.UpdateOneID(atoi(t, user)).SetPasswordHash(hash).ExecX(gqltest.System())
		env.Client.APIToken.Create().SetName(uniq("tok")).SetTokenHash(hash).SetPrefix("vf_x").SetOwnerID(atoi(t, user)).ExecX(gqltest.System())
		r := env.Do(t, `query($id: ID!) { node(id: $id) { ... on User { username apiTokens { totalCount edges { node { name prefix scope } } } } } }`,
			map[string]any{"id": user})
		if len(r.Errors) > 0 || !strings.Contains(string(r.Data), `"totalCount":1`) {
			t.Fatalf("user with token: %s %s", r.Data, r.ErrorsString())
		}
		if strings.Contains(string(r.Data), hash) {
			t.Errorf("response contains the hash: %s", r.Data)
		}
		// Filtering on the hash is impossible: the where input rejects the field (gqlgen's own
		// validation error, with gqlgen's code rather than VALIDATION).
		for _, q := range []string{
			`{ apiTokens(where: {tokenHash: "x"}) { totalCount } }`,
			`{ users(where: {passwordHash: "x"}) { totalCount } }`,
			`{ apiTokens(where: {tokenHashHasPrefix: "x"}) { totalCount } }`,
		} {
			r = env.Do(t, q, nil)
			r.ExpectError(t, "GRAPHQL_VALIDATION_FAILED", "")
		}
	})
}

// --- relations ---

func TestRelations(t *testing.T) {
	t.Parallel()
	env, f := newEnv(t)
	floor := f.Floor()
	rack := f.Rack(map[string]any{"floorID": floor})
	h1 := f.Host(map[string]any{"rackID": rack, "position": 1, "height": 2})
	h2 := f.Host(map[string]any{"rackID": rack, "position": 3})
	h3 := f.Host(map[string]any{"rackID": rack}) // in the rack, not mounted at a unit
	other := f.Host(map[string]any{"rackID": f.Rack(map[string]any{"floorID": floor}), "position": 1})

	t.Run("rack hosts", func(t *testing.T) {
		n := f.node(rack, `... on Rack { hosts(orderBy: {field: NAME}) { totalCount edges { node { id rack { id } } } } }`)
		var hosts connection
		remarshal(t, n["hosts"], &hosts)
		if hosts.TotalCount != 3 || !sameSet(hosts.ids(), []string{h1, h2, h3}) {
			t.Errorf("rack.hosts: totalCount %d, ids %v; want 3, %v", hosts.TotalCount, hosts.ids(), []string{h1, h2, h3})
		}
		// A nested page keeps the connection's totalCount.
		n = f.node(rack, `... on Rack { hosts(first: 1) { totalCount pageInfo { hasNextPage } edges { node { id } } } }`)
		remarshal(t, n["hosts"], &hosts)
		if hosts.TotalCount != 3 || len(hosts.Edges) != 1 || !hosts.PageInfo.HasNextPage {
			t.Errorf("rack.hosts(first: 1): totalCount %d, %d edges, hasNextPage %v", hosts.TotalCount, len(hosts.Edges), hosts.PageInfo.HasNextPage)
		}
		// A filtered edge: only the mounted hosts.
		n = f.node(rack, `... on Rack { hosts(where: {positionNotNil: true}) { totalCount edges { node { id } } } }`)
		remarshal(t, n["hosts"], &hosts)
		if hosts.TotalCount != 2 || !sameSet(hosts.ids(), []string{h1, h2}) {
			t.Errorf("rack.hosts(where: positionNotNil): %v", hosts.ids())
		}
	})
	t.Run("host rack", func(t *testing.T) {
		for _, h := range []string{h1, h2, h3} {
			n := f.node(h, `... on Host { rack { id floor { id } } }`)
			want := map[string]any{"rack": map[string]any{"id": rack, "floor": map[string]any{"id": floor}}}
			checkFields(t, "host "+h, n, want)
		}
		n := f.node(other, `... on Host { rack { id } }`)
		if r, _ := n["rack"].(map[string]any); r == nil || r["id"] == rack {
			t.Errorf("host in the other rack: rack = %v", n["rack"])
		}
		// The filter through the edge finds the same hosts.
		conn := list(t, env, "Host", map[string]any{"where": map[string]any{"hasRackWith": []any{map[string]any{"id": rack}}}}, "")
		if conn.TotalCount != 3 || !sameSet(conn.ids(), []string{h1, h2, h3}) {
			t.Errorf("hosts(where: hasRackWith): %v", conn.ids())
		}
	})
	t.Run("ports and addresses", func(t *testing.T) {
		cidr := uniqCIDR()
		base := strings.TrimSuffix(cidr, "0/24")
		net := f.Network(map[string]any{"cidr": cidr})
		port := f.Port(map[string]any{"hostID": h1, "networkID": net})
		ip1 := f.create("IPAddress", map[string]any{"address": base + "11", "networkID": net, "portID": port})
		ip2 := f.create("IPAddress", map[string]any{"address": base + "12", "networkID": net, "portID": port})
		f.create("IPAddress", map[string]any{"address": base + "13", "networkID": net}) // unattached

		n := f.node(port, `... on Port { host { id } network { id } ipAddresses(orderBy: {field: ADDRESS}) { totalCount edges { node { id address } } } }`)
		var ips connection
		remarshal(t, n["ipAddresses"], &ips)
		if ips.TotalCount != 2 || !slices.Equal(ips.ids(), []string{ip1, ip2}) || !slices.Equal(ips.strs("address"), []string{base + "11", base + "12"}) {
			t.Errorf("port.ipAddresses: totalCount %d, %v %v", ips.TotalCount, ips.ids(), ips.strs("address"))
		}
		checkFields(t, "port", n, map[string]any{"host": map[string]any{"id": h1}, "network": map[string]any{"id": net}})
		for _, ip := range []string{ip1, ip2} {
			checkFields(t, "ip "+ip, f.node(ip, `... on IPAddress { port { id } network { id } }`),
				map[string]any{"port": map[string]any{"id": port}, "network": map[string]any{"id": net}})
		}
		n = f.node(net, `... on Network { ipAddresses { totalCount } ports { totalCount } }`)
		checkFields(t, "network", n, map[string]any{"ipAddresses": map[string]any{"totalCount": 3}, "ports": map[string]any{"totalCount": 1}})
		n = f.node(h1, `... on Host { ports { totalCount edges { node { id } } } }`)
		checkFields(t, "host.ports", n, map[string]any{"ports": map[string]any{"totalCount": 1, "edges": []any{map[string]any{"node": map[string]any{"id": port}}}}})
	})
	t.Run("maintainers", func(t *testing.T) {
		m1, m2 := f.Maintainer(), f.Maintainer()
		f.update("Host", h1, map[string]any{"addMaintainerIDs": []string{m1, m2}})
		f.update("Rack", rack, map[string]any{"addMaintainerIDs": []string{m1}})
		countOf := func(id, typ, edge string) int {
			t.Helper()
			n := f.node(id, fmt.Sprintf(`... on %s { %s { totalCount } }`, typ, edge))
			var c connection
			remarshal(t, n[edge], &c)
			return c.TotalCount
		}
		idsOf := func(id, typ, edge string) []string {
			t.Helper()
			n := f.node(id, fmt.Sprintf(`... on %s { %s { edges { node { id } } } }`, typ, edge))
			var c connection
			remarshal(t, n[edge], &c)
			return c.ids()
		}
		if got := idsOf(h1, "Host", "maintainers"); !sameSet(got, []string{m1, m2}) {
			t.Errorf("host.maintainers = %v, want %v", got, []string{m1, m2})
		}
		if got := idsOf(rack, "Rack", "maintainers"); !sameSet(got, []string{m1}) {
			t.Errorf("rack.maintainers = %v, want [%s]", got, m1)
		}
		if got := idsOf(m1, "Maintainer", "hosts"); !sameSet(got, []string{h1}) {
			t.Errorf("maintainer1.hosts = %v", got)
		}
		if got := idsOf(m1, "Maintainer", "racks"); !sameSet(got, []string{rack}) {
			t.Errorf("maintainer1.racks = %v", got)
		}
		if c := countOf(m2, "Maintainer", "racks"); c != 0 {
			t.Errorf("maintainer2.racks totalCount = %d, want 0", c)
		}
		// The other direction works too: a maintainer takes a host.
		f.update("Maintainer", m2, map[string]any{"addHostIDs": []string{h2}})
		if got := idsOf(h2, "Host", "maintainers"); !sameSet(got, []string{m2}) {
			t.Errorf("host2.maintainers = %v", got)
		}
		// Removing from one side shows on the other.
		f.update("Host", h1, map[string]any{"removeMaintainerIDs": []string{m2}})
		if got := idsOf(m2, "Maintainer", "hosts"); !sameSet(got, []string{h2}) {
			t.Errorf("maintainer2.hosts after removal = %v, want [%s]", got, h2)
		}
		// The where filter through the M2M edge.
		conn := list(t, env, "Host", map[string]any{"where": map[string]any{"hasMaintainersWith": []any{map[string]any{"id": m1}}}}, "")
		if !sameSet(conn.ids(), []string{h1}) {
			t.Errorf("hosts(where: hasMaintainersWith m1) = %v", conn.ids())
		}
		// Deleting a maintainer drops its many-to-many associations.
		var del map[string]string
		env.MustDo(t, `mutation($id: ID!) { deleteMaintainer(id: $id) }`, map[string]any{"id": m1}, &del)
		if c := countOf(h1, "Host", "maintainers"); c != 0 {
			t.Errorf("host.maintainers after deleting the maintainer: %d", c)
		}
		if c := countOf(rack, "Rack", "maintainers"); c != 0 {
			t.Errorf("rack.maintainers after deleting the maintainer: %d", c)
		}
	})
}

func remarshal(t testing.TB, v, out any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err == nil {
		err = json.Unmarshal(b, out)
	}
	if err != nil {
		t.Fatalf("remarshal %v: %v", v, err)
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// --- pagination, ordering and filters ---

func TestPagination(t *testing.T) {
	t.Parallel()
	env, f := newEnv(t)
	floorName := uniq("pagefloor")
	floor := f.Floor(map[string]any{"name": floorName})
	prefix := uniq("pg")
	// 25 racks, created in an order (0, 7, 14, 21, 3, …) unlike their names' order; every
	// fifth one reserved.
	var createdOrder, names []string
	nameOf := map[string]string{}
	for k := range 25 {
		i := k * 7 % 25
		in := map[string]any{"name": fmt.Sprintf("%s-r%02d", prefix, i), "floorID": floor}
		if i%5 == 0 {
			in["status"] = "RESERVED"
		}
		id := f.Rack(in)
		createdOrder = append(createdOrder, id)
		nameOf[id] = in["name"].(string)
		names = append(names, in["name"].(string))
	}
	slices.Sort(names)
	// Same prefix on another floor: floor filters must leave it out.
	f.Rack(map[string]any{"name": prefix + "-r99"})
	onFloor := map[string]any{"hasFloorWith": []any{map[string]any{"name": floorName}}}
	byNameAsc := map[string]any{"field": "NAME", "direction": "ASC"}

	t.Run("forward with first and after", func(t *testing.T) {
		var got []string
		var sizes []int
		args := map[string]any{"where": onFloor, "orderBy": byNameAsc, "first": 10}
		for page := 0; ; page++ {
			if page > 5 {
				t.Fatal("more than 5 pages of 10 for 25 racks")
			}
			c := list(t, env, "Rack", args, "name")
			if c.TotalCount != 25 {
				t.Errorf("page %d: totalCount %d, want 25", page, c.TotalCount)
			}
			if page > 0 && !c.PageInfo.HasPreviousPage {
				// entgql reports hasPreviousPage for pages after a cursor.
				t.Errorf("page %d: hasPreviousPage false", page)
			}
			got = append(got, c.strs("name")...)
			sizes = append(sizes, len(c.Edges))
			if len(c.Edges) > 0 && (c.PageInfo.StartCursor != c.Edges[0].Cursor || c.PageInfo.EndCursor != c.Edges[len(c.Edges)-1].Cursor) {
				t.Errorf("page %d: start/end cursors do not match the edges", page)
			}
			if !c.PageInfo.HasNextPage {
				break
			}
			args["after"] = c.PageInfo.EndCursor
		}
		if !slices.Equal(sizes, []int{10, 10, 5}) {
			t.Errorf("page sizes %v, want [10 10 5]", sizes)
		}
		if !slices.Equal(got, names) {
			t.Errorf("paged names\n%v\nwant each exactly once in order\n%v", got, names)
		}
	})
	t.Run("backward with last and before", func(t *testing.T) {
		var pages [][]string
		args := map[string]any{"where": onFloor, "orderBy": byNameAsc, "last": 10}
		for page := 0; ; page++ {
			if page > 5 {
				t.Fatal("more than 5 pages of 10 for 25 racks")
			}
			c := list(t, env, "Rack", args, "name")
			if c.TotalCount != 25 {
				t.Errorf("page %d: totalCount %d, want 25", page, c.TotalCount)
			}
			if page > 0 && !c.PageInfo.HasNextPage {
				t.Errorf("page %d: hasNextPage false before a cursor", page)
			}
			pages = append(pages, c.strs("name"))
			if !c.PageInfo.HasPreviousPage {
				break
			}
			args["before"] = c.PageInfo.StartCursor
		}
		var got []string
		var sizes []int
		for i := len(pages) - 1; i >= 0; i-- { // pages come last-first, each in ascending order
			got = append(got, pages[i]...)
			sizes = append(sizes, len(pages[i]))
		}
		if !slices.Equal(sizes, []int{5, 10, 10}) {
			t.Errorf("page sizes (first to last) %v, want [5 10 10]", sizes)
		}
		if !slices.Equal(got, names) {
			t.Errorf("paged names\n%v\nwant\n%v", got, names)
		}
	})
	t.Run("orders", func(t *testing.T) {
		desc := slices.Clone(names)
		slices.Reverse(desc)
		var created, createdDesc []string
		for _, id := range createdOrder {
			created = append(created, nameOf[id])
		}
		createdDesc = slices.Clone(created)
		slices.Reverse(createdDesc)
		for _, tc := range []struct {
			name    string
			orderBy any
			want    []string
		}{
			{"NAME ASC", byNameAsc, names},
			{"NAME DESC", map[string]any{"field": "NAME", "direction": "DESC"}, desc},
			{"CREATED_AT ASC", map[string]any{"field": "CREATED_AT", "direction": "ASC"}, created},
			{"CREATED_AT DESC", map[string]any{"field": "CREATED_AT", "direction": "DESC"}, createdDesc},
			{"direction defaults to ASC", map[string]any{"field": "NAME"}, names},
			{"no orderBy: by id", nil, created},
		} {
			t.Run(tc.name, func(t *testing.T) {
				c := list(t, env, "Rack", map[string]any{"where": onFloor, "orderBy": tc.orderBy, "first": 25}, "name")
				if got := c.strs("name"); !slices.Equal(got, tc.want) {
					t.Errorf("got\n%v\nwant\n%v", got, tc.want)
				}
				// The same order holds across pages of 7.
				var paged []string
				args := map[string]any{"where": onFloor, "orderBy": tc.orderBy, "first": 7}
				for range 5 {
					c := list(t, env, "Rack", args, "name")
					paged = append(paged, c.strs("name")...)
					if !c.PageInfo.HasNextPage {
						break
					}
					args["after"] = c.PageInfo.EndCursor
				}
				if !slices.Equal(paged, tc.want) {
					t.Errorf("paged by 7:\n%v\nwant\n%v", paged, tc.want)
				}
			})
		}
	})
	t.Run("filters", func(t *testing.T) {
		reserved := []string{}
		for _, n := range names {
			var i int
			fmt.Sscanf(strings.TrimPrefix(n, prefix+"-r"), "%d", &i)
			if i%5 == 0 {
				reserved = append(reserved, n)
			}
		}
		for _, tc := range []struct {
			name  string
			where map[string]any
			want  []string
		}{
			{"hasFloorWith name", onFloor, names},
			{"nameHasPrefix", map[string]any{"nameHasPrefix": prefix + "-r1"}, names[10:20]},
			{"nameHasPrefix across floors", map[string]any{"nameHasPrefix": prefix + "-r"}, append(slices.Clone(names), prefix+"-r99")},
			{"status", map[string]any{"status": "RESERVED", "nameHasPrefix": prefix}, reserved},
			{"status and floor", map[string]any{"and": []any{onFloor, map[string]any{"status": "RESERVED"}}}, reserved},
			{"statusIn", map[string]any{"statusIn": []string{"ACTIVE"}, "hasFloorWith": onFloor["hasFloorWith"], "nameHasPrefix": prefix + "-r2"}, names[21:25]},
			{"or", map[string]any{"or": []any{map[string]any{"name": names[1]}, map[string]any{"name": names[2]}}}, names[1:3]},
			{"not", map[string]any{"nameHasPrefix": prefix, "not": onFloor}, []string{prefix + "-r99"}},
			{"no such floor", map[string]any{"hasFloorWith": []any{map[string]any{"name": uniq("nowhere")}}}, []string{}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				c := list(t, env, "Rack", map[string]any{"where": tc.where, "orderBy": byNameAsc, "first": 100}, "name")
				if c.TotalCount != len(tc.want) || !slices.Equal(c.strs("name"), tc.want) {
					t.Errorf("totalCount %d, names %v; want %d, %v", c.TotalCount, c.strs("name"), len(tc.want), tc.want)
				}
			})
		}
		// A filtered list pages with the filtered totalCount.
		c := list(t, env, "Rack", map[string]any{"where": map[string]any{"status": "RESERVED", "hasFloorWith": onFloor["hasFloorWith"]}, "orderBy": byNameAsc, "first": 2}, "name")
		if c.TotalCount != 5 || !slices.Equal(c.strs("name"), reserved[:2]) || !c.PageInfo.HasNextPage {
			t.Errorf("reserved, first 2: totalCount %d, %v, hasNextPage %v", c.TotalCount, c.strs("name"), c.PageInfo.HasNextPage)
		}
	})
	t.Run("page size limits", func(t *testing.T) {
		c := list(t, env, "Rack", map[string]any{"where": onFloor, "first": 0}, "")
		if c.TotalCount != 25 || len(c.Edges) != 0 {
			t.Errorf("first: 0: totalCount %d, %d edges; want 25, 0", c.TotalCount, len(c.Edges))
		}
		for _, tc := range []struct {
			arg string
			n   int
		}{{"first", 1001}, {"last", 1001}, {"first", -1}, {"last", -1}} {
			r := env.Do(t, fmt.Sprintf(`{ racks(%s: %d) { totalCount } }`, tc.arg, tc.n), nil)
			r.ExpectError(t, "VALIDATION", tc.arg)
		}
	})
	t.Run("nested connection", func(t *testing.T) {
		n := f.node(floor, `... on Floor { racks(first: 10, orderBy: {field: NAME, direction: DESC}) { totalCount pageInfo { hasNextPage endCursor } edges { node { name } } } }`)
		var racks connection
		remarshal(t, n["racks"], &racks)
		desc := slices.Clone(names)
		slices.Reverse(desc)
		if racks.TotalCount != 25 || !slices.Equal(racks.strs("name"), desc[:10]) || !racks.PageInfo.HasNextPage {
			t.Errorf("floor.racks(first: 10, NAME DESC): totalCount %d, %v", racks.TotalCount, racks.strs("name"))
		}
		var out struct{ Node map[string]any }
		env.MustDo(t, `query($id: ID!, $after: Cursor) { node(id: $id) { ... on Floor { racks(first: 10, after: $after, orderBy: {field: NAME, direction: DESC}) { totalCount edges { node { name } } } } } }`,
			map[string]any{"id": floor, "after": racks.PageInfo.EndCursor}, &out)
		remarshal(t, out.Node["racks"], &racks)
		if racks.TotalCount != 25 || !slices.Equal(racks.strs("name"), desc[10:20]) {
			t.Errorf("floor.racks second page: totalCount %d, %v, want %v", racks.TotalCount, racks.strs("name"), desc[10:20])
		}
	})
}

// --- errors ---

func TestUniqueConflicts(t *testing.T) {
	t.Parallel()
	env, f := newEnv(t)
	t.Run("rack name per floor", func(t *testing.T) {
		floor, other := f.Floor(), f.Floor()
		first := f.Rack(map[string]any{"name": "r01", "floorID": floor})
		e := f.tryCreate("Rack", map[string]any{"name": "r01", "floorID": floor}).ExpectError(t, "CONFLICT", "name")
		if !jsonEqual(e.Extensions["fields"], []string{"name", "floorID"}) {
			t.Errorf("extensions.fields = %v, want [name floorID]", e.Extensions["fields"])
		}
		if strings.Contains(e.Message, "racks") || strings.Contains(e.Message, "duplicate key") {
			t.Errorf("message leaks the database error: %q", e.Message)
		}
		// The same name on another floor is fine.
		f.Rack(map[string]any{"name": "r01", "floorID": other})
		// Renaming into the clash is refused too, and the rack keeps its name.
		second := f.Rack(map[string]any{"name": "r02", "floorID": floor})
		f.tryUpdate("Rack", second, map[string]any{"name": "r01"}).ExpectError(t, "CONFLICT", "name")
		checkFields(t, "rack after refused rename", f.node(second, `... on Rack { name }`), map[string]any{"name": "r02"})
		// Moving the other floor's r01 onto this floor clashes as well.
		c := list(t, env, "Rack", map[string]any{"where": map[string]any{"name": "r01", "hasFloorWith": []any{map[string]any{"id": other}}}}, "")
		if len(c.Edges) != 1 {
			t.Fatalf("r01 on the other floor: %v", c.ids())
		}
		f.tryUpdate("Rack", c.ids()[0], map[string]any{"floorID": floor}).ExpectError(t, "CONFLICT", "name")
		if c := list(t, env, "Rack", map[string]any{"where": map[string]any{"name": "r01", "hasFloorWith": []any{map[string]any{"id": floor}}}}, ""); !slices.Equal(c.ids(), []string{first}) {
			t.Errorf("racks named r01 on the floor: %v, want only %s", c.ids(), first)
		}
	})
	for _, tc := range []struct {
		name   string
		typ    string
		input  func(key string) map[string]any // the same key twice must clash
		key    func() string
		field  string
		fields []string
	}{
		{"region name", "Region", func(k string) map[string]any { return map[string]any{"name": k} }, func() string { return uniq("dup") },
			"name", []string{"name"}},
		{"host serial number", "Host", func(k string) map[string]any {
			return map[string]any{"name": uniq("host"), "serialNumber": k}
		}, func() string { return uniq("SN") }, "serialNumber", []string{"serialNumber"}},
		{"port MAC", "Port", func(k string) map[string]any {
			return map[string]any{"name": "eth0", "hostID": f.Host(), "mac": k}
		}, uniqMAC, "mac", []string{"mac"}},
		{"user name", "User", func(k string) map[string]any { return map[string]any{"username": k} }, func() string { return uniq("dup.user") },
			"username", []string{"username"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := tc.key()
			f.create(tc.typ, tc.input(key))
			e := f.tryCreate(tc.typ, tc.input(key)).ExpectError(t, "CONFLICT", tc.field)
			if !jsonEqual(e.Extensions["fields"], tc.fields) {
				t.Errorf("extensions.fields = %v, want %v", e.Extensions["fields"], tc.fields)
			}
		})
	}
	t.Run("quota per tenant and host group", func(t *testing.T) {
		tenant, hg := f.Tenant(), f.HostGroup()
		f.create("Quota", map[string]any{"tenantID": tenant, "hostGroupID": hg})
		e := f.tryCreate("Quota", map[string]any{"tenantID": tenant, "hostGroupID": hg}).ExpectError(t, "CONFLICT", "tenantID")
		if !jsonEqual(e.Extensions["fields"], []string{"tenantID", "hostGroupID"}) {
			t.Errorf("extensions.fields = %v", e.Extensions["fields"])
		}
		f.create("Quota", map[string]any{"tenantID": tenant, "hostGroupID": f.HostGroup()})
	})
	t.Run("address per network", func(t *testing.T) {
		n1 := f.Network(map[string]any{"cidr": "172.16.0.0/24"})
		n2 := f.Network(map[string]any{"cidr": "172.16.0.0/24"})
		f.create("IPAddress", map[string]any{"address": "172.16.0.5", "networkID": n1})
		f.tryCreate("IPAddress", map[string]any{"address": "172.16.0.5", "networkID": n1}).ExpectError(t, "CONFLICT", "address")
		f.create("IPAddress", map[string]any{"address": "172.16.0.5", "networkID": n2})
	})
}

func TestValidationErrors(t *testing.T) {
	t.Parallel()
	_, f := newEnv(t)
	net := func(cidr string) func() string {
		return func() string { return f.Network(map[string]any{"cidr": cidr}) }
	}
	for _, tc := range []struct {
		name  string
		typ   string
		input func() map[string]any
		field string
	}{
		{"empty name", "Region", func() map[string]any { return map[string]any{"name": ""} }, "name"},
		{"slug with a space", "Region", func() map[string]any { return map[string]any{"name": "Tokyo 1"} }, "name"},
		{"slug with upper case", "Floor", func() map[string]any { return map[string]any{"name": "Floor-1", "datacenterID": f.Datacenter()} }, "name"},
		{"slug ending in a dash", "Rack", func() map[string]any { return map[string]any{"name": "rack-", "floorID": f.Floor()} }, "name"},
		{"name of 129 characters", "Region", func() map[string]any { return map[string]any{"name": strings.Repeat("a", 129)} }, "name"},
		{"rack height 0", "Rack", func() map[string]any { return map[string]any{"name": uniq("rack"), "floorID": f.Floor(), "height": 0} }, "height"},
		{"rack height 61", "Rack", func() map[string]any { return map[string]any{"name": uniq("rack"), "floorID": f.Floor(), "height": 61} }, "height"},
		{"port vlan 5000", "Port", func() map[string]any { return map[string]any{"name": "eth0", "hostID": f.Host(), "vlan": 5000} }, "vlan"},
		{"port vlan 0", "Port", func() map[string]any { return map[string]any{"name": "eth0", "hostID": f.Host(), "vlan": 0} }, "vlan"},
		{"port mtu 100", "Port", func() map[string]any { return map[string]any{"name": "eth0", "hostID": f.Host(), "mtu": 100} }, "mtu"},
		{"upper-case MAC", "Port", func() map[string]any { return map[string]any{"name": "eth0", "mac": "AA:BB:CC:DD:EE:FF"} }, "mac"},
		{"short MAC", "Port", func() map[string]any { return map[string]any{"name": "eth0", "mac": "aa:bb:cc:dd:ee"} }, "mac"},
		{"dashed MAC", "Port", func() map[string]any { return map[string]any{"name": "eth0", "mac": "aa-bb-cc-dd-ee-ff"} }, "mac"},
		{"not a MAC", "Port", func() map[string]any { return map[string]any{"name": "eth0", "mac": "banana"} }, "mac"},
		{"CIDR /33", "Network", func() map[string]any { return map[string]any{"name": uniq("net"), "cidr": "10.0.0.0/33"} }, "cidr"},
		{"CIDR with host bits", "Network", func() map[string]any { return map[string]any{"name": uniq("net"), "cidr": "10.0.0.1/24"} }, "cidr"},
		{"CIDR without length", "Network", func() map[string]any { return map[string]any{"name": uniq("net"), "cidr": "10.0.0.0"} }, "cidr"},
		{"gateway outside the prefix", "Network", func() map[string]any {
			return map[string]any{"name": uniq("net"), "cidr": "10.0.0.0/24", "gateway": "10.0.1.1"}
		}, "gateway"},
		{"gateway is the network address", "Network", func() map[string]any {
			return map[string]any{"name": uniq("net"), "cidr": "10.0.0.0/24", "gateway": "10.0.0.0"}
		}, "gateway"},
		{"gateway is the broadcast address", "Network", func() map[string]any {
			return map[string]any{"name": uniq("net"), "cidr": "10.0.0.0/24", "gateway": "10.0.0.255"}
		}, "gateway"},
		{"gateway not an address", "Network", func() map[string]any {
			return map[string]any{"name": uniq("net"), "cidr": "10.0.0.0/24", "gateway": "gw1"}
		}, "gateway"},
		{"network vlan 4095", "Network", func() map[string]any { return map[string]any{"name": uniq("net"), "cidr": "10.0.0.0/24", "vlan": 4095} }, "vlan"},
		{"address outside its network", "IPAddress", func() map[string]any {
			return map[string]any{"address": "192.168.1.10", "networkID": net("192.168.0.0/24")()}
		}, "address"},
		{"network address", "IPAddress", func() map[string]any {
			return map[string]any{"address": "192.168.0.0", "networkID": net("192.168.0.0/24")()}
		}, "address"},
		{"broadcast address", "IPAddress", func() map[string]any {
			return map[string]any{"address": "192.168.0.255", "networkID": net("192.168.0.0/24")()}
		}, "address"},
		{"not an address", "IPAddress", func() map[string]any {
			return map[string]any{"address": "192.168.0.300", "networkID": net("192.168.0.0/24")()}
		}, "address"},
		{"IPv6 address in an IPv4 network", "IPAddress", func() map[string]any {
			return map[string]any{"address": "2001:db8::1", "networkID": net("192.168.0.0/24")()}
		}, "address"},
		{"bad e-mail", "Datacenter", func() map[string]any {
			return map[string]any{"name": uniq("dc"), "regionID": f.Region(), "mail": "ops at example"}
		}, "mail"},
		{"maintenance ends before it starts", "Maintenance", func() map[string]any {
			return map[string]any{"title": "x", "startsAt": "2030-01-02T00:00:00Z", "endsAt": "2030-01-01T00:00:00Z"}
		}, "endsAt"},
		{"tenant notice without a tenant", "Notice", func() map[string]any { return map[string]any{"title": "x", "audience": "TENANT"} }, "tenantID"},
		{"kubernetes version", "KubernetesCluster", func() map[string]any {
			return map[string]any{"name": uniq("k8s"), "version": "latest", "tenantID": f.Tenant(), "regionID": f.Region()}
		}, "version"},
		{"flavor with 0 vCPUs", "Flavor", func() map[string]any { return map[string]any{"name": uniq("fl"), "vcpus": 0, "memoryMB": 1024} }, "vcpus"},
		{"host at unit 0", "Host", func() map[string]any { return map[string]any{"name": uniq("host"), "position": 0} }, "position"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := f.tryCreate(tc.typ, tc.input()).ExpectError(t, "VALIDATION", tc.field)
			if !strings.HasPrefix(e.Message, tc.field+": ") {
				t.Errorf("message %q does not start with the field", e.Message)
			}
		})
	}
	t.Run("updates", func(t *testing.T) {
		rack := f.Rack()
		f.tryUpdate("Rack", rack, map[string]any{"height": 0}).ExpectError(t, "VALIDATION", "height")
		checkFields(t, "rack", f.node(rack, `... on Rack { height }`), map[string]any{"height": 42})

		network := f.Network(map[string]any{"cidr": "10.20.0.0/24", "gateway": "10.20.0.1"})
		f.tryUpdate("Network", network, map[string]any{"gateway": "10.21.0.1"}).ExpectError(t, "VALIDATION", "gateway")
		// A new prefix must still hold the gateway…
		f.tryUpdate("Network", network, map[string]any{"cidr": "10.30.0.0/24"}).ExpectError(t, "VALIDATION", "gateway")
		f.create("IPAddress", map[string]any{"address": "10.20.0.200", "networkID": network})
		// …and every address of the network.
		f.tryUpdate("Network", network, map[string]any{"cidr": "10.20.0.0/25"}).ExpectError(t, "VALIDATION", "cidr")
		// Clearing the gateway and moving to a prefix that holds the addresses works.
		f.update("Network", network, map[string]any{"cidr": "10.20.0.0/16", "clearGateway": true})
		checkFields(t, "network", f.node(network, `... on Network { cidr gateway }`), map[string]any{"cidr": "10.20.0.0/16", "gateway": ""})

		ip := f.create("IPAddress", map[string]any{"address": "10.20.0.7", "networkID": network})
		f.tryUpdate("IPAddress", ip, map[string]any{"address": "10.20.255.255"}).ExpectError(t, "VALIDATION", "address")
		f.tryUpdate("IPAddress", ip, map[string]any{"networkID": f.Network(map[string]any{"cidr": "10.99.0.0/24"})}).ExpectError(t, "VALIDATION", "address")
		checkFields(t, "ip", f.node(ip, `... on IPAddress { address network { id } }`), map[string]any{"address": "10.20.0.7", "network": map[string]any{"id": network}})

		port := f.Port()
		f.tryUpdate("Port", port, map[string]any{"vlan": 5000}).ExpectError(t, "VALIDATION", "vlan")
		f.tryUpdate("Port", port, map[string]any{"mac": "zz:zz:zz:zz:zz:zz"}).ExpectError(t, "VALIDATION", "mac")
	})
	t.Run("addresses are stored in canonical form", func(t *testing.T) {
		network := f.Network(map[string]any{"cidr": "2001:db8:1::/64"})
		ip := f.create("IPAddress", map[string]any{"address": "2001:DB8:1:0:0:0:0:A", "networkID": network})
		checkFields(t, "ip", f.node(ip, `... on IPAddress { address }`), map[string]any{"address": "2001:db8:1::a"})
	})
}

// TestRackPlacement walks one rack through a sequence of placements: each step either succeeds
// or fails with VALIDATION on position, and failed steps leave nothing behind.
func TestRackPlacement(t *testing.T) {
	t.Parallel()
	env, f := newEnv(t)
	rack := f.Rack() // 42U
	small := f.Rack(map[string]any{"height": 10})
	type step struct {
		name string
		rack string
		in   map[string]any
		ok   bool
	}
	placed := map[string][]string{} // rack → names of the hosts placed on it
	run := func(t *testing.T, steps []step) {
		for _, s := range steps {
			t.Run(s.name, func(t *testing.T) {
				in := map[string]any{"name": uniq("dev"), "rackID": s.rack}
				maps.Copy(in, s.in)
				r := f.tryCreate("Host", in)
				if s.ok {
					if len(r.Errors) > 0 {
						t.Fatalf("refused: %s", r.ErrorsString())
					}
					placed[s.rack] = append(placed[s.rack], in["name"].(string))
					return
				}
				e := r.ExpectError(t, "VALIDATION", "position")
				if !strings.Contains(e.Message, "overlaps") && !strings.Contains(e.Message, "does not fit") {
					t.Errorf("message %q says neither overlaps nor does not fit", e.Message)
				}
			})
		}
	}
	half := func(face string, pos, height int) map[string]any {
		return map[string]any{"position": pos, "height": height, "face": face, "fullDepth": false}
	}
	full := func(pos, height int) map[string]any { return map[string]any{"position": pos, "height": height} }
	t.Run("full depth", func(t *testing.T) {
		run(t, []step{
			{"U10 2U", rack, full(10, 2), true},
			{"U11 overlaps the top unit", rack, full(11, 1), false},
			{"U9 2U overlaps the bottom unit", rack, full(9, 2), false},
			{"U8 4U covers it", rack, full(8, 4), false},
			{"U12 just above", rack, full(12, 1), true},
			{"U8 2U just below", rack, full(8, 2), true},
			{"rear half depth at U10 hits the full-depth device", rack, half("REAR", 10, 1), false},
		})
	})
	t.Run("half depth", func(t *testing.T) {
		run(t, []step{
			{"front half depth U20", rack, half("FRONT", 20, 1), true},
			{"rear half depth U20", rack, half("REAR", 20, 1), true},
			{"full depth U20", rack, full(20, 1), false},
			{"second front half depth U20", rack, half("FRONT", 20, 1), false},
			{"rear half depth U19 2U", rack, half("REAR", 19, 2), false},
			{"rear half depth U21", rack, half("REAR", 21, 1), true},
			{"front half depth U21 2U", rack, half("FRONT", 21, 2), true},
			{"full depth U22", rack, full(22, 1), false},
		})
	})
	t.Run("rack height", func(t *testing.T) {
		run(t, []step{
			{"U41 2U reaches the top", rack, full(41, 2), true},
			{"U42 2U sticks out", f.Rack(), full(42, 2), false},
			{"U43 is above a 42U rack", f.Rack(), full(43, 1), false},
			{"U10 fits a 10U rack", small, full(10, 1), true},
			{"U11 is above a 10U rack", small, full(11, 1), false},
			{"U9 2U sticks out of a 10U rack", small, full(8, 3), false},
		})
	})
	t.Run("nothing left behind", func(t *testing.T) {
		for r, want := range placed {
			c := list(t, env, "Host", map[string]any{"where": map[string]any{"hasRackWith": []any{map[string]any{"id": r}}}, "first": 100}, "name")
			if !sameSet(c.strs("name"), want) {
				t.Errorf("rack %s holds %v, want %v", r, c.strs("name"), want)
			}
		}
	})
	t.Run("updates", func(t *testing.T) {
		r := f.Rack()
		a := f.Host(map[string]any{"rackID": r, "position": 10, "height": 2})
		b := f.Host(map[string]any{"rackID": r, "position": 12})
		front := f.Host(map[string]any{"rackID": r, "position": 30, "face": "FRONT", "fullDepth": false})
		f.Host(map[string]any{"rackID": r, "position": 30, "face": "REAR", "fullDepth": false})
		// Re-saving a host's own units is not an overlap with itself.
		f.update("Host", a, map[string]any{"position": 10, "height": 2})
		f.tryUpdate("Host", b, map[string]any{"position": 11}).ExpectError(t, "VALIDATION", "position")
		f.tryUpdate("Host", a, map[string]any{"height": 3}).ExpectError(t, "VALIDATION", "position")
		f.tryUpdate("Host", front, map[string]any{"face": "REAR"}).ExpectError(t, "VALIDATION", "position")
		f.tryUpdate("Host", front, map[string]any{"fullDepth": true}).ExpectError(t, "VALIDATION", "position")
		f.tryUpdate("Host", b, map[string]any{"position": 42, "height": 2}).ExpectError(t, "VALIDATION", "position")
		// Mounting an unmounted host by setting its rack checks its units too.
		loose := f.Host(map[string]any{"position": 11})
		f.tryUpdate("Host", loose, map[string]any{"rackID": r}).ExpectError(t, "VALIDATION", "position")
		f.update("Host", loose, map[string]any{"rackID": r, "position": 13})
		// Moving a host up into free units works, and the old units are free again.
		f.update("Host", a, map[string]any{"position": 1})
		f.update("Host", b, map[string]any{"position": 10, "height": 2})
		checkFields(t, "moved host", f.node(b, `... on Host { position height rack { id } }`),
			map[string]any{"position": 10, "height": 2, "rack": map[string]any{"id": r}})
	})
}

func TestCables(t *testing.T) {
	t.Parallel()
	_, f := newEnv(t)
	host := f.Host()
	p := make([]string, 6)
	for i := range p {
		p[i] = f.Port(map[string]any{"hostID": host, "name": fmt.Sprintf("eth%d", i)})
	}
	link := func(a, b string) map[string]any { return map[string]any{"aPortID": a, "bPortID": b} }
	f.tryCreate("Link", link(p[0], p[0])).ExpectError(t, "VALIDATION", "bPortID")
	l1 := f.create("Link", link(p[0], p[1]))
	for _, tc := range []struct {
		name  string
		a, b  string
		field string
	}{
		{"A end already an A end", p[0], p[2], "aPortID"},
		{"A end already a B end", p[1], p[2], "aPortID"},
		{"B end already an A end", p[2], p[0], "bPortID"},
		{"B end already a B end", p[2], p[1], "bPortID"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := f.tryCreate("Link", link(tc.a, tc.b)).ExpectError(t, "VALIDATION", tc.field)
			if !strings.Contains(e.Message, "already the end of cable") {
				t.Errorf("message %q", e.Message)
			}
		})
	}
	t.Run("both ends in use", func(t *testing.T) {
		// Which end is named is not specified; it must be one of them.
		e := f.tryCreate("Link", link(p[1], p[0])).ExpectError(t, "VALIDATION", "")
		if e.Field() != "aPortID" && e.Field() != "bPortID" {
			t.Errorf("field %q, want aPortID or bPortID", e.Field())
		}
	})
	t.Run("updates", func(t *testing.T) {
		l2 := f.create("Link", link(p[2], p[3]))
		f.tryUpdate("Link", l2, map[string]any{"bPortID": p[2]}).ExpectError(t, "VALIDATION", "bPortID")
		f.tryUpdate("Link", l2, map[string]any{"aPortID": p[3]}).ExpectError(t, "VALIDATION", "bPortID")
		f.tryUpdate("Link", l2, map[string]any{"bPortID": p[0]}).ExpectError(t, "VALIDATION", "bPortID")
		// Re-saving the same ends is not a clash with itself; moving an end to a free port works.
		f.update("Link", l2, map[string]any{"aPortID": p[2], "bPortID": p[3]})
		f.update("Link", l2, map[string]any{"bPortID": p[4]})
		checkFields(t, "link", f.node(l2, `... on Link { aPort { id } bPort { id } }`),
			map[string]any{"aPort": map[string]any{"id": p[2]}, "bPort": map[string]any{"id": p[4]}})
		checkFields(t, "freed port", f.node(p[3], `... on Port { linkA { id } linkB { id } }`), map[string]any{"linkA": nil, "linkB": nil})
		checkFields(t, "port", f.node(p[4], `... on Port { linkB { id } }`), map[string]any{"linkB": map[string]any{"id": l2}})
		// A freed port can take a new cable.
		f.create("Link", link(p[3], p[5]))
	})
	t.Run("a cabled port cannot be deleted", func(t *testing.T) {
		e := f.tryDelete("Port", p[0]).ExpectError(t, "CONFLICT", "")
		if !jsonEqual(e.Extensions["dependents"], []map[string]any{{"edge": "linkA", "count": 1}}) {
			t.Errorf("dependents = %v", e.Extensions["dependents"])
		}
		var out map[string]string
		f.env.MustDo(t, `mutation($id: ID!) { deleteLink(id: $id) }`, map[string]any{"id": l1}, &out)
		f.env.MustDo(t, `mutation($id: ID!) { deletePort(id: $id) }`, map[string]any{"id": p[0]}, &out)
	})
}

// TestMissingParents: a reference to a record that does not exist, or to a record of another
// type, is the client's mistake: VALIDATION naming the field, never INTERNAL.
func TestMissingParents(t *testing.T) {
	t.Parallel()
	_, f := newEnv(t)
	gone := f.Floor()
	if r := f.tryDelete("Floor", gone); len(r.Errors) > 0 {
		t.Fatal(r.ErrorsString())
	}
	goneRack := f.Rack()
	if r := f.tryDelete("Rack", goneRack); len(r.Errors) > 0 {
		t.Fatal(r.ErrorsString())
	}
	region := f.Region()
	rack := f.Rack()
	for _, tc := range []struct {
		name  string
		do    func() gqltest.Response
		field string
	}{
		{"deleted floor", func() gqltest.Response {
			return f.tryCreate("Rack", map[string]any{"name": uniq("rack"), "floorID": gone})
		}, "floorID"},
		{"id never used", func() gqltest.Response {
			return f.tryCreate("Rack", map[string]any{"name": uniq("rack"), "floorID": "999999999"})
		}, "floorID"},
		{"id of a region as floorID", func() gqltest.Response {
			return f.tryCreate("Rack", map[string]any{"name": uniq("rack"), "floorID": region})
		}, "floorID"},
		{"update to a deleted floor", func() gqltest.Response {
			return f.tryUpdate("Rack", rack, map[string]any{"floorID": gone})
		}, "floorID"},
		{"host in a deleted rack, mounted", func() gqltest.Response {
			return f.tryCreate("Host", map[string]any{"name": uniq("host"), "rackID": goneRack, "position": 1})
		}, "rackID"},
		{"host in a deleted rack, unmounted", func() gqltest.Response {
			return f.tryCreate("Host", map[string]any{"name": uniq("host"), "rackID": goneRack})
		}, "rackID"},
		{"address in a missing network", func() gqltest.Response {
			return f.tryCreate("IPAddress", map[string]any{"address": "10.0.0.1", "networkID": region})
		}, "networkID"},
		{"cable to a missing port", func() gqltest.Response {
			return f.tryCreate("Link", map[string]any{"aPortID": f.Port(), "bPortID": "999999999"})
		}, "bPortID"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.do().ExpectError(t, "VALIDATION", tc.field)
		})
	}
	t.Run("missing record itself", func(t *testing.T) {
		f.tryUpdate("Rack", gone, map[string]any{"description": "x"}).ExpectError(t, "NOT_FOUND", "")
		f.tryDelete("Rack", goneRack).ExpectError(t, "NOT_FOUND", "")
		f.tryUpdate("Rack", region, map[string]any{"description": "x"}).ExpectError(t, "NOT_FOUND", "")
		var out struct{ Node any }
		r := f.env.Do(t, `query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": goneRack})
		r.ExpectError(t, "NOT_FOUND", "")
		_ = json.Unmarshal(r.Data, &out)
		if out.Node != nil {
			t.Errorf("node of a deleted rack: %v", out.Node)
		}
	})
}

// TestDeleteBlockedByDependents: deleting a record others still point at fails with CONFLICT
// listing the dependents, changes nothing, and works once they are gone.
func TestDeleteBlockedByDependents(t *testing.T) {
	t.Parallel()
	env, f := newEnv(t)
	t.Run("rack with hosts", func(t *testing.T) {
		rack := f.Rack()
		h1 := f.Host(map[string]any{"rackID": rack, "position": 1})
		h2 := f.Host(map[string]any{"rackID": rack})
		e := f.tryDelete("Rack", rack).ExpectError(t, "CONFLICT", "")
		if !jsonEqual(e.Extensions["dependents"], []map[string]any{{"edge": "hosts", "count": 2}}) {
			t.Errorf("extensions.dependents = %v, want [{hosts 2}]", e.Extensions["dependents"])
		}
		if !strings.Contains(e.Message, "2 hosts") {
			t.Errorf("message %q does not say 2 hosts", e.Message)
		}
		// Nothing was half-deleted.
		n := f.node(rack, `... on Rack { hosts { totalCount } }`)
		checkFields(t, "rack after refused delete", n, map[string]any{"hosts": map[string]any{"totalCount": 2}})
		for _, h := range []string{h1, h2} {
			checkFields(t, "host", f.node(h, `... on Host { rack { id } }`), map[string]any{"rack": map[string]any{"id": rack}})
		}
		// Move one host out and delete the other: then the rack goes.
		f.update("Host", h2, map[string]any{"clearRack": true})
		e = f.tryDelete("Rack", rack).ExpectError(t, "CONFLICT", "")
		if !jsonEqual(e.Extensions["dependents"], []map[string]any{{"edge": "hosts", "count": 1}}) {
			t.Errorf("extensions.dependents = %v, want [{hosts 1}]", e.Extensions["dependents"])
		}
		var out map[string]string
		env.MustDo(t, `mutation($id: ID!) { deleteHost(id: $id) }`, map[string]any{"id": h1}, &out)
		env.MustDo(t, `mutation($id: ID!) { deleteRack(id: $id) }`, map[string]any{"id": rack}, &out)
		env.Do(t, `query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": rack}).ExpectError(t, "NOT_FOUND", "")
		f.node(h2, `... on Host { name }`) // the moved host is untouched
	})
	for _, tc := range []struct {
		name string
		typ  string
		make func() string
		want []map[string]any
	}{
		{"region with a datacenter and a cluster", "Region", func() string {
			r := f.Region()
			f.Cluster(map[string]any{"regionID": r})
			return r
		}, []map[string]any{{"edge": "datacenters", "count": 1}, {"edge": "clusters", "count": 1}}},
		{"floor with racks", "Floor", func() string {
			fl := f.Floor()
			f.Rack(map[string]any{"floorID": fl})
			f.Rack(map[string]any{"floorID": fl})
			return fl
		}, []map[string]any{{"edge": "racks", "count": 2}}},
		{"host with ports and a compute node", "Host", func() string {
			h := f.Host()
			f.Port(map[string]any{"hostID": h})
			f.ComputeNode(map[string]any{"hostID": h})
			return h
		}, []map[string]any{{"edge": "ports", "count": 1}, {"edge": "node", "count": 1}}},
		{"network with addresses", "Network", func() string {
			n := f.Network(map[string]any{"cidr": "10.250.0.0/24"})
			f.create("IPAddress", map[string]any{"address": "10.250.0.1", "networkID": n})
			return n
		}, []map[string]any{{"edge": "ipAddresses", "count": 1}}},
		{"tenant with a VM", "Tenant", func() string {
			tn := f.Tenant()
			f.VirtualMachine(map[string]any{"tenantID": tn})
			return tn
		}, []map[string]any{{"edge": "virtualMachines", "count": 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := tc.make()
			e := f.tryDelete(tc.typ, id).ExpectError(t, "CONFLICT", "")
			if !jsonEqual(e.Extensions["dependents"], tc.want) {
				t.Errorf("extensions.dependents = %v, want %v", e.Extensions["dependents"], tc.want)
			}
			f.node(id, "__typename") // still there
		})
	}
}

// TestValidationFieldNames: extensions.field must be the GraphQL field name. Fields whose
// GraphQL name ends in an initialism (memoryMB, sizeGB, hookURL) are where a naive
// snake_case → camelCase conversion goes wrong.
func TestValidationFieldNames(t *testing.T) {
	t.Parallel()
	_, f := newEnv(t)
	for _, tc := range []struct {
		name  string
		typ   string
		input func() map[string]any
		field string
	}{
		{"flavor memoryMB", "Flavor", func() map[string]any { return map[string]any{"name": uniq("fl"), "vcpus": 1, "memoryMB": 10} }, "memoryMB"},
		{"volume sizeGB", "Volume", func() map[string]any { return map[string]any{"name": uniq("vol"), "sizeGB": 0, "tenantID": f.Tenant()} }, "sizeGB"},
		{"host memoryMB", "Host", func() map[string]any { return map[string]any{"name": uniq("host"), "memoryMB": -1} }, "memoryMB"},
		{"event rule hookURL", "EventRule", func() map[string]any {
			return map[string]any{"name": uniq("rule"), "kind": "ACTION", "hookURL": "ftp://example.com"}
		}, "hookURL"},
		{"compute node memoryCapacityMB", "ComputeNode", func() map[string]any {
			return map[string]any{"name": uniq("node"), "hostID": f.Host(), "clusterID": f.Cluster(), "memoryCapacityMB": -5}
		}, "memoryCapacityMB"},
		{"host cpuModel", "Host", func() map[string]any {
			return map[string]any{"name": uniq("host"), "cpuModel": strings.Repeat("x", 129)}
		}, "cpuModel"},
		{"address dnsName", "IPAddress", func() map[string]any {
			return map[string]any{"address": "10.0.0.1", "networkID": f.Network(map[string]any{"cidr": "10.0.0.0/24"}), "dnsName": strings.Repeat("x", 254)}
		}, "dnsName"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if f := gqlSchema().Types["Create"+tc.typ+"Input"].Fields.ForName(tc.field); f == nil {
				t.Fatalf("Create%sInput has no field %s", tc.typ, tc.field)
			}
			r := f.tryCreate(tc.typ, tc.input())
			e := r.ExpectError(t, "VALIDATION", "")
			if e.Field() != tc.field {
				t.Errorf("extensions.field = %q, want %q (%s)", e.Field(), tc.field, r.ErrorsString())
			}
		})
	}
}

// TestMalformedInput: values the client sends that cannot be parsed are the client's mistake
// (VALIDATION), not INTERNAL.
func TestMalformedInput(t *testing.T) {
	t.Parallel()
	env, f := newEnv(t)
	floor := f.Floor()
	for _, tc := range []struct {
		name  string
		query string
		vars  map[string]any
	}{
		{"node id not a number", `{ node(id: "abc") { id } }`, nil},
		{"floorID not a number", `mutation($in: CreateRackInput!) { createRack(input: $in) { id } }`,
			map[string]any{"in": map[string]any{"name": uniq("rack"), "floorID": "abc"}}},
		{"where id not a number", `{ racks(where: {hasFloorWith: {id: "abc"}}) { totalCount } }`, nil},
		{"cursor not a cursor", `{ racks(after: "garbage") { totalCount } }`, nil},
		{"labels with an empty key", `mutation($in: CreateClusterInput!) { createCluster(input: $in) { id } }`,
			map[string]any{"in": map[string]any{"name": uniq("cl"), "regionID": floor, "datacenterID": floor, "labels": map[string]any{"": "x"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := env.Do(t, tc.query, tc.vars)
			if len(r.Errors) == 0 {
				t.Fatalf("accepted: %s", r.Data)
			}
			r.ExpectError(t, "VALIDATION", "")
		})
	}
}

// TestReferenceToMissingM2MRecord: adding a missing record to a many-to-many edge is refused
// (not INTERNAL) and names the input field.
func TestReferenceToMissingM2MRecord(t *testing.T) {
	t.Parallel()
	_, f := newEnv(t)
	host := f.Host()
	missing := "999999999"
	r := f.tryUpdate("Host", host, map[string]any{"addMaintainerIDs": []string{missing}})
	e := r.ExpectError(t, "VALIDATION", "")
	// The error names the edge's id list; the same column is set by maintainerIDs on create
	// and addMaintainerIDs on update.
	if e.Field() != "maintainerIDs" && e.Field() != "addMaintainerIDs" {
		t.Errorf("extensions.field = %q, want maintainerIDs or addMaintainerIDs", e.Field())
	}
}

// TestPlacementThroughRackEdges: the rack-placement rules hold however a host ends up in a
// rack, including through the rack's side of the edge (createRack hostIDs, updateRack
// addHostIDs) and when the rack shrinks.
func TestPlacementThroughRackEdges(t *testing.T) {
	t.Parallel()
	env, f := newEnv(t)
	hostsOf := func(rack string) int {
		t.Helper()
		return list(t, env, "Host", map[string]any{"where": map[string]any{"hasRackWith": []any{map[string]any{"id": rack}}}}, "").TotalCount
	}
	t.Run("updateRack addHostIDs", func(t *testing.T) {
		rack := f.Rack()
		f.Host(map[string]any{"rackID": rack, "position": 10, "height": 2})
		loose := f.Host(map[string]any{"position": 11}) // not in a rack yet
		r := f.tryUpdate("Rack", rack, map[string]any{"addHostIDs": []string{loose}})
		// Hosts are mounted from the host's side only: the rack inputs have no host list.
		r.ExpectError(t, "GRAPHQL_VALIDATION_FAILED", "")
		if n := hostsOf(rack); n != 1 {
			t.Errorf("rack holds %d hosts after the refused update, want 1", n)
		}
	})
	t.Run("createRack hostIDs", func(t *testing.T) {
		a := f.Host(map[string]any{"position": 3})
		b := f.Host(map[string]any{"position": 3})
		r := f.tryCreate("Rack", map[string]any{"name": uniq("rack"), "floorID": f.Floor(), "height": 2, "hostIDs": []string{a, b}})
		r.ExpectError(t, "GRAPHQL_VALIDATION_FAILED", "")
	})
	t.Run("shrinking a rack below its devices", func(t *testing.T) {
		rack := f.Rack()
		f.Host(map[string]any{"rackID": rack, "position": 30})
		r := f.tryUpdate("Rack", rack, map[string]any{"height": 20})
		r.ExpectError(t, "VALIDATION", "height")
	})
}

// --- embedded SQLite ---

// scenarioWant are the answers of runScenario; PostgreSQL and SQLite must both give them.
var scenarioWant = []struct{ step, want string }{
	{"host read back", "rack=main position=10 height=2 face=FRONT fullDepth=true"},
	{"filtered list", "total=10 names=[r00 r01 r02 r03 r04 r05 r06 r07 r08 r09]"},
	{"filter by status", "total=3 names=[r00 r05 r10]"},
	{"forward pages", "totals=[12 12 12] pages=[[r00 r01 r02 r03 r04] [r05 r06 r07 r08 r09] [r10 r11]]"},
	{"backward pages", "totals=[12 12 12] pages=[[r07 r08 r09 r10 r11] [r02 r03 r04 r05 r06] [r00 r01]]"},
	{"order NAME DESC", "[r11 r10 r09]"},
	{"unique conflict", "CONFLICT field=name"},
	{"unique conflict: all fields", "[name floorID]"},
	{"unique conflict on one column", "CONFLICT field=name"},
	{"unique conflict on one column: all fields", "[name]"},
	{"same name on another floor", "ok"},
	{"overlap", "VALIDATION field=position"},
	{"half-depth rear beside front", "ok"},
	{"beyond the rack", "VALIDATION field=position"},
	{"missing parent", "VALIDATION field=floorID"},
	{"delete with dependents", `CONFLICT dependents=[{"count":3,"edge":"hosts"}] hosts=3`},
	{"deleted record", "NOT_FOUND node=null"},
}

// sqliteAnswers are the steps SQLite answers differently, as the README's Errors section
// says: SQLite's "FOREIGN KEY constraint failed" does not say which key failed, so a
// reference to a missing record is VALIDATION without extensions.field there.
var sqliteAnswers = map[string]string{"missing parent": "VALIDATION field="}

// runScenario creates a small topology through GraphQL and returns its answers by step, with
// generated names reduced to their meaningful part.
func runScenario(t *testing.T, env *gqltest.Env) map[string]string {
	f := newFx(t, env)
	out := map[string]string{}
	prefix := uniq("sc") + "-"
	short := func(names []string) []string {
		for i, n := range names {
			names[i] = strings.TrimPrefix(n, prefix)
		}
		return names
	}
	errAnswer := func(r gqltest.Response) string {
		if len(r.Errors) == 0 {
			return "ok"
		}
		return r.Errors[0].Code() + " field=" + r.Errors[0].Field()
	}
	fieldsOf := func(r gqltest.Response) string {
		if len(r.Errors) == 0 {
			return "ok"
		}
		return fmt.Sprint(r.Errors[0].Extensions["fields"])
	}
	region := f.Region()
	dc := f.Datacenter(map[string]any{"regionID": region})
	floor := f.Floor(map[string]any{"datacenterID": dc})
	rack := f.Rack(map[string]any{"name": prefix + "main", "floorID": floor})
	host := f.Host(map[string]any{"rackID": rack, "position": 10, "height": 2})
	n := f.node(host, `... on Host { position height face fullDepth rack { name } }`)
	out["host read back"] = fmt.Sprintf("rack=%s position=%v height=%v face=%v fullDepth=%v",
		strings.TrimPrefix(fmt.Sprint(n["rack"].(map[string]any)["name"]), prefix), n["position"], n["height"], n["face"], n["fullDepth"])

	for i := range 12 {
		in := map[string]any{"name": fmt.Sprintf("%sr%02d", prefix, i), "floorID": floor}
		if i%5 == 0 {
			in["status"] = "RESERVED"
		}
		f.Rack(in)
	}
	onFloor := map[string]any{"hasFloorWith": []any{map[string]any{"id": floor}}, "nameHasPrefix": prefix + "r"}
	nameAsc := map[string]any{"field": "NAME"}
	c := list(t, env, "Rack", map[string]any{"where": map[string]any{"hasFloorWith": []any{map[string]any{"id": floor}}, "nameHasPrefix": prefix + "r0"}, "orderBy": nameAsc}, "name")
	out["filtered list"] = fmt.Sprintf("total=%d names=%v", c.TotalCount, short(c.strs("name")))
	c = list(t, env, "Rack", map[string]any{"where": map[string]any{"and": []any{onFloor, map[string]any{"status": "RESERVED"}}}, "orderBy": nameAsc}, "name")
	out["filter by status"] = fmt.Sprintf("total=%d names=%v", c.TotalCount, short(c.strs("name")))

	page := func(dir string) string {
		var totals []int
		var pages [][]string
		args := map[string]any{"where": onFloor, "orderBy": nameAsc}
		for range 5 {
			if dir == "forward" {
				args["first"] = 5
			} else {
				args["last"] = 5
			}
			c := list(t, env, "Rack", args, "name")
			totals = append(totals, c.TotalCount)
			pages = append(pages, short(c.strs("name")))
			if dir == "forward" && c.PageInfo.HasNextPage {
				args["after"] = c.PageInfo.EndCursor
			} else if dir == "backward" && c.PageInfo.HasPreviousPage {
				args["before"] = c.PageInfo.StartCursor
			} else {
				break
			}
		}
		return fmt.Sprintf("totals=%v pages=%v", totals, pages)
	}
	out["forward pages"] = page("forward")
	out["backward pages"] = page("backward")
	c = list(t, env, "Rack", map[string]any{"where": onFloor, "orderBy": map[string]any{"field": "NAME", "direction": "DESC"}, "first": 3}, "name")
	out["order NAME DESC"] = fmt.Sprint(short(c.strs("name")))

	r := f.tryCreate("Rack", map[string]any{"name": prefix + "r01", "floorID": floor})
	out["unique conflict"], out["unique conflict: all fields"] = errAnswer(r), fieldsOf(r)
	f.Region(map[string]any{"name": prefix + "dup"})
	r = f.tryCreate("Region", map[string]any{"name": prefix + "dup"})
	out["unique conflict on one column"], out["unique conflict on one column: all fields"] = errAnswer(r), fieldsOf(r)
	out["same name on another floor"] = errAnswer(f.tryCreate("Rack", map[string]any{"name": prefix + "r01", "floorID": f.Floor(map[string]any{"datacenterID": dc})}))
	out["overlap"] = errAnswer(f.tryCreate("Host", map[string]any{"name": uniq("h"), "rackID": rack, "position": 11}))
	f.Host(map[string]any{"rackID": rack, "position": 20, "face": "FRONT", "fullDepth": false})
	out["half-depth rear beside front"] = errAnswer(f.tryCreate("Host", map[string]any{"name": uniq("h"), "rackID": rack, "position": 20, "face": "REAR", "fullDepth": false}))
	out["beyond the rack"] = errAnswer(f.tryCreate("Host", map[string]any{"name": uniq("h"), "rackID": rack, "position": 42, "height": 2}))
	gone := f.Floor(map[string]any{"datacenterID": dc})
	f.tryDelete("Floor", gone)
	out["missing parent"] = errAnswer(f.tryCreate("Rack", map[string]any{"name": uniq("r"), "floorID": gone}))

	r = f.tryDelete("Rack", rack)
	deps, _ := json.Marshal(func() any {
		if len(r.Errors) > 0 {
			return r.Errors[0].Extensions["dependents"]
		}
		return nil
	}())
	n = f.node(rack, `... on Rack { hosts { totalCount } }`)
	out["delete with dependents"] = fmt.Sprintf("%s dependents=%s hosts=%v", firstCode(r), deps, n["hosts"].(map[string]any)["totalCount"])

	victim := f.Rack(map[string]any{"floorID": floor})
	f.tryDelete("Rack", victim)
	r = env.Do(t, `query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": victim})
	out["deleted record"] = fmt.Sprintf("%s node=%s", firstCode(r), strings.TrimSuffix(strings.TrimPrefix(string(r.Data), `{"node":`), "}"))
	return out
}

func firstCode(r gqltest.Response) string {
	if len(r.Errors) == 0 {
		return "ok"
	}
	return r.Errors[0].Code()
}

func TestSQLite(t *testing.T) {
	t.Parallel()
	pg, _ := newEnv(t)
	lite := gqltest.SQLite(t)
	if lite.DB.Dialect != "sqlite3" && lite.DB.Dialect != "sqlite" {
		t.Fatalf("gqltest.SQLite opened dialect %q", lite.DB.Dialect)
	}
	got := map[string]map[string]string{"postgres": runScenario(t, pg), "sqlite": runScenario(t, lite)}
	for _, s := range scenarioWant {
		t.Run(s.step, func(t *testing.T) {
			if g := got["postgres"][s.step]; g != s.want {
				t.Errorf("postgres: %s\nwant %s", g, s.want)
			}
			want := s.want
			if w, ok := sqliteAnswers[s.step]; ok {
				want = w
			}
			if g := got["sqlite"][s.step]; g != want {
				t.Errorf("sqlite: %s\nwant %s (postgres: %s)", g, want, got["postgres"][s.step])
			}
		})
	}
}
