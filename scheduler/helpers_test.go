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
	// placed are nodes already holding VMs of the group.
	placed []Node
	quotas map[QuotaKey]Quota
	want   Code
}

func runFilterCases(t *testing.T, f Filter, cases []filterCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.req.Flavor.VCPUs == 0 {
				tc.req.Flavor = smallFlavor()
			}
			st := testState(&Snapshot{Quotas: tc.quotas}, tc.req)
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
		})
	}
}

func with(n Node, mod func(*Node)) Node { mod(&n); return n }
