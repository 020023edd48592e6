package alerting

import (
	"context"
	"fmt"

	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/domain/egress"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/eventrule"
	"github.com/virtflow/virtflow/ent/hook"
	"github.com/virtflow/virtflow/ent/maintainergroup"
	"github.com/virtflow/virtflow/internal/platform/secrets"
)

// Purposes of the sealed hook secrets (secrets.Keyring's additional data): a value sealed
// for one column does not open in the other.
const (
	PurposeHookSecret    = "event_rules.hook_secret"
	PurposeWebhookSecret = "maintainer_groups.webhook_secret"
)

// MaxSecretLen bounds a hook secret in clear (its column holds the longer sealed text).
const MaxSecretLen = 256

// Install adds the write rules of hooks to client's event rules and maintainer groups
// (and those of its transactions): hookURL and webhookURL must be URLs the egress policy
// p lets the workers POST to (egress.Policy.Validate: VALIDATION naming the field), and
// hookSecret and webhookSecret are stored sealed under keys. A hook (not a check in the
// resolvers) so that every write path — GraphQL, imports, fixtures — stores the same.
func Install(client *ent.Client, p *egress.Policy, keys *secrets.Keyring) {
	client.EventRule.Use(func(next ent.Mutator) ent.Mutator {
		return hook.EventRuleFunc(func(ctx context.Context, m *ent.EventRuleMutation) (ent.Value, error) {
			if u, ok := m.HookURL(); ok && u != "" {
				if err := p.Validate("hookURL", u); err != nil {
					return nil, err
				}
			}
			if s, ok := m.HookSecret(); ok {
				sealed, err := seal(keys, "hookSecret", s, PurposeHookSecret)
				if err != nil {
					return nil, err
				}
				m.SetHookSecret(sealed)
			}
			return next.Mutate(ctx, m)
		})
	})
	client.MaintainerGroup.Use(func(next ent.Mutator) ent.Mutator {
		return hook.MaintainerGroupFunc(func(ctx context.Context, m *ent.MaintainerGroupMutation) (ent.Value, error) {
			if u, ok := m.WebhookURL(); ok && u != "" {
				if err := p.Validate("webhookURL", u); err != nil {
					return nil, err
				}
			}
			if s, ok := m.WebhookSecret(); ok {
				sealed, err := seal(keys, "webhookSecret", s, PurposeWebhookSecret)
				if err != nil {
					return nil, err
				}
				m.SetWebhookSecret(sealed)
			}
			return next.Mutate(ctx, m)
		})
	})
}

// seal is the stored form of a secret written to field: sealed, unless it is sealed under
// keys already (a value read from the database and written back) or empty.
func seal(keys *secrets.Keyring, field, s, purpose string) (string, error) {
	if s == "" {
		return "", nil
	}
	if secrets.IsSealed(s) {
		if _, err := keys.Open(s, purpose); err == nil {
			return s, nil
		}
	}
	if len(s) > MaxSecretLen {
		return "", apierr.Validation(field, "at most %d bytes, got %d", MaxSecretLen, len(s))
	}
	return keys.Seal(s, purpose)
}

// SealStored seals the hook secrets stored in clear (rows written before secrets were
// sealed) and re-seals those under an older key of keys, once at startup. Each row is
// updated only if it still holds the value read, so processes starting together do not
// seal twice. It returns how many rows it changed.
func SealStored(ctx context.Context, client *ent.Client, keys *secrets.Keyring) (int, error) {
	ctx = system(ctx)
	n := 0
	rules, err := client.EventRule.Query().Where(eventrule.HookSecretNEQ("")).Select(eventrule.FieldID, eventrule.FieldHookSecret).All(ctx)
	if err != nil {
		return 0, fmt.Errorf("seal hook secrets: %w", err)
	}
	for _, r := range rules {
		if keys.Current(r.HookSecret) {
			continue
		}
		plain, err := keys.Open(r.HookSecret, PurposeHookSecret)
		if err != nil {
			return n, fmt.Errorf("seal hook secret of event rule %d: %w", r.ID, err)
		}
		sealed, err := keys.Seal(plain, PurposeHookSecret)
		if err != nil {
			return n, err
		}
		// The write hook keeps a value sealed under keys as it is.
		k, err := client.EventRule.Update().Where(eventrule.ID(r.ID), eventrule.HookSecret(r.HookSecret)).
			SetHookSecret(sealed).Save(ctx)
		if err != nil {
			return n, fmt.Errorf("seal hook secret of event rule %d: %w", r.ID, err)
		}
		n += k
	}
	groups, err := client.MaintainerGroup.Query().Where(maintainergroup.WebhookSecretNEQ("")).
		Select(maintainergroup.FieldID, maintainergroup.FieldWebhookSecret).All(ctx)
	if err != nil {
		return n, fmt.Errorf("seal webhook secrets: %w", err)
	}
	for _, g := range groups {
		if keys.Current(g.WebhookSecret) {
			continue
		}
		plain, err := keys.Open(g.WebhookSecret, PurposeWebhookSecret)
		if err != nil {
			return n, fmt.Errorf("seal webhook secret of maintainer group %d: %w", g.ID, err)
		}
		sealed, err := keys.Seal(plain, PurposeWebhookSecret)
		if err != nil {
			return n, err
		}
		k, err := client.MaintainerGroup.Update().Where(maintainergroup.ID(g.ID), maintainergroup.WebhookSecret(g.WebhookSecret)).
			SetWebhookSecret(sealed).Save(ctx)
		if err != nil {
			return n, fmt.Errorf("seal webhook secret of maintainer group %d: %w", g.ID, err)
		}
		n += k
	}
	return n, nil
}
