package configdrive

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/virtflow/virtflow/agent/configdrive/yamllimit"
	"github.com/virtflow/virtflow/domain/apierr"
)

// Limits on the YAML of a user-data, checked by [ValidateUserData] (the API, at create
// and update), and by [Render] and [Build] (the provisioning worker and the node agent),
// on the parsed node tree before anything is decoded or encoded (package yamllimit).
// Aliases are never expanded: they count for the nodes they would expand to, so a "billion
// laughs" document of a few hundred bytes is refused at once.
const (
	// MaxUserDataDepth is the deepest nesting of mappings and sequences, aliases
	// counted as the nodes they stand for.
	MaxUserDataDepth = 64
	// MaxUserDataNodes is the number of YAML nodes (scalars, mappings, sequences) the
	// document holds once every alias is counted as the nodes it stands for.
	MaxUserDataNodes = 20_000
	// MaxUserDataAliases is the number of aliases (*name) the document may hold.
	MaxUserDataAliases = 256
)

// userDataLimits are the limits above, with a raw bracket nesting far above the depth
// (brackets in scripts and comments count too).
func userDataLimits() yamllimit.Limits {
	return yamllimit.Limits{MaxBytes: MaxUserData, MaxDepth: MaxUserDataDepth, MaxNodes: MaxUserDataNodes,
		MaxAliases: MaxUserDataAliases, MaxBracketDepth: 1000}
}

// sudoAll is the sudo rule of a User with Sudo set.
const sudoAll = "ALL=(ALL) NOPASSWD:ALL"

// renderUserData parses the request's cloud-config and merges the Spec's SSH keys and
// users into it. Without keys or users the request's text is kept byte for byte
// (comments included); otherwise the merged node tree is encoded again: anchors and
// aliases stay as the request wrote them (nothing is expanded), comments mostly stay.
func renderUserData(in Spec) ([]byte, error) {
	d, err := parseCloudConfig(in.UserData)
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
		if err := d.mergeList(d.top, "", "ssh_authorized_keys", in.SSHKeys); err != nil {
			return nil, err
		}
	}
	if len(in.Users) > 0 {
		if err := d.mergeUsers(in.Users); err != nil {
			return nil, err
		}
	}
	stripHeader(d.root)
	var buf bytes.Buffer
	buf.WriteString(cloudConfigHeader + "\n")
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(d.root); err != nil {
		return nil, fmt.Errorf("config drive: encode user-data: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("config drive: encode user-data: %w", err)
	}
	return buf.Bytes(), nil
}

// document is a parsed cloud-config: its root node, its top-level mapping and the nodes
// aliases refer to.
type document struct {
	root *yaml.Node
	top  *yaml.Node
	// aliased holds every node an alias refers to.
	aliased map[*yaml.Node]bool
}

// parseCloudConfig parses user-data (already checked for its header and size) into a
// node tree within the limits above; empty user-data or a header alone is an empty
// mapping. Nothing is decoded into Go values and no alias is expanded.
func parseCloudConfig(userData string) (*document, error) {
	top := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	empty := &document{root: &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{top}}, top: top}
	if strings.TrimSpace(userData) == "" {
		return empty, nil
	}
	parsed, err := yamllimit.Parse(userData, userDataLimits())
	if err != nil {
		return nil, apierr.Validation("userData", "%v", err)
	}
	if parsed.Root == nil {
		return empty, nil
	}
	root := parsed.Root
	d := &document{root: root, aliased: parsed.Aliased}
	if len(root.Content) != 1 {
		return empty, nil
	}
	switch n := root.Content[0]; {
	case n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null":
		root.Content[0] = top
		d.top = top
	case n.Kind == yaml.MappingNode:
		for i := 0; i < len(n.Content); i += 2 {
			if k := n.Content[i]; k.Kind != yaml.ScalarNode || (k.ShortTag() != "!!str" && k.ShortTag() != "!!merge") {
				return nil, apierr.Validation("userData", "key %q is not a string", k.Value)
			}
		}
		d.top = n
	default:
		return nil, apierr.Validation("userData", "must be a YAML mapping of cloud-config keys, not a %s", kindName(n))
	}
	return d, nil
}

// kindName names a node's kind for an error.
func kindName(n *yaml.Node) string {
	switch resolve(n).Kind {
	case yaml.SequenceNode:
		return "list"
	case yaml.MappingNode:
		return "mapping"
	default:
		return "scalar"
	}
}

// stripHeader removes the "#cloud-config" line from the comments the parser attached it
// to, since the rendered file gets its own.
func stripHeader(root *yaml.Node) {
	strip := func(c *string) {
		if first, rest, _ := strings.Cut(*c, "\n"); strings.TrimSpace(first) == cloudConfigHeader {
			*c = rest
		}
	}
	strip(&root.HeadComment)
	if len(root.Content) == 1 {
		top := root.Content[0]
		strip(&top.HeadComment)
		if len(top.Content) > 0 {
			strip(&top.Content[0].HeadComment)
		}
	}
}

// resolve follows an alias to the node it stands for.
func resolve(n *yaml.Node) *yaml.Node {
	if n != nil && n.Kind == yaml.AliasNode && n.Alias != nil {
		return n.Alias
	}
	return n
}

// lookup returns the value under key in mapping m and its index in m.Content, -1 when m
// has no such key of its own; a value m merges in (<<: *base) is returned with index -1,
// the mapping's own keys winning over merged ones and earlier merged mappings over later
// ones, as YAML's merge key says.
func lookup(m *yaml.Node, key string) (*yaml.Node, int) {
	var merges []*yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := m.Content[i]
		if k.Kind == yaml.ScalarNode && k.Value == key && k.ShortTag() == "!!str" {
			return m.Content[i+1], i + 1
		}
		if k.ShortTag() == "!!merge" {
			merges = append(merges, m.Content[i+1])
		}
	}
	for _, v := range merges {
		v = resolve(v)
		sources := []*yaml.Node{v}
		if v.Kind == yaml.SequenceNode {
			sources = v.Content
		}
		for _, s := range sources {
			if s = resolve(s); s.Kind == yaml.MappingNode {
				if found, _ := lookup(s, key); found != nil {
					return found, -1
				}
			}
		}
	}
	return nil, -1
}

// set puts v under key in m: in place of m's own value, or as a new key.
func set(m *yaml.Node, key string, v *yaml.Node) {
	if _, i := lookup(m, key); i >= 0 {
		m.Content[i] = v
		return
	}
	m.Content = append(m.Content, str(key), v)
}

// str is a string scalar.
func str(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

// strs is a list of string scalars.
func strs(values []string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	for _, s := range values {
		n.Content = append(n.Content, str(s))
	}
	return n
}

// replaceable checks that the value v at a merge site may be replaced by a new node: not
// when v carries an anchor some alias refers to, since the change would then show through
// every alias (another user's keys, say) or leave the aliases without their anchor.
func (d *document) replaceable(v *yaml.Node, field string) error {
	if v != nil && v.Anchor != "" && d.aliased[v] {
		return apierr.Validation("userData", "%s carries the anchor &%s that aliases refer to: keys and users cannot be merged into a shared value; write it out", field, v.Anchor)
	}
	return nil
}

// stringList reads a list of strings (or cloud-init's comma-separated string form) as
// nodes to keep (aliases stay aliases) and their values.
func stringList(v *yaml.Node, field string) ([]*yaml.Node, []string, error) {
	r := resolve(v)
	switch {
	case r == nil || (r.Kind == yaml.ScalarNode && r.ShortTag() == "!!null"):
		return nil, nil, nil
	case r.Kind == yaml.ScalarNode && r.ShortTag() == "!!str":
		var nodes []*yaml.Node
		var values []string
		for _, s := range strings.Split(r.Value, ",") {
			if s = strings.TrimSpace(s); s != "" {
				nodes, values = append(nodes, str(s)), append(values, s)
			}
		}
		return nodes, values, nil
	case r.Kind == yaml.SequenceNode:
		values := make([]string, 0, len(r.Content))
		for _, e := range r.Content {
			if s := resolve(e); s.Kind != yaml.ScalarNode || s.ShortTag() != "!!str" {
				return nil, nil, apierr.Validation("userData", "%s must be a list of strings", field)
			}
			values = append(values, resolve(e).Value)
		}
		return slices.Clone(r.Content), values, nil
	default:
		return nil, nil, apierr.Validation("userData", "%s must be a list of strings", field)
	}
}

// mergeList puts under key in mapping m a new list of the strings it had and the values
// it lacked; path names the mapping in errors.
func (d *document) mergeList(m *yaml.Node, path, key string, values []string) error {
	cur, _ := lookup(m, key)
	if err := d.replaceable(cur, path+key); err != nil {
		return err
	}
	nodes, have, err := stringList(cur, path+key)
	if err != nil {
		return err
	}
	for _, s := range values {
		if !slices.Contains(have, s) {
			have, nodes = append(have, s), append(nodes, str(s))
		}
	}
	set(m, key, &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: nodes})
	return nil
}

// mergeUsers adds users to the cloud-config's users: list. A cloud-config without one
// gets ["default", ...] so that the image's default user stays; an entry with the same
// name gets the user's groups and keys added.
func (d *document) mergeUsers(users []User) error {
	cur, _ := lookup(d.top, "users")
	if err := d.replaceable(cur, "users"); err != nil {
		return err
	}
	list := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	switch r := resolve(cur); {
	case r == nil || (r.Kind == yaml.ScalarNode && r.ShortTag() == "!!null"):
		list.Content = []*yaml.Node{str("default")}
	case r.Kind == yaml.SequenceNode:
		list.Content = slices.Clone(r.Content)
	default:
		return apierr.Validation("userData", "users must be a list")
	}
	for _, u := range users {
		idx := slices.IndexFunc(list.Content, func(e *yaml.Node) bool {
			if e = resolve(e); e.Kind != yaml.MappingNode {
				return false
			}
			name, _ := lookup(e, "name")
			name = resolve(name)
			return name != nil && name.Kind == yaml.ScalarNode && name.Value == u.Name
		})
		if idx < 0 {
			entry := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			add := func(k string, v *yaml.Node) { entry.Content = append(entry.Content, str(k), v) }
			add("name", str(u.Name))
			if len(u.Groups) > 0 {
				add("groups", strs(u.Groups))
			}
			add("shell", str("/bin/bash"))
			add("lock_passwd", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "true"})
			if u.Sudo {
				add("sudo", str(sudoAll))
			}
			if len(u.SSHKeys) > 0 {
				add("ssh_authorized_keys", strs(u.SSHKeys))
			}
			list.Content = append(list.Content, entry)
			continue
		}
		path := fmt.Sprintf("users[%d].", idx)
		if err := d.replaceable(list.Content[idx], strings.TrimSuffix(path, ".")); err != nil {
			return err
		}
		// A shallow copy: the entry's own values are replaced, never changed in place,
		// so an anchored entry others alias (refused above) or an aliased one is untouched.
		orig := resolve(list.Content[idx])
		entry := &yaml.Node{Kind: yaml.MappingNode, Tag: orig.Tag, Style: orig.Style, Content: slices.Clone(orig.Content)}
		if orig == list.Content[idx] {
			entry.Anchor, entry.HeadComment, entry.LineComment, entry.FootComment = orig.Anchor, orig.HeadComment, orig.LineComment, orig.FootComment
		}
		if len(u.Groups) > 0 {
			if err := d.mergeList(entry, path, "groups", u.Groups); err != nil {
				return err
			}
		}
		if len(u.SSHKeys) > 0 {
			if err := d.mergeList(entry, path, "ssh_authorized_keys", u.SSHKeys); err != nil {
				return err
			}
		}
		if sudo, _ := lookup(entry, "sudo"); u.Sudo && sudo == nil {
			entry.Content = append(entry.Content, str("sudo"), str(sudoAll))
		}
		list.Content[idx] = entry
	}
	set(d.top, "users", list)
	return nil
}
