// Package cli is the virtflow command-line tool (cmd/virtflow is its thin main): sign in,
// list, get and describe any type of the graph, create and act on VMs, cordon and drain
// nodes, watch live status, and produce an Ansible dynamic inventory.
//
// Typed operations (VM and node actions, the inventory, subscriptions) go through
// apiclient's generated functions. get, list and describe work on every node type of the
// schema: they read the schema by introspection (the list query of each type, its scalar
// fields and its edges) and build the query from it, so a new type in the schema is
// listable without a change here.
//
// Configuration: `virtflow login` stores the endpoint and token in
// $XDG_CONFIG_HOME/virtflow/config.json (mode 0600); --endpoint/--token and
// VIRTFLOW_ENDPOINT/VIRTFLOW_TOKEN override it.
package cli
