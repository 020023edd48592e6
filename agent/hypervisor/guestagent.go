package hypervisor

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"

	"github.com/digitalocean/go-libvirt"
)

// GuestAgentChannel is the name of the virtio-serial channel of the QEMU guest agent
// (qemu-guest-agent listens on it inside the guest).
const GuestAgentChannel = "org.qemu.guest_agent.0"

// guestAgentTimeout is how long, in seconds, libvirt waits for the guest agent's answer.
const guestAgentTimeout = 2

// GuestInfo is what a guest agent said about its guest.
type GuestInfo struct {
	// Hostname is the guest's host name.
	Hostname string
	// Addresses are the guest's addresses, loopback and link-local ones left out, sorted.
	Addresses []string
}

// GuestAgent asks the domain's QEMU guest agent; see [Hypervisor.GuestAgent].
func (h *Libvirt) GuestAgent(ctx context.Context, name string) (GuestInfo, error) {
	var info GuestInfo
	err := h.do(ctx, func(c *libvirt.Libvirt) error {
		d, err := lookup(c, name)
		if err != nil {
			return err
		}
		if st, err := stateOf(c, d); err != nil {
			return err
		} else if st != StateRunning {
			return ErrNoGuestAgent
		}
		cmd := func(execute string, out any) error {
			res, err := c.QEMUDomainAgentCommand(d, `{"execute":"`+execute+`"}`, guestAgentTimeout, 0)
			if err != nil || len(res) == 0 {
				return fmt.Errorf("%s: %v: %w", execute, err, ErrNoGuestAgent)
			}
			if out == nil {
				return nil
			}
			if err := json.Unmarshal([]byte(res[0]), out); err != nil {
				return fmt.Errorf("%s: %v: %w", execute, err, ErrNoGuestAgent)
			}
			return nil
		}
		if err := cmd("guest-ping", nil); err != nil {
			return err
		}
		var host struct {
			Return struct {
				HostName string `json:"host-name"`
			} `json:"return"`
		}
		if err := cmd("guest-get-host-name", &host); err == nil {
			info.Hostname = host.Return.HostName
		}
		var ifaces struct {
			Return []struct {
				Name string `json:"name"`
				IPs  []struct {
					Address string `json:"ip-address"`
				} `json:"ip-addresses"`
			} `json:"return"`
		}
		if err := cmd("guest-network-get-interfaces", &ifaces); err != nil {
			return err
		}
		info.Addresses = info.Addresses[:0]
		for _, i := range ifaces.Return {
			for _, ip := range i.IPs {
				a, err := netip.ParseAddr(ip.Address)
				if err != nil || a.IsLoopback() || a.IsLinkLocalUnicast() {
					continue
				}
				info.Addresses = append(info.Addresses, a.WithZone("").String())
			}
		}
		slices.Sort(info.Addresses)
		info.Addresses = slices.Compact(info.Addresses)
		return nil
	})
	if err != nil {
		return GuestInfo{}, wrap("ask the guest agent of", name, err)
	}
	return info, nil
}

// GuestAgent answers with the guest set by SetGuestAgent for a running domain, else
// ErrNoGuestAgent; see [Hypervisor.GuestAgent].
func (s *Simulated) GuestAgent(ctx context.Context, name string) (GuestInfo, error) {
	if err := s.begin(ctx, "ask the guest agent of", name, s.cfg.Delays.State, false); err != nil {
		return GuestInfo{}, err
	}
	defer s.mu.Unlock()
	d, err := s.get(name)
	if err != nil {
		return GuestInfo{}, err
	}
	if d.state != StateRunning || d.guest == nil {
		return GuestInfo{}, fmt.Errorf("ask the guest agent of %s: %w", name, ErrNoGuestAgent)
	}
	return *d.guest, nil
}

// SetGuestAgent makes the simulated domain name's guest agent answer with info (nil: no
// agent answers).
func (s *Simulated) SetGuestAgent(name string, info *GuestInfo) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := s.get(name)
	if err != nil {
		return err
	}
	d.guest = info
	return nil
}
