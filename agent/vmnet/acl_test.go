package vmnet

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/virtflow/virtflow/internal/testkit/netlab"
)

// TestACLInNamespace applies a VM's rules with nftables in its namespace: an allowed port
// passes, another is dropped, an egress deny blocks only what it names, the metadata
// service stays reachable, and an empty rule set lets everything through again.
func TestACLInNamespace(t *testing.T) {
	node := netlab.NewNS(t, "node")
	m := newManager(t, node)
	vm := netip.MustParseAddr("172.16.0.20")
	at, err := m.Ensure(vm)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Remove(vm) })
	g := newGuest(t, node, vm, at.Tap)
	if _, err := m.AttachTap(vm); err != nil {
		t.Fatal(err)
	}
	serveHTTP(t, g, vm.String()+":8080", "guest")
	serveHTTP(t, g, vm.String()+":8081", "guest")
	serveHTTP(t, node, MetadataAddr.String()+":80", "metadata")
	serveHTTP(t, node, Gateway.String()+":9000", "node")
	// reach waits up to 2 s for an answer (a loaded machine); blocked gives up after 400 ms
	// (a dropped SYN is never answered: a long wait would only slow the test down).
	reach := func(from *netlab.NS, url string) bool {
		body, err := get(from, url)
		return err == nil && strings.HasPrefix(body, "hello")
	}
	blocked := func(from *netlab.NS, url string) bool {
		_, err := getQuick(from, url)
		return err != nil
	}
	rules := []Rule{
		{Direction: Ingress, Protocol: "TCP", PortFrom: 8080, Allow: true, Priority: 10},
		{Direction: Egress, Protocol: "TCP", PortFrom: 9000, PortTo: 9001, CIDR: netip.MustParsePrefix("169.254.1.1/32"), Priority: 10},
		{Direction: Egress, Protocol: "ANY", Allow: true, Priority: 20},
	}
	if err := m.ApplyACL(vm, rules); err != nil {
		t.Fatal(err)
	}
	if !reach(node, "http://"+vm.String()+":8080/") {
		t.Error("allowed ingress port 8080 dropped")
	}
	if !blocked(node, "http://"+vm.String()+":8081/") {
		t.Error("ingress port 8081, allowed by no rule, passed")
	}
	if !blocked(g, "http://"+Gateway.String()+":9000/") {
		t.Error("egress to 169.254.1.1:9000, denied, passed")
	}
	if !reach(g, "http://"+MetadataAddr.String()+"/") {
		t.Error("the metadata service is not reachable under an ACL")
	}
	if err := m.ApplyACL(vm, nil); err != nil {
		t.Fatal(err)
	}
	if !reach(node, "http://"+vm.String()+":8081/") || !reach(g, "http://"+Gateway.String()+":9000/") {
		t.Error("traffic still dropped after the ACL was removed")
	}
	if err := m.ApplyACL(vm, []Rule{{Direction: "SIDEWAYS", Protocol: "TCP"}}); err == nil {
		t.Error("a bad rule was applied")
	}
}
