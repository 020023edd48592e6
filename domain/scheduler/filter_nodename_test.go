package scheduler

import "testing"

func TestNodeName(t *testing.T) {
	runFilterCases(t, NodeName{}, []filterCase{
		{name: "no names", node: bigNode(1)},
		{name: "named", node: bigNode(1), req: Request{Policy: Policy{NodeNames: []string{"n2", "n1"}}}},
		{name: "not named", node: bigNode(1), req: Request{Policy: Policy{NodeNames: []string{"n2"}}}, want: "NODE_NAME"},
	})
}
