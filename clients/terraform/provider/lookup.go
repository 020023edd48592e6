package provider

import (
	"context"
	"fmt"

	"github.com/virtflow/virtflow/clients/apiclient"
)

// isID reports whether s is a GraphQL id (VirtFlow's ids are decimal numbers); anything else
// given to terraform import is a name.
func isID(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// lookupID finds the id of the one object of the list query list whose field key equals
// value: none or several is an error saying so.
func lookupID(ctx context.Context, c *apiclient.Client, list, key, value string) (string, error) {
	if c == nil {
		return "", fmt.Errorf("the provider is not configured")
	}
	q := fmt.Sprintf("query($v: String) { l: %s(first: 2, where: {%s: $v}) { edges { node { id } } } }", list, key)
	var out struct {
		L struct {
			Edges []struct{ Node struct{ ID string } }
		}
	}
	if err := c.Do(ctx, q, map[string]any{"v": value}, &out); err != nil {
		return "", err
	}
	switch len(out.L.Edges) {
	case 0:
		return "", fmt.Errorf("NOT_FOUND: nothing in %s has %s %q (or the token may not read it)", list, key, value)
	case 1:
		return out.L.Edges[0].Node.ID, nil
	}
	return "", fmt.Errorf("more than one of %s has %s %q: import it by id", list, key, value)
}

// importLists are the list queries of the hand-written resources whose names are unique,
// so that they import by name as well as by id.
var importLists = map[string]string{
	"tenant":             "tenants",
	"network":            "networks",
	"flavor":             "flavors",
	"ssh_key":            "sshKeys",
	"volume":             "volumes",
	"virtual_machine":    "virtualMachines",
	"region_service":     "regionServices",
	"kubernetes_cluster": "kubernetesClusters",
	"load_balancer":      "loadBalancers",
	"global_service":     "globalServices",
	"rack":               "racks",
	"host":               "hosts",
}
