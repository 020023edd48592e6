// Package audit writes VirtFlow's audit log: one AuditLog row per mutation, in the same
// transaction as the change, with who did it (actor, token), what (action, object type and
// id, the object before and after with secrets redacted), when, and from where (request id,
// source address). If the row cannot be written, the mutation fails with it.
package audit
