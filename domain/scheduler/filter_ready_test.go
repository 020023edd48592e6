package scheduler

import "testing"

func TestReady(t *testing.T) {
	runFilterCases(t, Ready{}, []filterCase{
		{name: "ready", node: bigNode(1)},
		{name: "not ready", node: with(bigNode(1), func(n *Node) { n.Ready = false }), want: "NOT_READY"},
	})
}
