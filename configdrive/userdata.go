package configdrive

import (
	"fmt"
	"slices"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/virtflow/virtflow/apierr"
)

// sudoAll is the sudo rule of a User with Sudo set.
const sudoAll = "ALL=(ALL) NOPASSWD:ALL"

// renderUserData parses the request's cloud-config and merges the Spec's SSH keys and
// users into it. Without keys or users the request's text is kept byte for byte
// (comments included); otherwise the merged document is encoded again (YAML comments
// are lost then).
func renderUserData(in Spec) ([]byte, error) {
	top, err := parseCloudConfig(in.UserData)
	if err != nil {
		return nil, err
	}
	if len(in.SSHKeys) == 0 && len(in.Users) == 0 {
		if in.UserData == "" {
			return []byte(cloudConfigHeader + "\n"), nil
		}
		return []byte(in.UserData), nil
	}
	if len(in.SSHKeys) > 0 {
		if top, err = mergeList(top, "", "ssh_authorized_keys", in.SSHKeys); err != nil {
			return nil, err
		}
	}
	if len(in.Users) > 0 {
		if top, err = mergeUsers(top, in.Users); err != nil {
			return nil, err
		}
	}
	body, err := marshal(top)
	if err != nil {
		return nil, err
	}
	return append([]byte(cloudConfigHeader+"\n"), body...), nil
}

// parseCloudConfig decodes user-data (already checked for its header and size) into an
// ordered mapping; empty user-data or a header alone is an empty mapping.
func parseCloudConfig(userData string) (yaml.MapSlice, error) {
	if strings.TrimSpace(userData) == "" {
		return yaml.MapSlice{}, nil
	}
	var doc any
	if err := yaml.UnmarshalWithOptions([]byte(userData), &doc, yaml.UseOrderedMap()); err != nil {
		return nil, apierr.Validation("userData", "is not valid YAML: %s", oneLine(err))
	}
	switch d := doc.(type) {
	case nil:
		return yaml.MapSlice{}, nil
	case yaml.MapSlice:
		for _, it := range d {
			if _, ok := it.Key.(string); !ok {
				return nil, apierr.Validation("userData", "key %v is not a string", it.Key)
			}
		}
		return d, nil
	default:
		return nil, apierr.Validation("userData", "must be a YAML mapping of cloud-config keys, not a %T", doc)
	}
}

// oneLine keeps the first line of a YAML error (the rest is a source excerpt).
func oneLine(err error) string {
	s, _, _ := strings.Cut(strings.TrimSpace(err.Error()), "\n")
	return s
}

// lookup returns the value under key and its index, or -1.
func lookup(m yaml.MapSlice, key string) (any, int) {
	for i, it := range m {
		if it.Key == key {
			return it.Value, i
		}
	}
	return nil, -1
}

// set replaces the value under key, or appends it.
func set(m yaml.MapSlice, key string, v any) yaml.MapSlice {
	if _, i := lookup(m, key); i >= 0 {
		m[i].Value = v
		return m
	}
	return append(m, yaml.MapItem{Key: key, Value: v})
}

// stringList reads a list of strings (or cloud-init's comma-separated string form).
func stringList(v any, field string) ([]string, error) {
	switch l := v.(type) {
	case nil:
		return nil, nil
	case string:
		var out []string
		for _, s := range strings.Split(l, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
		return out, nil
	case []any:
		out := make([]string, 0, len(l))
		for _, e := range l {
			s, ok := e.(string)
			if !ok {
				return nil, apierr.Validation("userData", "%s must be a list of strings", field)
			}
			out = append(out, s)
		}
		return out, nil
	default:
		return nil, apierr.Validation("userData", "%s must be a list of strings", field)
	}
}

// union appends to have the entries of add it lacks.
func union(have, add []string) []string {
	for _, s := range add {
		if !slices.Contains(have, s) {
			have = append(have, s)
		}
	}
	return have
}

// mergeList adds values to the string list under key; path names the mapping in errors.
func mergeList(m yaml.MapSlice, path, key string, values []string) (yaml.MapSlice, error) {
	cur, _ := lookup(m, key)
	have, err := stringList(cur, path+key)
	if err != nil {
		return nil, err
	}
	return set(m, key, union(have, values)), nil
}

// mergeUsers adds users to the cloud-config's users: list. A cloud-config without one
// gets ["default", ...] so that the image's default user stays; an entry with the same
// name gets the user's groups and keys added.
func mergeUsers(top yaml.MapSlice, users []User) (yaml.MapSlice, error) {
	cur, _ := lookup(top, "users")
	var list []any
	switch l := cur.(type) {
	case nil:
		list = []any{"default"}
	case []any:
		list = l
	default:
		return nil, apierr.Validation("userData", "users must be a list")
	}
	for _, u := range users {
		idx := -1
		for i, e := range list {
			if m, ok := e.(yaml.MapSlice); ok {
				if name, _ := lookup(m, "name"); name == u.Name {
					idx = i
					break
				}
			}
		}
		if idx < 0 {
			entry := yaml.MapSlice{{Key: "name", Value: u.Name}}
			if len(u.Groups) > 0 {
				entry = append(entry, yaml.MapItem{Key: "groups", Value: u.Groups})
			}
			entry = append(entry, yaml.MapItem{Key: "shell", Value: "/bin/bash"}, yaml.MapItem{Key: "lock_passwd", Value: true})
			if u.Sudo {
				entry = append(entry, yaml.MapItem{Key: "sudo", Value: sudoAll})
			}
			if len(u.SSHKeys) > 0 {
				entry = append(entry, yaml.MapItem{Key: "ssh_authorized_keys", Value: u.SSHKeys})
			}
			list = append(list, entry)
			continue
		}
		entry := list[idx].(yaml.MapSlice)
		path := fmt.Sprintf("users[%d].", idx)
		var err error
		if len(u.Groups) > 0 {
			if entry, err = mergeList(entry, path, "groups", u.Groups); err != nil {
				return nil, err
			}
		}
		if len(u.SSHKeys) > 0 {
			if entry, err = mergeList(entry, path, "ssh_authorized_keys", u.SSHKeys); err != nil {
				return nil, err
			}
		}
		if _, i := lookup(entry, "sudo"); u.Sudo && i < 0 {
			entry = append(entry, yaml.MapItem{Key: "sudo", Value: sudoAll})
		}
		list[idx] = entry
	}
	return set(top, "users", list), nil
}
