package schema

import (
	"context"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"

	"github.com/virtflow/virtflow/agent/configdrive"
	"github.com/virtflow/virtflow/domain/apierr"
)

// SSHKey is an SSH public key that VMs are created with (sshKeyIDs of createVirtualMachine):
// the node agent puts it on the VM's config drive, for the image's default user. It belongs to
// a tenant (shared by the tenant's members, who see and write it like the tenant's other
// resources) or to one user (who reads it as their own). The key is validated and stored in
// canonical form, and its SHA256 fingerprint is computed by the server.
type SSHKey struct {
	ent.Schema
}

// Mixin of the SSHKey.
func (SSHKey) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}, AuthzMixin{}} }

// Fields of the SSHKey.
func (SSHKey) Fields() []ent.Field {
	return []ent.Field{
		field.String("name").NotEmpty().MaxLen(64).Annotations(entgql.OrderField("NAME")),
		descriptionField(),
		field.Text("public_key").NotEmpty().MaxLen(16384).Immutable().
			Annotations(entgql.Skip(entgql.SkipWhereInput)).
			Comment("one authorized_keys line: type, base64 key and an optional comment"),
		field.String("fingerprint").Optional().
			Annotations(entgql.Skip(entgql.SkipMutationCreateInput | entgql.SkipMutationUpdateInput)).
			Comment("SHA256 fingerprint as ssh-keygen -l prints it; set by the server"),
	}
}

// Edges of the SSHKey.
func (SSHKey) Edges() []ent.Edge {
	fixed := entgql.Skip(entgql.SkipMutationUpdateInput)
	return []ent.Edge{
		edge.From("tenant", Tenant.Type).Ref("ssh_keys").Unique().Annotations(fixed).
			Comment("the tenant whose members share the key"),
		edge.From("user", User.Type).Ref("ssh_keys").Unique().Annotations(fixed).
			Comment("the user the key belongs to, when it is not a tenant's"),
		edge.From("virtual_machines", VirtualMachine.Type).Ref("ssh_keys").
			Annotations(entgql.RelayConnection(), entgql.Skip(entgql.SkipMutationCreateInput|entgql.SkipMutationUpdateInput)),
	}
}

// Indexes of the SSHKey: names are unique per owner.
func (SSHKey) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("name").Edges("tenant").Unique(),
		index.Fields("name").Edges("user").Unique(),
	}
}

// Annotations of the SSHKey.
func (SSHKey) Annotations() []schema.Annotation { return editable("sshKeys") }

// Hooks of the SSHKey.
func (SSHKey) Hooks() []ent.Hook { return []ent.Hook{sshKeyFingerprint()} }

// sshKeyFingerprint validates a new key, stores it in canonical form with its fingerprint,
// and makes sure it has exactly one owner.
func sshKeyFingerprint() ent.Hook {
	type keyMutation interface {
		PublicKey() (string, bool)
		SetPublicKey(string)
		SetFingerprint(string)
		TenantIDs() []int
		UserIDs() []int
	}
	return func(next ent.Mutator) ent.Mutator {
		return ent.MutateFunc(func(ctx context.Context, m ent.Mutation) (ent.Value, error) {
			km, ok := m.(keyMutation)
			if !ok || !m.Op().Is(ent.OpCreate) {
				return next.Mutate(ctx, m)
			}
			if len(km.TenantIDs()) == len(km.UserIDs()) {
				return nil, apierr.Validation("tenantID", "an SSH key belongs to a tenant or to a user: name exactly one")
			}
			if key, ok := km.PublicKey(); ok {
				fp, canonical, err := configdrive.SSHKeyFingerprint(key)
				if err != nil {
					return nil, apierr.Validation("publicKey", "%v", err)
				}
				km.SetPublicKey(canonical)
				km.SetFingerprint(fp)
			}
			return next.Mutate(ctx, m)
		})
	}
}
