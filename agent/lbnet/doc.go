// Package lbnet is the data plane of VirtFlow's load balancers on a node: the seed's L4 load
// balancer, stateless and anycast (every node chosen for a load balancer announces its VIP
// over BGP, so the fabric's equal-cost paths spread clients over them), realized with
// HAProxy, which also provides the optional L7 tier (HTTP listeners) and checks the members.
//
// A Node holds the load balancers a node serves (Spec: VIP, listeners, members, check
// interval). Reconcile renders one HAProxy configuration for all of them (Render), puts the
// VIPs on the node's loopback, and starts or reloads one HAProxy in master-worker mode
// (Proxy). Sync reads the members' health from HAProxy's own checks over its stats socket
// and announces a VIP while the proxy runs and at least one member of the load balancer is
// UP, withdrawing it otherwise: a node whose HAProxy died or whose members all failed stops
// attracting traffic, and a node that dies altogether loses its BGP session, which removes
// its path at the router. Report is what the agent sends back to the API.
//
// The package has no dependency on the API (ent, GraphQL): the node agent turns its
// assignments into Specs and its reports into a mutation.
package lbnet
