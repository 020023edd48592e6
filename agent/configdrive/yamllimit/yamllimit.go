// Package yamllimit parses untrusted YAML (a VM's cloud-config user-data) into a node tree
// within limits on nesting, node count and aliases, checked before anything is decoded or
// encoded, so that no input of a few hundred bytes costs seconds of CPU or gigabytes of
// memory: a "billion laughs" document counts as the nodes its aliases would expand to and is
// refused without expanding them, a deeply nested one is refused before it is parsed.
//
// It depends on nothing but the standard library and go.yaml.in/yaml/v3, so every process
// that reads user-data — the API server, the provisioning worker and the node agent (through
// package configdrive) — applies the same limits without pulling in the API's packages.
package yamllimit

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Limits bound a document.
type Limits struct {
	// MaxBytes is the longest text Parse reads at all (0: no bound of its own, for callers
	// that bound the text before).
	MaxBytes int
	// MaxDepth is the deepest nesting of mappings and sequences, aliases counted as the
	// nodes they stand for.
	MaxDepth int
	// MaxNodes is the number of nodes (scalars, mappings, sequences) once every alias is
	// counted as the nodes it stands for.
	MaxNodes int
	// MaxAliases is the number of aliases (*name) the document may hold.
	MaxAliases int
	// MaxBracketDepth bounds the nesting of "[" and "{" counted over the raw text before it
	// is parsed (quotes and comments included, so an over-estimate of the flow nesting): a
	// text past it is refused without building a tree thousands of levels deep first. It
	// should be far above MaxDepth so that brackets in a script or a comment never matter.
	MaxBracketDepth int
}

// Document is a parsed YAML document.
type Document struct {
	// Root is the document node (nil when the text holds no document: empty or comments).
	Root *yaml.Node
	// Aliased holds every node an alias refers to.
	Aliased map[*yaml.Node]bool
}

// Parse parses text, which must hold at most one YAML document, within l. Its errors say in
// a sentence what is wrong ("is not valid YAML: …", "nests more than 64 levels"), for the
// caller to report against its field.
func Parse(text string, l Limits) (*Document, error) {
	if l.MaxBytes > 0 && len(text) > l.MaxBytes {
		return nil, fmt.Errorf("is %d bytes, at most %d are allowed", len(text), l.MaxBytes)
	}
	if bracketDepth(text) > l.MaxBracketDepth {
		return nil, fmt.Errorf("nests more than %d levels", l.MaxDepth)
	}
	dec := yaml.NewDecoder(strings.NewReader(text))
	var root yaml.Node
	if err := dec.Decode(&root); err != nil {
		if errors.Is(err, io.EOF) {
			return &Document{}, nil
		}
		return nil, fmt.Errorf("is not valid YAML: %s", oneLine(err))
	}
	var next yaml.Node
	if err := dec.Decode(&next); !errors.Is(err, io.EOF) {
		return nil, errors.New("must hold one YAML document")
	}
	w := &walk{l: l, measured: map[*yaml.Node]shape{}, open: map[*yaml.Node]bool{}, aliased: map[*yaml.Node]bool{}}
	if _, err := w.node(&root, 0); err != nil {
		return nil, err
	}
	return &Document{Root: &root, Aliased: w.aliased}, nil
}

// oneLine keeps the first line of a YAML error (the rest is a source excerpt).
func oneLine(err error) string {
	s, _, _ := strings.Cut(strings.TrimSpace(err.Error()), "\n")
	return s
}

// bracketDepth is the deepest nesting of "[" and "{" in s, counting every bracket
// (quoted, commented or not): never less than the depth of its flow collections.
func bracketDepth(s string) int {
	depth, deepest := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[', '{':
			depth++
			deepest = max(deepest, depth)
		case ']', '}':
			depth = max(0, depth-1)
		}
	}
	return deepest
}

// shape is what a node amounts to once its aliases are expanded.
type shape struct{ nodes, height int }

// walk checks a node tree against the limits, counting each alias as the nodes it stands
// for (measured once per anchored node, so the walk is linear in the text).
type walk struct {
	l              Limits
	nodes, aliases int
	measured       map[*yaml.Node]shape
	open           map[*yaml.Node]bool
	aliased        map[*yaml.Node]bool
}

func (w *walk) node(n *yaml.Node, depth int) (shape, error) {
	if n.Kind == yaml.AliasNode {
		w.aliases++
		if w.aliases > w.l.MaxAliases {
			return shape{}, fmt.Errorf("has more than %d YAML aliases", w.l.MaxAliases)
		}
		t := n.Alias
		if t == nil || w.open[t] {
			return shape{}, fmt.Errorf("alias *%s refers to a node that contains it", n.Value)
		}
		s, ok := w.measured[t]
		if !ok {
			return shape{}, fmt.Errorf("alias *%s refers to no anchor before it", n.Value)
		}
		w.aliased[t] = true
		return s, w.add(s, depth)
	}
	if n.Kind == yaml.DocumentNode {
		depth-- // the document is not a level of nesting
	}
	if n.Anchor != "" {
		w.open[n] = true
		defer delete(w.open, n)
	}
	s := shape{nodes: 1, height: 1}
	if err := w.add(s, depth); err != nil {
		return shape{}, err
	}
	for _, c := range n.Content {
		cs, err := w.node(c, depth+1)
		if err != nil {
			return shape{}, err
		}
		s.nodes += cs.nodes
		s.height = max(s.height, cs.height+1)
	}
	if n.Anchor != "" {
		w.measured[n] = s
	}
	return s, nil
}

// add counts s, found at depth, against the limits.
func (w *walk) add(s shape, depth int) error {
	if depth+s.height > w.l.MaxDepth {
		return fmt.Errorf("nests more than %d levels", w.l.MaxDepth)
	}
	w.nodes += s.nodes
	if w.nodes > w.l.MaxNodes {
		return fmt.Errorf("has more than %d YAML nodes (aliases counted as what they stand for)", w.l.MaxNodes)
	}
	return nil
}
