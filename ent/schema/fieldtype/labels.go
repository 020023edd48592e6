package fieldtype

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"sort"
)

// Labels are key/value tags on clusters, nodes and VMs, used by placement filters. In GraphQL
// they are the scalar Labels: a JSON object of string values.
type Labels map[string]string

// labelKey allows Kubernetes-style keys: an optional DNS prefix and a name.
var labelKey = regexp.MustCompile(`^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`)

// Validate reports the first key or value that is not allowed.
func (l Labels) Validate() error {
	keys := make([]string, 0, len(l))
	for k := range l {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !labelKey.MatchString(k) || len(k) > 253 {
			return fmt.Errorf("label key %q is not a valid key (letters, digits, '-', '_', '.', optional 'prefix/')", k)
		}
		if len(l[k]) > 256 {
			return fmt.Errorf("label %q: value longer than 256 characters", k)
		}
	}
	return nil
}

// MarshalGQL writes the labels as a JSON object.
func (l Labels) MarshalGQL(w io.Writer) {
	if l == nil {
		l = Labels{}
	}
	_ = json.NewEncoder(w).Encode(map[string]string(l))
}

// UnmarshalGQL reads a GraphQL input object whose values are all strings.
func (l *Labels) UnmarshalGQL(v any) error {
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("labels must be an object of string values")
	}
	out := make(Labels, len(m))
	for k, val := range m {
		s, ok := val.(string)
		if !ok {
			return fmt.Errorf("label %q must have a string value", k)
		}
		out[k] = s
	}
	if err := out.Validate(); err != nil {
		return err
	}
	*l = out
	return nil
}
