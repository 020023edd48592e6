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

// testState is the State of a decision on s that placed nothing yet.
func testState(s *Snapshot, r Request) *State {
	if s == nil {
		s = &Snapshot{}
	}
	return newState(s, &r)
}

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

// groupSnapshot is a snapshot holding the group's running members, and the request
// naming them in GroupNodeIDs.
func groupSnapshot(group []Node, quotas map[QuotaKey]Quota, r Request) (*Snapshot, Request) {
	s := &Snapshot{Quotas: quotas, Nodes: group}
	for _, n := range group {
		r.GroupNodeIDs = append(r.GroupNodeIDs, n.ID)
	}
	return s, r
}

func runFilterCases(t *testing.T, f Filter, cases []filterCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.req.Flavor.VCPUs == 0 {
				tc.req.Flavor = smallFlavor()
			}
			st := testState(groupSnapshot(tc.group, tc.quotas, tc.req))
			for i := range tc.placed {
				v := newNodeView(&tc.placed[i])
				st.place(&v)
			}
			v := newNodeView(&tc.node)
			got := f.Filter(st, &v)
			if got.Code != tc.want {
				t.Fatalf("%s: got %q (%s), want %q", f.Name(), got.Code, got.Reason, tc.want)
			}
			if !got.OK() && got.Reason == "" {
				t.Fatalf("%s: rejection without a reason", f.Name())
			}
			if batch := batchFilterStatus(f, tc.node, tc.req, tc.placed, tc.group, tc.quotas); batch != got {
				t.Fatalf("%s: batch form gives %+v, Filter %+v", f.Name(), batch, got)
			}
		})
	}
}

// batchAttempt readies an attempt as Schedule would, on a snapshot of one cluster
// holding node (view 0), the placed nodes, each of which takes a VM of the group, and
// the group's running members (in another cluster).
func batchAttempt(node Node, req Request, placed, group []Node, quotas map[QuotaKey]Quota, filters []Filter, scorers []weighted) *attempt {
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
		a.place(i + 1)
	}
	return a
}

// batchFilterStatus is the verdict of f's batch form on node.
func batchFilterStatus(f Filter, node Node, req Request, placed, group []Node, quotas map[QuotaKey]Quota) Status {
	a := batchAttempt(node, req, placed, group, quotas, []Filter{f}, nil)
	if len(a.fStable)+len(a.fRest) == 0 {
		return Pass // skipped: passes every node
	}
	if out := a.fb[0].filterBatch(a, 0, []int32{0}); len(out) == 1 {
		return Pass
	}
	return a.statusOf(a.sid[0])
}

// checkBatchScore fails unless s's batch form scores node as Score does, in the same
// decision state.
func checkBatchScore(t *testing.T, s Scorer, node Node, req Request, placed, group []Node) {
	t.Helper()
	a := batchAttempt(node, req, placed, group, nil, nil, []weighted{{s, 1}})
	want := s.Score(&a.st, a.view(0))
	got := 0.0
	if len(a.sOn) > 0 {
		col := make([]float64, 1)
		a.sb[0].scoreBatch(a, []int32{0}, col)
		got = col[0]
	}
	if got != want {
		t.Fatalf("%s: batch form gives %v, Score %v", s.Name(), got, want)
	}
}

func with(n Node, mod func(*Node)) Node { mod(&n); return n }
