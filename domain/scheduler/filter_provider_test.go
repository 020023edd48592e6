package scheduler

import "testing"

func TestProvider(t *testing.T) {
	runFilterCases(t, Provider{}, []filterCase{
		{name: "any provider", node: bigNode(1)},
		{name: "has provider", node: bigNode(1), req: Request{Provider: "libvirt"}},
		{name: "lacks provider", node: bigNode(1), req: Request{Provider: "vmware"}, want: "NO_PROVIDER"},
		{name: "no providers", node: with(bigNode(1), func(n *Node) { n.Providers = nil }), req: Request{Provider: "libvirt"}, want: "NO_PROVIDER"},
	})
}
