package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"sort"
	"strings"

	"github.com/virtflow/virtflow/clients/apiclient"
)

// Inventory is an Ansible dynamic inventory (ansible-inventory -i SCRIPT --list): groups
// with their hosts and children, and _meta.hostvars so that Ansible does not call --host
// per host.
type Inventory map[string]any

// group is one inventory group.
type group struct {
	Hosts    []string `json:"hosts,omitempty"`
	Children []string `json:"children,omitempty"`
}

// groupName makes a valid Ansible group name: letters, digits and underscores.
func groupName(prefix, s string) string {
	var b strings.Builder
	b.WriteString(prefix)
	b.WriteByte('_')
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// buildInventory reads every VM the token can see and groups them by tenant, region,
// cluster and status: groups tenant_<name>, region_<name>, cluster_<name>; hostvars hold
// ansible_host (the first address), every address with its network, and the VM's ids.
// A host is the VM's name, or name-id when names repeat.
func buildInventory(ctx context.Context, c *apiclient.Client) (Inventory, map[string]map[string]any, error) {
	var vms []apiclient.InventoryPageVirtualMachinesVirtualMachineConnectionEdgesVirtualMachineEdgeNodeVirtualMachine
	var after *string
	for {
		r, err := apiclient.InventoryPage(ctx, c, after)
		if err != nil {
			return nil, nil, err
		}
		for _, e := range r.VirtualMachines.Edges {
			if e != nil && e.Node != nil {
				vms = append(vms, *e.Node)
			}
		}
		if !r.VirtualMachines.PageInfo.HasNextPage || r.VirtualMachines.PageInfo.EndCursor == nil {
			break
		}
		after = r.VirtualMachines.PageInfo.EndCursor
	}
	names := map[string]int{}
	for _, vm := range vms {
		names[vm.Name]++
	}
	groups := map[string]*group{}
	add := func(g, host string) {
		if groups[g] == nil {
			groups[g] = &group{}
		}
		groups[g].Hosts = append(groups[g].Hosts, host)
	}
	hostvars := map[string]map[string]any{}
	for _, vm := range vms {
		host := vm.Name
		if names[vm.Name] > 1 {
			host = vm.Name + "-" + vm.Id
		}
		vars := map[string]any{
			"virtflow_id": vm.Id, "virtflow_status": string(vm.Status), "virtflow_tenant": vm.Tenant.Name,
			"virtflow_region": vm.Region.Name, "virtflow_flavor": vm.Flavor.Name,
		}
		add(groupName("tenant", vm.Tenant.Name), host)
		add(groupName("region", vm.Region.Name), host)
		add(groupName("status", string(vm.Status)), host)
		if vm.Cluster != nil {
			vars["virtflow_cluster"] = vm.Cluster.Name
			add(groupName("cluster", vm.Cluster.Name), host)
		}
		if vm.Node != nil {
			vars["virtflow_node"] = vm.Node.Name
		}
		if vm.Image != nil {
			vars["virtflow_image"] = vm.Image.Name
		}
		if vm.Labels != nil && len(*vm.Labels) > 0 {
			vars["virtflow_labels"] = *vm.Labels
		}
		var addrs []map[string]any
		for _, pe := range vm.Ports.Edges {
			if pe == nil || pe.Node == nil {
				continue
			}
			p := pe.Node
			for _, ae := range p.IpAddresses.Edges {
				if ae == nil || ae.Node == nil {
					continue
				}
				a := map[string]any{"address": ae.Node.Address, "interface": p.Name}
				if p.Mac != nil {
					a["mac"] = *p.Mac
				}
				if p.Network != nil {
					a["network"], a["cidr"] = p.Network.Name, p.Network.Cidr
				}
				addrs = append(addrs, a)
			}
		}
		vars["virtflow_addresses"] = addrs
		if len(addrs) > 0 {
			vars["ansible_host"] = addrs[0]["address"]
		}
		hostvars[host] = vars
	}
	inv := Inventory{}
	var children []string
	for name, g := range groups {
		sort.Strings(g.Hosts)
		inv[name] = g
		children = append(children, name)
	}
	sort.Strings(children)
	inv["all"] = group{Children: append(children, "ungrouped")}
	inv["_meta"] = map[string]any{"hostvars": hostvars}
	return inv, hostvars, nil
}

func runInventory(ctx context.Context, a *app, args []string) error {
	fs := flag.NewFlagSet("inventory", flag.ContinueOnError)
	list := fs.Bool("list", false, "the whole inventory (what Ansible asks for)")
	host := fs.String("host", "", "one host's variables")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 || *list == (*host != "") {
		return usagef("inventory --list | --host NAME")
	}
	c, err := a.api()
	if err != nil {
		return err
	}
	inv, hostvars, err := buildInventory(ctx, c)
	if err != nil {
		return err
	}
	var out any = inv
	if *host != "" {
		vars, ok := hostvars[*host]
		if !ok {
			vars = map[string]any{} // Ansible expects an empty object for an unknown host
		}
		out = vars
	}
	// Ansible reads JSON whatever -o says.
	enc := json.NewEncoder(a.io.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("write inventory: %w", err)
	}
	return nil
}
