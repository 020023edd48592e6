package diagram

import (
	"fmt"
	"io"
	"strconv"
)

// MarshalGQL writes the kind as a GraphQL enum value.
func (k DiagramNodeKind) MarshalGQL(w io.Writer) { _, _ = io.WriteString(w, strconv.Quote(string(k))) }

// UnmarshalGQL reads the kind from a GraphQL enum value.
func (k *DiagramNodeKind) UnmarshalGQL(v any) error {
	s, ok := v.(string)
	if !ok {
		return fmt.Errorf("diagram node kind must be a string, not %T", v)
	}
	switch DiagramNodeKind(s) {
	case NodeHost, NodeSwitch, NodeRouter, NodeVM, NodeNetwork:
		*k = DiagramNodeKind(s)
		return nil
	}
	return fmt.Errorf("%q is not a diagram node kind", s)
}

// MarshalGQL writes the kind as a GraphQL enum value.
func (k DiagramEdgeKind) MarshalGQL(w io.Writer) { _, _ = io.WriteString(w, strconv.Quote(string(k))) }

// UnmarshalGQL reads the kind from a GraphQL enum value.
func (k *DiagramEdgeKind) UnmarshalGQL(v any) error {
	s, ok := v.(string)
	if !ok {
		return fmt.Errorf("diagram edge kind must be a string, not %T", v)
	}
	switch DiagramEdgeKind(s) {
	case EdgeLink, EdgeAttachment, EdgeRunsOn:
		*k = DiagramEdgeKind(s)
		return nil
	}
	return fmt.Errorf("%q is not a diagram edge kind", s)
}
