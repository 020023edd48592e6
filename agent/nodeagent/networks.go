package nodeagent

import (
	"fmt"
	"slices"

	"github.com/virtflow/virtflow/agent/hostnet"
)

// ensureNetworks makes the host networks of a's VM exist (Config.Networks) before its
// domain starts: the bridge of each network its ports are in, with the VLAN interface.
func (ag *Agent) ensureNetworks(a Assignment) error {
	if ag.cfg.Networks == nil {
		return nil
	}
	for _, p := range ports(a) {
		n, ok := portNetwork(p)
		if !ok {
			continue
		}
		if _, err := ag.cfg.Networks.Ensure(n); err != nil {
			return fmt.Errorf("network %d: %w", n.ID, err)
		}
	}
	return nil
}

// pruneNetworks removes the host networks the agent created that no VM of the node needs
// anymore (the bridges of the networks of every assignment not ABSENT are kept; one still
// in use by a domain stays too). Failures are logged and tried again next resync.
func (ag *Agent) pruneNetworks(as []Assignment) {
	if ag.cfg.Networks == nil {
		return
	}
	var keep []string
	for _, a := range as {
		if a.DesiredState == "ABSENT" {
			continue
		}
		for _, p := range ports(a) {
			if n, ok := portNetwork(p); ok && !slices.Contains(keep, hostnet.BridgeName(n.ID)) {
				keep = append(keep, hostnet.BridgeName(n.ID))
			}
		}
	}
	removed, err := ag.cfg.Networks.Prune(keep)
	if len(removed) > 0 {
		ag.log.Info("removed host networks no VM needs", "links", removed)
	}
	if err != nil {
		ag.log.Warn("cannot remove host networks", "err", err)
	}
}
