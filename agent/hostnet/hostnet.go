// Package hostnet keeps the host networking of a node's VMs: one Linux bridge per VirtFlow
// network (named by [BridgeName]) and, for a network with a VLAN on a node with an uplink, a
// VLAN sub-interface of the uplink enslaved to that bridge. It talks to the kernel through
// netlink (github.com/vishvananda/netlink), never by running ip(8).
//
// The manager only ever removes what it created: links it creates carry an alias
// (IFLA_IFALIAS) naming them VirtFlow's, so that an agent restarted later still knows them.
// A bridge or VLAN interface that exists already under the expected name is adopted: used,
// brought up, never deleted.
package hostnet

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/vishvananda/netlink"
)

// Aliases marking the links the manager created.
const (
	bridgeAlias = "virtflow-network:" // + network id
	vlanAlias   = "virtflow-vlan:"    // + VLAN id
)

// BridgeName is the host bridge of the VirtFlow network with the given id: "vfbr-" and the
// id in base 36, at most 15 characters (the kernel's limit) for every id up to 2^51. It is the
// one place bridge names come from: the agent's NICs, the manager and tests all use it.
func BridgeName(networkID int64) string {
	return "vfbr-" + strconv.FormatInt(networkID, 36)
}

// VLANName is the VLAN sub-interface of the uplink for vlan: "vfvlan" and the VLAN id.
func VLANName(vlan int) string { return "vfvlan" + strconv.Itoa(vlan) }

// Network is what a node needs of one VirtFlow network: its id and its VLAN (0: none).
type Network struct {
	ID   int64
	VLAN int
}

// Manager creates and removes the bridges and VLAN interfaces of a node's networks. It is
// safe for concurrent use.
type Manager struct {
	h      *netlink.Handle
	uplink string
	mu     sync.Mutex
}

// New returns a manager working through h (netlink.NewHandle() for the host's namespace,
// netlink.NewHandleAt for another). uplink names the interface VLAN sub-interfaces are made
// on; empty means networks get a bridge only (their VLAN is not carried off the node).
func New(h *netlink.Handle, uplink string) *Manager {
	return &Manager{h: h, uplink: uplink}
}

// Ensure makes n's bridge exist and be up, and for a network with a VLAN (and a manager
// with an uplink) the VLAN interface of the uplink exist, be up and be a port of the
// bridge. It returns the bridge's name. It fails when a link of one of these names exists
// but is something else (a bridge name that is no bridge, a VLAN interface of another
// uplink or VLAN, or one already in another bridge).
func (m *Manager) Ensure(n Network) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	name := BridgeName(n.ID)
	br, err := m.ensureBridge(name, n.ID)
	if err != nil {
		return name, err
	}
	if n.VLAN > 0 && m.uplink != "" {
		if err := m.ensureVLAN(br, n.VLAN); err != nil {
			return name, err
		}
	}
	return name, nil
}

// ensureBridge returns the bridge name, created (and marked) if missing, adopted if present.
func (m *Manager) ensureBridge(name string, id int64) (netlink.Link, error) {
	l, err := m.h.LinkByName(name)
	if err != nil && !isNotFound(err) {
		return nil, fmt.Errorf("look up bridge %s: %w", name, err)
	}
	if l == nil {
		br := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: name}}
		if err := m.h.LinkAdd(br); err != nil {
			return nil, fmt.Errorf("create bridge %s: %w", name, err)
		}
		if l, err = m.h.LinkByName(name); err != nil {
			return nil, fmt.Errorf("look up bridge %s: %w", name, err)
		}
		if err := m.h.LinkSetAlias(l, bridgeAlias+strconv.FormatInt(id, 10)); err != nil {
			_ = m.h.LinkDel(l)
			return nil, fmt.Errorf("mark bridge %s: %w", name, err)
		}
	} else if l.Type() != "bridge" {
		return nil, fmt.Errorf("%s exists but is a %s, not a bridge", name, l.Type())
	}
	if err := m.h.LinkSetUp(l); err != nil {
		return nil, fmt.Errorf("bring up bridge %s: %w", name, err)
	}
	return l, nil
}

// ensureVLAN makes the uplink's VLAN interface for vlan a port of br, up.
func (m *Manager) ensureVLAN(br netlink.Link, vlan int) error {
	up, err := m.h.LinkByName(m.uplink)
	if err != nil {
		return fmt.Errorf("uplink %s: %w", m.uplink, err)
	}
	name := VLANName(vlan)
	l, err := m.h.LinkByName(name)
	if err != nil && !isNotFound(err) {
		return fmt.Errorf("look up VLAN interface %s: %w", name, err)
	}
	if l == nil {
		v := &netlink.Vlan{LinkAttrs: netlink.LinkAttrs{Name: name, ParentIndex: up.Attrs().Index}, VlanId: vlan}
		if err := m.h.LinkAdd(v); err != nil {
			return fmt.Errorf("create VLAN interface %s on %s: %w", name, m.uplink, err)
		}
		if l, err = m.h.LinkByName(name); err != nil {
			return fmt.Errorf("look up VLAN interface %s: %w", name, err)
		}
		if err := m.h.LinkSetAlias(l, vlanAlias+strconv.Itoa(vlan)); err != nil {
			_ = m.h.LinkDel(l)
			return fmt.Errorf("mark VLAN interface %s: %w", name, err)
		}
	} else {
		v, ok := l.(*netlink.Vlan)
		if !ok || v.VlanId != vlan || v.ParentIndex != up.Attrs().Index {
			return fmt.Errorf("%s exists but is not VLAN %d of %s", name, vlan, m.uplink)
		}
	}
	switch master := l.Attrs().MasterIndex; master {
	case br.Attrs().Index:
	case 0:
		if err := m.h.LinkSetMaster(l, br); err != nil {
			return fmt.Errorf("add %s to bridge %s: %w", name, br.Attrs().Name, err)
		}
	default:
		other := strconv.Itoa(master)
		if ol, err := m.h.LinkByIndex(master); err == nil {
			other = ol.Attrs().Name
		}
		return fmt.Errorf("VLAN %d is carried by bridge %s already: one network per VLAN on a node", vlan, other)
	}
	if err := m.h.LinkSetUp(l); err != nil {
		return fmt.Errorf("bring up %s: %w", name, err)
	}
	return nil
}

// Prune removes the bridges the manager created for networks not in keep (bridge names,
// BridgeName), with the VLAN interfaces it created in them, unless something else still
// uses the bridge (a port that is not its own VLAN interface: a VM's tap). Adopted links are
// never removed. It returns the names of the links it removed.
func (m *Manager) Prune(keep []string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	links, err := m.h.LinkList()
	if err != nil {
		return nil, fmt.Errorf("list links: %w", err)
	}
	keepSet := make(map[string]bool, len(keep))
	for _, k := range keep {
		keepSet[k] = true
	}
	ports := map[int][]netlink.Link{} // bridge index -> its ports
	for _, l := range links {
		if mi := l.Attrs().MasterIndex; mi != 0 {
			ports[mi] = append(ports[mi], l)
		}
	}
	var removed []string
	var errs []error
	for _, l := range links {
		a := l.Attrs()
		if l.Type() != "bridge" || !strings.HasPrefix(a.Alias, bridgeAlias) || keepSet[a.Name] {
			continue
		}
		busy := false
		var ours []netlink.Link
		for _, p := range ports[a.Index] {
			if strings.HasPrefix(p.Attrs().Alias, vlanAlias) {
				ours = append(ours, p)
			} else {
				busy = true
			}
		}
		if busy {
			continue // a VM's interface is still plugged in: next time
		}
		for _, p := range ours {
			if err := m.h.LinkDel(p); err != nil && !isNotFound(err) {
				errs = append(errs, fmt.Errorf("remove %s: %w", p.Attrs().Name, err))
				continue
			}
			removed = append(removed, p.Attrs().Name)
		}
		if err := m.h.LinkDel(l); err != nil && !isNotFound(err) {
			errs = append(errs, fmt.Errorf("remove bridge %s: %w", a.Name, err))
			continue
		}
		removed = append(removed, a.Name)
	}
	return removed, errors.Join(errs...)
}

// isNotFound reports whether err says the link does not exist.
func isNotFound(err error) bool {
	var nf netlink.LinkNotFoundError
	return errors.As(err, &nf)
}
