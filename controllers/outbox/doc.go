// Package outbox is VirtFlow's transactional outbox: the way a mutation hands work to the
// asynchronous workers without ever losing it.
//
// A mutation calls [Enqueue] with its own transactional ent client: the task becomes an
// OutboxTask row that commits or rolls back with the mutation. A [Relay], running in every
// server and worker process (any number of them side by side), moves due rows to Asynq
// (Redis) and marks them dispatched:
//
//   - Rows are claimed in batches with SELECT … FOR UPDATE SKIP LOCKED on PostgreSQL, so
//     concurrent relays never take the same row; on SQLite (one embedded process) a plain
//     SELECT inside the writer's transaction is enough.
//   - The Asynq task id is the row's dedup key, or "outbox:<row id>": if a relay dies between
//     enqueueing and marking, the next one enqueues the same id again, Asynq answers
//     ErrTaskIDConflict ("already there") and the row is simply marked. Completed tasks are
//     kept in Redis for [Config.Retention]'s hour so the id still conflicts after the task ran.
//   - While Redis is unreachable a row stays undispatched: its attempts and last error are
//     recorded and the relay backs off exponentially with jitter (cenkalti/backoff, up to
//     about [Config.MaxBackoff]); nothing accepted is lost.
//   - A dispatched task stays in the outbox's care until a worker acknowledges it
//     ([Acknowledge], Asynq middleware: the task succeeded or failed for good). Every
//     [Config.Verify] (30 s) a relay enqueues the unacknowledged tasks again ([Relay.Verify]):
//     Redis refuses the task id while it holds the task, and takes it back when it lost it
//     (restarted empty, flushed), so lost work resumes within Verify, not at the reconcile
//     deadline.
//   - Dispatched rows are purged after [Config.Purge] (24 h by default).
//
// The relay polls every [Config.Poll] (200 ms by default) and is woken at once when a
// transaction of the same process that enqueued something commits.
//
// The outbox table is internal (no GraphQL); its rows are written and read as the system.
package outbox
