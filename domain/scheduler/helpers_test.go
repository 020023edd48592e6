package scheduler

import "testing"

// bigNode is a ready, schedulable node with room to spare.
func bigNode(id int) Node {
	return Node{ID: id, Name: "n" + itoa(id), ClusterID: 1, Ready: true, Schedulable: true,
		Providers: []string{"libvirt"}, CPUCapacity: 32, MemoryMB: 65536, DiskGB: 1000,
		DedicatedCoresFree: 8, AvailabilityZone: "az1", PowerZone: "p1", RackZone: "r1", NetworkZone: "net1"}
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	s := ""
	for ; i > 0; i /= 10 {
		s = string(rune('0'+i%10)) + s
	}
	return s
}

func smallFlavor() Flavor { return Flavor{VCPUs: 2, MemoryMB: 4096, DiskGB: 20} }

// filterCase is one row of a filter table test.
type filterCase struct {
	name string
	node Node
	req  Request
	// placed are nodes that took VMs of the group earlier in the decision; group are
	// nodes whose running VMs belong to the group (Request.GroupNodeIDs).
	placed, group []Node
	quotas        map[QuotaKey]Quota
	want          Code
}

// runFilterCases checks f's verdict on each case's node, in a decision where the
// case's placed nodes took the group's earlier VMs.
func runFilterCases(t *testing.T, f Filter, cases []filterCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.req.Flavor.VCPUs == 0 {
				tc.req.Flavor = smallFlavor()
			}
			a := testAttempt(tc.node, tc.req, tc.placed, tc.group, tc.quotas, []Filter{f}, nil)
			got := filterStatus(a, 0)
			if got.Code != tc.want {
				t.Fatalf("%s: got %q (%s), want %q", f.Name(), got.Code, got.Reason, tc.want)
			}
			if !got.OK() && got.Reason == "" {
				t.Fatalf("%s: rejection without a reason", f.Name())
			}
		})
	}
}

// testAttempt readies an attempt as Schedule does, on a snapshot of one cluster holding
// node (view 0) and the placed nodes, each of which takes a VM of the group, and the
// group's running members (in another cluster).
func testAttempt(node Node, req Request, placed, group []Node, quotas map[QuotaKey]Quota, filters []Filter, scorers []weighted) *attempt {
	s := &Snapshot{Clusters: []Cluster{{ID: 1}}, Quotas: quotas, Nodes: append([]Node{node}, placed...)}
	for i := range s.Nodes {
		s.Nodes[i].ClusterID = 1
	}
	for _, n := range group {
		n.ClusterID = 2
		s.Nodes = append(s.Nodes, n)
		req.GroupNodeIDs = append(req.GroupNodeIDs, n.ID)
	}
	req.Count = len(placed) + 1
	ix := s.index()
	a := newAttempt(s, ix, &req, clusterCandidate{Cluster: &s.Clusters[0], pos: ix.clusters[1]}, filters, scorers, &Config{})
	for i := range placed {
		a.place(int32(i + 1))
	}
	return a
}

// filterStatus is the verdict of the attempt's filter chain on view c: Pass, or the
// rejecting filter's status.
func filterStatus(a *attempt, c int32) Status {
	if out := a.filter([]int32{c}); len(out) == 1 {
		return Pass
	}
	return knownStatuses[a.sid[c]]
}

// scoreOf is scorer s's score of node, in a decision where the placed nodes took the
// group's earlier VMs.
func scoreOf(s Scorer, node Node, req Request, placed, group []Node) float64 {
	a := testAttempt(node, req, placed, group, nil, nil, []weighted{{s, 1}})
	if len(a.sOn) == 0 {
		return 0 // skipped: 0 everywhere
	}
	a.score([]int32{0})
	return a.cols[0]
}

func with(n Node, mod func(*Node)) Node { mod(&n); return n }
