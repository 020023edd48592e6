// Package model holds GraphQL models that gqlgen generates for types not bound to ent.
package model
