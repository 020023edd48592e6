package scheduler

import "testing"

func TestSchedulable(t *testing.T) {
	runFilterCases(t, Schedulable{}, []filterCase{
		{name: "schedulable", node: bigNode(1)},
		{name: "cordoned", node: with(bigNode(1), func(n *Node) { n.Schedulable = false }), want: "UNSCHEDULABLE"},
	})
}
