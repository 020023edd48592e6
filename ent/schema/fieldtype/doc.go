// Package fieldtype holds the Go types of structured ent fields (labels, hardware spec parts,
// price tables, opaque JSON documents) together with their GraphQL marshalling, so the same
// value travels unchanged from GraphQL input to the database and back.
package fieldtype
