package bgp_test

import (
	"net/netip"
	"reflect"
	"testing"

	"github.com/virtflow/virtflow/agent/bgp"
)

// recorder is an Announcer that records the announced set.
type recorder struct{ set map[netip.Prefix]netip.Addr }

func (r *recorder) Announce(p netip.Prefix, nh netip.Addr) error { r.set[p] = nh; return nil }
func (r *recorder) Withdraw(p netip.Prefix) error                { delete(r.set, p); return nil }

func TestTableOwnersAndReplay(t *testing.T) {
	tab := bgp.NewTable()
	vm, lb := tab.For("vm"), tab.For("lb")
	a, vip := netip.MustParsePrefix("10.1.0.5/32"), netip.MustParsePrefix("10.9.0.1/32")
	nh := netip.MustParseAddr("10.0.0.2")
	if err := vm.Announce(a, nh); err != nil { // before any speaker: kept
		t.Fatal(err)
	}
	r := &recorder{set: map[netip.Prefix]netip.Addr{}}
	if err := tab.Attach(r); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(r.set, map[netip.Prefix]netip.Addr{a: nh}) {
		t.Fatalf("after Attach: %v", r.set)
	}
	_ = lb.Announce(vip, netip.Addr{})
	_ = vm.Announce(vip, netip.Addr{})
	_ = lb.Withdraw(vip) // vm still wants it
	if _, ok := r.set[vip]; !ok {
		t.Fatalf("vip withdrawn while another owner announces it: %v", r.set)
	}
	_ = lb.Withdraw(a) // not lb's: nothing happens
	if _, ok := r.set[a]; !ok {
		t.Fatal("an owner withdrew another owner's prefix")
	}
	_ = vm.Withdraw(vip)
	if _, ok := r.set[vip]; ok {
		t.Fatal("vip still announced after its last owner withdrew it")
	}
	if got := tab.Owned("vm"); !reflect.DeepEqual(got, []netip.Prefix{a}) {
		t.Fatalf("Owned(vm) = %v", got)
	}
	tab.Detach()
	r2 := &recorder{set: map[netip.Prefix]netip.Addr{}}
	_ = tab.Attach(r2)
	if !reflect.DeepEqual(r2.set, map[netip.Prefix]netip.Addr{a: nh}) {
		t.Fatalf("replay to a new speaker: %v", r2.set)
	}
}
