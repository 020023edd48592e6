// Package authz decides what a viewer may read and write, for every entity and every path
// into it (lists, totalCount, node(id:), nested edges, where filters, subscriptions), in one
// place: the ent privacy policy that every schema shares (ent/schema/authz.go).
//
// The model is Casbin's RBAC with domains (model.conf, embedded). A domain is the platform,
// one tenant (tenant:<id>) or one node (node:<id>). What each role may do — the "p" rules —
// is the policy in policy.go, compiled into the binary. Who holds which role — the "g"
// bindings — are RoleBinding rows in the database, loaded with the viewer on every request,
// so a grant or revoke takes effect at once on every replica.
//
// Roles: admin (everything), operator (physical topology, compute, operations), viewer
// (read), maintainer (read, and write exactly the resources that name them or their groups),
// tenant-admin and tenant-member (their tenant's virtual resources; quotas read-only), agent
// (its own node: heartbeat, its assignments, its events). Workers and internal checks act as
// the system viewer, an explicit role of its own.
package authz
