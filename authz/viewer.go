package authz

import (
	"context"
	"slices"

	"entgo.io/ent/privacy"
)

// Viewer is who is acting: a user (through a session or API token), a node agent, or the
// system itself (workers, internal integrity checks).
type Viewer struct {
	UserID   int
	Name     string
	TokenID  int
	ReadOnly bool // the token's scope is read-only
	Bindings []Binding
	// MaintainerID and MaintainerGroupIDs identify the maintainer the user is, for write-own.
	MaintainerID       int
	MaintainerGroupIDs []int
	// SourceIP is the client address the request came from.
	SourceIP string
	system   bool
}

// System is the viewer of VirtFlow's own components (workers, the demo loader, internal
// checks); component names it in audit rows.
func System(component string) *Viewer {
	return &Viewer{Name: "system:" + component, system: true}
}

// IsSystem reports whether v is the system viewer.
func (v *Viewer) IsSystem() bool { return v != nil && v.system }

type viewerKey struct{}

// NewContext returns ctx carrying v.
func NewContext(ctx context.Context, v *Viewer) context.Context {
	return context.WithValue(ctx, viewerKey{}, v)
}

// FromContext returns the viewer of ctx, or nil.
func FromContext(ctx context.Context) *Viewer {
	v, _ := ctx.Value(viewerKey{}).(*Viewer)
	return v
}

// Actor names the viewer of ctx in the records that say who did something (a closed alert's
// closedBy, a maintenance's openedBy, a drain's reasons): its user name (at most 64
// characters) or "system:<component>", and "unknown" when ctx has no named viewer.
func Actor(ctx context.Context) string {
	if v := FromContext(ctx); v != nil && v.Name != "" {
		return v.Name
	}
	return "unknown"
}

// SystemContext returns ctx acting as the system component.
func SystemContext(ctx context.Context, component string) context.Context {
	return NewContext(ctx, System(component))
}

// Can reports whether v may perform act on obj in the platform domain.
func (v *Viewer) Can(obj, act string) bool {
	if v.IsSystem() {
		return true
	}
	if v == nil || (v.ReadOnly && act != ActRead) {
		return false
	}
	for _, b := range v.Bindings {
		if b.Domain == Platform && Allowed(b.Role, Platform, obj, act) {
			return true
		}
	}
	return false
}

// Domains returns the ids of the domains of kind ("tenant" or "node") in which v may
// perform act on obj.
func (v *Viewer) Domains(kind, obj, act string) []int {
	if v == nil || (v.ReadOnly && act != ActRead) {
		return nil
	}
	var ids []int
	for _, b := range v.Bindings {
		k, id, ok := DomainID(b.Domain)
		if ok && k == kind && !slices.Contains(ids, id) && Allowed(b.Role, b.Domain, obj, act) {
			ids = append(ids, id)
		}
	}
	return ids
}

// HasRole reports whether v holds role in any domain.
func (v *Viewer) HasRole(role Role) bool {
	if v == nil {
		return false
	}
	for _, b := range v.Bindings {
		if b.Role == role {
			return true
		}
	}
	return false
}

// Unrestricted lets an integrity check (rack-unit overlap, cable ends, addresses in their
// network, dependents of a delete) see every row, whatever the viewer may read: a device the
// viewer cannot see still occupies its units. Use it for those reads only, never to write.
func Unrestricted(ctx context.Context) context.Context {
	return privacy.DecisionContext(ctx, privacy.Allow)
}
