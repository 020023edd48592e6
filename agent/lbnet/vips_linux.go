package lbnet

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"

	"github.com/vishvananda/netlink"
)

// LoopbackVIPs puts VIPs on the loopback of the network namespace of the calling process
// (the node's), so the proxy binds them while the fabric routes them to the node by BGP.
type LoopbackVIPs struct{}

var _ VIPs = LoopbackVIPs{}

func vipAddr(vip netip.Addr) *netlink.Addr {
	return &netlink.Addr{IPNet: &net.IPNet{IP: vip.AsSlice(), Mask: net.CIDRMask(vip.BitLen(), vip.BitLen())}}
}

// Add puts vip on lo (a no-op when it is there).
func (LoopbackVIPs) Add(vip netip.Addr) error {
	lo, err := netlink.LinkByName("lo")
	if err != nil {
		return fmt.Errorf("loopback: %w", err)
	}
	if err := netlink.AddrReplace(lo, vipAddr(vip)); err != nil {
		return fmt.Errorf("add %s to lo: %w", vip, err)
	}
	return nil
}

// Remove takes vip off lo (a no-op when it is not there).
func (LoopbackVIPs) Remove(vip netip.Addr) error {
	lo, err := netlink.LinkByName("lo")
	if err != nil {
		return fmt.Errorf("loopback: %w", err)
	}
	if err := netlink.AddrDel(lo, vipAddr(vip)); err != nil && !errors.Is(err, syscall.EADDRNOTAVAIL) {
		return fmt.Errorf("remove %s from lo: %w", vip, err)
	}
	return nil
}
