// Package livestatus carries live status changes from the database to GraphQL subscribers
// on every server replica, through Redis pub/sub.
//
//   - event.go: the Event published for each change ({type, id, tenantID, clusterID,
//     nodeID}) and the Redis channel it travels on.
//   - publish.go: an ent hook (Install) that notices status changes of VMs, compute nodes
//     and region services, and any change of an assignment or an alert, and publishes them after the
//     transaction commits (tx.OnCommit), or right after the mutation outside a transaction.
//     A rolled-back change is never published.
//   - hub.go: one Redis subscription per process (Hub), fanned out to the local
//     subscribers, each with its own filter.
//   - watch.go: the subscription streams behind the GraphQL Subscription fields. Each event
//     is re-read with the subscriber's own viewer, so ent privacy decides what is delivered:
//     a tenant never receives another tenant's VM, an agent only its node's assignments.
//     One state of a record is delivered once: two events that re-read the same updated_at
//     (two mutations in one transaction, two changes committed close together) send it once.
//   - credentials.go, guard.go: changes to what a user's tokens grant (a token revoked, a
//     role binding granted or removed, a user disabled, a maintainer group left) are
//     published as Credentials events naming the user; a CredentialWatch makes each
//     websocket of that user, on every replica, authenticate again (and at its token's
//     expiry), and ends it once its credentials no longer hold or grant something else.
//
// Redis pub/sub delivers at most once: a subscriber that is disconnected misses events and
// must read the current state again when it reconnects (the node agent resyncs periodically).
package livestatus
