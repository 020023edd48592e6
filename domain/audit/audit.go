package audit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"unicode"

	"github.com/99designs/gqlgen/graphql"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/schema/fieldtype"
)

// Entry is one change to record.
type Entry struct {
	// Action is what was done: the GraphQL mutation field (updateRack), or a system actor's
	// verb named the same way (markNodeDown).
	Action string
	// Subject is the record the change is about; ObjectType, ObjectID and TenantID are read
	// from it when they are not set.
	Subject    ent.Noder
	ObjectType string // e.g. Rack
	ObjectID   int
	TenantID   int
	Before     any // the object before the change (nil on create); see Before
	After      any // the object after the change (nil on delete)
	RequestID  string
	SourceIP   string // the client address; the viewer's when empty
	// System names the component that made the change on its own; the row's actor is then
	// "system:<component>", whoever the viewer of ctx is. Empty for a viewer's change.
	System SystemActor
	// Actor and ActorID name who acted when no viewer is signed in yet (a login).
	Actor   string
	ActorID int
}

// The audit log's redaction rule, applied by key to every JSON object of an entry's
// Before and After images (ent records with their edges, mutation payloads), whatever
// record they belong to. Keys are compared normalized: lower case, without "_" and "-", so
// user_data, userData and UserData are one key.
//
//   - digestKeys hold what a tenant wrote and may carry secrets (user-data, and the config
//     drive an assignment carries it in): the row keeps "[redacted: <size> bytes,
//     sha256:<hex>]", enough to tell two versions apart and to check a copy, never the text.
//   - secretKeys, and keys ending in "secret" or "password", hold secrets (token
//     plaintexts and hashes, passwords, hook and webhook secrets): the row keeps
//     "[redacted]" only, since a hash of a short secret could be guessed back.
//
// ent's Sensitive fields never reach JSON at all; this rule also covers the fields that
// are not Sensitive because the API returns them (user-data) and the payloads of
// mutations (a new token's plaintext).
var (
	digestKeys = map[string]bool{"userdata": true, "configdrive": true}
	secretKeys = map[string]bool{"token": true, "tokenhash": true, "password": true, "passwordhash": true}
)

// Redacted is the placeholder of a secret in audit rows.
const Redacted = "[redacted]"

// normalKey is key in lower case without "_" and "-".
func normalKey(key string) string {
	// A loop, not strings.NewReplacer: a Replacer builds its tables on first use, and a new
	// one per key made that the most allocating step of writing an audit row.
	return strings.Map(func(r rune) rune {
		if r == '_' || r == '-' {
			return -1
		}
		return unicode.ToLower(r)
	}, key)
}

// isSecretKey reports whether the value under key is a secret of the redaction rule.
func isSecretKey(key string) bool {
	k := normalKey(key)
	return secretKeys[k] || strings.HasSuffix(k, "secret") || strings.HasSuffix(k, "password")
}

// Digest is how a value under a digest key reads in audit rows: its size and SHA-256.
func Digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return fmt.Sprintf("[redacted: %d bytes, sha256:%s]", len(s), hex.EncodeToString(sum[:]))
}

// Write records e for the viewer of ctx (or e.System) with client, which must be the
// transaction's client so that the row commits or rolls back with the change. It is the
// one writer of audit rows: the GraphQL layer and every SystemActor use it.
func Write(ctx context.Context, client *ent.Client, e Entry) error {
	// The audit writer is a component of its own: it may write audit rows, which no user may.
	system := authz.SystemContext(ctx, "audit")
	if e.Subject != nil && !reflect.ValueOf(e.Subject).IsNil() {
		if e.ObjectType == "" {
			e.ObjectType, e.ObjectID = typeAndID(e.Subject)
		}
		if e.TenantID == 0 {
			e.TenantID = TenantOf(system, e.Subject)
		}
	}
	v := authz.FromContext(ctx)
	actor, actorID, tokenID, source := "anonymous", 0, 0, ""
	if e.System != "" {
		actor = e.System.Name()
	} else if v != nil {
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
	if _, err := create.Save(system); err != nil {
		return fmt.Errorf("audit: write: %w", err)
	}
	return nil
}

// Before reads record id, whole, through client as the audit component, for an entry's
// Before image; nil when there is no such record. It ignores the GraphQL selection of the
// field being resolved, which ent's field collection would otherwise apply: the image would
// hold only the fields the client asked for, every other one zero (createdAt 0001-01-01).
func Before(ctx context.Context, client *ent.Client, id int) ent.Noder {
	n, err := client.Noder(unselected{authz.SystemContext(ctx, "audit")}, id)
	if err != nil || reflect.ValueOf(n).IsNil() {
		return nil // the resolver reports a record that does not exist
	}
	return n
}

// unselected is a context without the GraphQL field being resolved.
type unselected struct{ context.Context }

// Value hides the field context (graphql.GetFieldContext then finds none).
func (c unselected) Value(key any) any {
	v := c.Context.Value(key)
	if _, ok := v.(*graphql.FieldContext); ok {
		return nil
	}
	return v
}

// typeAndID names a record's type (Rack) and id.
func typeAndID(n ent.Noder) (string, int) {
	typ := fmt.Sprintf("%T", n)
	typ = typ[strings.LastIndexByte(typ, '.')+1:]
	id := reflect.Indirect(reflect.ValueOf(n)).FieldByName("ID")
	if id.IsValid() && id.CanInt() {
		return typ, int(id.Int())
	}
	return typ, 0
}

// TenantOf returns the tenant a record belongs to, for tenant admins reading their audit
// log; 0 when none (or the record is gone: read it before a delete).
func TenantOf(ctx context.Context, n ent.Noder) int {
	switch v := n.(type) {
	case *ent.Tenant:
		return v.ID
	case interface{ QueryTenant() *ent.TenantQuery }:
		if id, err := v.QueryTenant().OnlyID(ctx); err == nil {
			return id
		}
	}
	return 0
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

// zeroTime is how encoding/json writes a zero time.Time: an optional time field that is not
// set (ent gives such fields a plain time.Time, and omitempty does not omit a struct).
const zeroTime = "0001-01-01T00:00:00Z"

// scrub applies the redaction rule (see digestKeys) to doc and drops unset times, which
// would read as year 1.
func scrub(doc any) {
	switch d := doc.(type) {
	case map[string]any:
		for k, v := range d {
			if v == nil || v == "" {
				continue // nothing to hide; an empty value stays readable as such
			}
			if digestKeys[normalKey(k)] {
				if s, ok := v.(string); ok {
					d[k] = Digest(s)
				} else {
					raw, _ := json.Marshal(v) // decoded from JSON: encodes again
					d[k] = Digest(string(raw))
				}
				continue
			}
			if _, str := v.(string); str && isSecretKey(k) {
				d[k] = Redacted
				continue
			}
			if isSecretKey(k) {
				if _, nested := v.(map[string]any); !nested {
					d[k] = Redacted // a number or list under a secret key
					continue
				}
			}
			if v == zeroTime {
				delete(d, k)
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
