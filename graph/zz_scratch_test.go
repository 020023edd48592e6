package graph_test

import (
	"testing"

	"github.com/virtflow/virtflow/internal/gqltest"
)

func TestScratch(t *testing.T) {
	env, f := newEnv(t)
	log := func(r gqltest.Response) { t.Helper(); t.Logf("%s %s", r.Data, r.ErrorsString()) }
	log(f.tryCreate("Flavor", map[string]any{"name": uniq("f"), "vcpus": 1, "memoryMB": 10}))
	log(f.tryCreate("Volume", map[string]any{"name": uniq("f"), "sizeGB": 0, "tenantID": f.Tenant()}))
	log(f.tryCreate("Image", map[string]any{"name": uniq("f"), "source": "x", "minMemoryMB": 0}))
	log(f.tryCreate("IPAddress", map[string]any{"address": "10.0.0.1", "networkID": f.Network(map[string]any{"cidr": "10.0.0.0/24"}), "dnsName": string(make([]byte, 300))}))
	log(f.tryCreate("Host", map[string]any{"name": uniq("f"), "memoryMB": -1}))
	log(f.tryCreate("Host", map[string]any{"name": uniq("f"), "cpuModel": string(make([]byte, 300))}))
	log(f.tryCreate("Host", map[string]any{"name": uniq("f"), "disks": []any{map[string]any{"type": "FLOPPY", "capacityGB": 1}}}))
	log(f.tryCreate("Cluster", map[string]any{"name": uniq("f"), "regionID": f.Region(), "datacenterID": f.Datacenter(), "labels": map[string]any{"": "x"}}))
	log(f.tryCreate("ComputeNode", map[string]any{"name": uniq("f"), "hostID": f.Host(), "clusterID": f.Cluster(), "memoryCapacityMB": -5}))
	log(f.tryCreate("Link", map[string]any{"aPortID": f.Port(), "bPortID": f.Port(), "lengthM": -1}))
	log(env.Do(t, `{ racks(where: {hasFloorWith: {id: "abc"}}) { totalCount } }`, nil))
	log(env.Do(t, `{ racks(after: "garbage") { totalCount } }`, nil))
}
