// Package alerting holds what people do to alerts beyond editing them: closing one, with the
// time and the closer recorded by the server. Alerts are recorded through the API (createAlert);
// who may read or change one is ent privacy's matter (package authz): operators, the
// maintainers of its host or node, and — for reading fatal alerts only — the tenants whose VMs
// run on that node.
package alerting
