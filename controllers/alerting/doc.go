// Package alerting turns events into alerts and notifications, and holds what people do to
// alerts (acknowledge, close).
//
// Events are rows. Agents report check results in batches (reportEvents, [Report]: an
// agent only for its own node); the node monitor's NOT_READY/DOWN transitions and
// provisioning tasks that failed for good ([TaskFailed]) file events too ([Record]). Each
// batch records, in the transaction that stored it, an outbox task (TypeEvents, queue
// [Queue]) that runs the rules in a worker ([Engine]), one transaction per chunk of events
// with the chunk's rule states locked in a fixed order; a worker dying mid-batch loses
// nothing: the task runs again and skips the events already processed.
//
// Rules (EventRule) run in the seed's order of kinds, then by priority:
//
//   - FILTER: a matching event is dropped (deleted) — except a recovery: a SUCCESS whose
//     fingerprint has an open alert, or whose ACTION rule last acted on a failure, goes on
//     to the other rules, so a filter on SUCCESS never keeps an alert open or swallows a
//     recovery hook.
//   - SILENCE: a matching event is kept, flagged silenced, and nothing acts on it. Explicit
//     silences (Silence rows between startsAt and endsAt, at most 30 days), an open
//     maintenance of the event's node or host, and a cordoned or draining node silence the
//     same way; the silence lifts when the maintenance closes or the node is uncordoned.
//   - AGGREGATE: matching events are counted into a group (groupBy: check, status, node,
//     host, rack, cluster, label:<key>); the group acts once, after its group wait
//     (aggregateWindowSeconds) and no sooner than groupIntervalSeconds after its last
//     notification (TypeGroup, a delayed outbox task).
//   - ACTION: CREATE_ALERT, RESOLVE_ALERT or CALL_HOOK, after Occurrences (consecutive
//     events of one status) and ReissueDuration (repeats ignored for reissueSeconds);
//     see [Decide]. A SUCCESS following a failure is a recovery: CREATE_ALERT resolves its
//     alert, CALL_HOOK notifies it.
//
// Matchers are globs on the check name and the node, host, rack and cluster names, an
// optional status, and label equalities (node labels overlaid by the event's).
//
// Alerts are deduplicated by the database: a unique partial index allows one OPEN alert per
// fingerprint (check + node or host), and [Raise] is an upsert that counts a repeat (once per event, however many rules match)
// (occurrences, lastSeenAt) — two workers racing give one alert counting two. Raised and
// resolved alerts are audited as system:worker.
//
// Hooks: CALL_HOOK records a HookDelivery and, in the same transaction, its delivery task
// (TypeHook). The POST carries Idempotency-Key (a redelivery carries the same key) and,
// when the rule has a hookSecret, X-VirtFlow-Signature: sha256=<HMAC-SHA256 of the body>.
// Failures are retried with backoff; every attempt's outcome stays on the delivery
// (hookDeliveries query).
//
// Suppression (suppress.go): an open alert on a power zone, a PDU, a switch or router, or a
// rack suppresses the open alerts of the hosts that depend on it through the power and cable
// graph (suppressedBy), recomputed by [Reconcile] whenever such a cause opens or ends.
//
// From outside: [Receive] maps Prometheus Alertmanager's webhook (served by
// [AlertmanagerHandler]) to alerts on hosts, nodes, racks and power zones; [Route] sends a
// hook to each maintainer group with a webhook responsible for an alert's resource;
// [WarrantyAlerts] raises lifecycle alerts before hosts' warranties end.
//
// Who may read or change an alert is ent privacy's matter (package authz): operators, the
// maintainers of its host or node, and — for reading fatal alerts only — the tenants whose
// VMs run on that node; alertChanged delivers only what the subscriber may read.
package alerting
