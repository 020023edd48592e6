package audit

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/schema/fieldtype"
)

// Entry is one mutation to record.
type Entry struct {
	Action     string // the GraphQL mutation field, e.g. updateRack
	ObjectType string // e.g. Rack
	ObjectID   int
	TenantID   int
	Before     any // the object before the change (nil on create)
	After      any // the object after the change (nil on delete)
	RequestID  string
	SourceIP   string // the client address; the viewer's when empty
	// Actor and ActorID name who acted when no viewer is signed in yet (a login).
	Actor   string
	ActorID int
}

// secretKeys are JSON keys whose values never reach the audit log.
var secretKeys = map[string]bool{"token": true, "password": true, "tokenHash": true, "token_hash": true, "passwordHash": true, "password_hash": true}

// Write records e for the viewer of ctx with client, which must be the transaction's client
// so that the row commits or rolls back with the change.
func Write(ctx context.Context, client *ent.Client, e Entry) error {
	v := authz.FromContext(ctx)
	actor, actorID, tokenID, source := "anonymous", 0, 0, ""
	if v != nil {
		actor, actorID, tokenID, source = v.Name, v.UserID, v.TokenID, v.SourceIP
	} else if e.Actor != "" {
		actor, actorID = e.Actor, e.ActorID
	}
	if e.SourceIP != "" {
		source = e.SourceIP
	}
	before, err := redacted(e.Before)
	if err != nil {
		return fmt.Errorf("audit: encode before: %w", err)
	}
	after, err := redacted(e.After)
	if err != nil {
		return fmt.Errorf("audit: encode after: %w", err)
	}
	create := client.AuditLog.Create().
		SetActor(actor).
		SetAction(e.Action).
		SetRequestID(e.RequestID).
		SetSourceIP(source)
	if actorID != 0 {
		create.SetActorID(actorID)
	}
	if tokenID != 0 {
		create.SetTokenID(tokenID)
	}
	if e.ObjectType != "" {
		create.SetObjectType(e.ObjectType)
	}
	if e.ObjectID != 0 {
		create.SetObjectID(e.ObjectID)
	}
	if e.TenantID != 0 {
		create.SetTenantID(e.TenantID)
	}
	if before != nil {
		create.SetBefore(before)
	}
	if after != nil {
		create.SetAfter(after)
	}
	// The audit writer is a component of its own: it may write audit rows, which no user may.
	if _, err := create.Save(authz.SystemContext(ctx, "audit")); err != nil {
		return fmt.Errorf("audit: write: %w", err)
	}
	return nil
}

// redacted encodes v as JSON with secrets removed. ent already leaves sensitive fields out of
// its JSON; this also drops token plaintexts and passwords of mutation payloads and inputs.
func redacted(v any) (fieldtype.JSON, error) {
	if v == nil || (reflect.ValueOf(v).Kind() == reflect.Pointer && reflect.ValueOf(v).IsNil()) {
		return nil, nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	scrub(doc)
	out, err := json.Marshal(doc)
	return fieldtype.JSON(out), err
}

func scrub(doc any) {
	switch d := doc.(type) {
	case map[string]any:
		for k, v := range d {
			if secretKeys[k] || strings.HasSuffix(strings.ToLower(k), "secret") {
				d[k] = "[redacted]"
				continue
			}
			scrub(v)
		}
	case []any:
		for _, v := range d {
			scrub(v)
		}
	}
}
