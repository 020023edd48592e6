package graph

import (
	"context"
	"reflect"
	"strings"

	"github.com/99designs/gqlgen/graphql"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/audit"
	"github.com/virtflow/virtflow/domain/identity"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/graph/gqlerr"
	"github.com/virtflow/virtflow/graph/model"
)

// auditor writes one audit row for every Mutation field that succeeds, through the
// mutation's own transaction: the change and its audit row commit together, and if the row
// cannot be written the mutation fails.
type auditor struct {
	client    *ent.Client
	requestID gqlerr.RequestIDFunc
}

func (a auditor) field(ctx context.Context, next graphql.Resolver) (any, error) {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil || fc.Object != "Mutation" {
		return next(ctx)
	}
	client := ent.FromContext(ctx)
	if client == nil {
		client = a.client
	}
	quiet := new(bool)
	ctx = context.WithValue(ctx, skipAuditKey{}, quiet)
	var (
		before       ent.Noder
		beforeTenant int
	)
	if id, ok := fc.Args["id"].(int); ok {
		if before = audit.Before(ctx, client, id); before != nil {
			beforeTenant = audit.TenantOf(authz.SystemContext(ctx, "audit"), before) // read now: a delete removes the record
		}
	}
	res, err := next(ctx)
	if err != nil || *quiet {
		return res, err
	}
	action := fc.Field.Name
	if force, _ := fc.Args["force"].(*bool); force != nil && *force {
		// deleteVirtualMachine and drainNode with force skip the node's confirmation: say so.
		action += "(force)"
	}
	entry := audit.Entry{
		Action:    action,
		Subject:   subjectOf(res),
		RequestID: a.requestID(ctx),
		SourceIP:  identity.SourceIP(ctx),
		Before:    before,
		After:     afterOf(res),
	}
	if entry.Subject == nil && before != nil {
		entry.Subject, entry.TenantID = before, beforeTenant
	} else if before != nil && nodeID(entry.Subject) != nodeID(before) {
		// The mutation made another record than the one its id names (restoreBackup,
		// cloneVirtualMachine: a new VM): there is no "before" of the record audited.
		entry.Before = nil
	}
	if _, owned := entry.Subject.(interface{ QueryTenant() *ent.TenantQuery }); owned && strings.HasPrefix(action, "create") {
		// A create stores the tenant its input names: taken from there rather than read back
		// (audit.TenantOf), for the records that have a tenant; 0 leaves it to TenantOf.
		entry.TenantID = inputTenant(fc.Args["input"])
	}
	if tok, ok := entry.Subject.(*ent.APIToken); ok && authz.FromContext(ctx) == nil && tok.Edges.Owner != nil {
		// login: nobody was signed in yet; the actor is who signed in.
		entry.Actor, entry.ActorID = tok.Edges.Owner.Username, tok.Edges.Owner.ID
	}
	if reg, ok := res.(*model.RegisterNodePayload); ok && reg.APIToken != nil && reg.APIToken.Edges.Owner != nil {
		// registerNode: signed in by its join token only; the actor is the node's agent.
		entry.Actor, entry.ActorID = reg.APIToken.Edges.Owner.Username, reg.APIToken.Edges.Owner.ID
	}
	if err := audit.Write(ctx, client, entry); err != nil {
		return nil, err
	}
	return res, nil
}

// nodeID is the ID field of an ent record (0 for none).
func nodeID(n ent.Noder) int64 {
	v := reflect.ValueOf(n)
	if !v.IsValid() || v.Kind() != reflect.Pointer || v.IsNil() {
		return 0
	}
	if f := v.Elem().FieldByName("ID"); f.IsValid() && f.CanInt() {
		return f.Int()
	}
	return 0
}

// skipAuditKey holds, in a Mutation field's context, the flag skipAudit sets.
type skipAuditKey struct{}

// skipAudit tells the auditor that the running Mutation field did routine telemetry not
// worth an audit row: a node heartbeat that changed nothing but its time. Anything that
// changes state is audited.
func skipAudit(ctx context.Context) {
	if quiet, ok := ctx.Value(skipAuditKey{}).(*bool); ok {
		*quiet = true
	}
}

// subjectOf finds the record a mutation result is about: the result itself, or the record
// inside a payload (a TokenPayload's apiToken).
func subjectOf(res any) ent.Noder {
	if n, ok := res.(ent.Noder); ok && !reflect.ValueOf(n).IsNil() {
		return n
	}
	v := reflect.Indirect(reflect.ValueOf(res))
	if v.Kind() != reflect.Struct {
		return nil
	}
	for i := range v.NumField() {
		if f := v.Field(i); f.CanInterface() {
			if n, ok := f.Interface().(ent.Noder); ok && !f.IsNil() {
				return n
			}
		}
	}
	return nil
}

// afterOf is what the audit row keeps of a result: records and payloads (redacted by package
// audit), not bare ids.
func afterOf(res any) any {
	switch reflect.Indirect(reflect.ValueOf(res)).Kind() {
	case reflect.Struct:
		return res
	}
	return nil
}

// inputTenant returns the TenantID (int or *int) of a create mutation's input struct, or 0.
func inputTenant(input any) int {
	v := reflect.Indirect(reflect.ValueOf(input))
	if v.Kind() != reflect.Struct {
		return 0
	}
	f := v.FieldByName("TenantID")
	switch {
	case !f.IsValid():
		return 0
	case f.Kind() == reflect.Int:
		return int(f.Int())
	case f.Kind() == reflect.Pointer && !f.IsNil() && f.Elem().Kind() == reflect.Int:
		return int(f.Elem().Int())
	}
	return 0
}
