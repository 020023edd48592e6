package hypervisor

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
)

// MetadataNamespace is the XML namespace of VirtFlow's element in a domain's <metadata>.
// libvirt keeps one element per namespace; VirtFlow's looks like
//
//	<virtflow:vm xmlns:virtflow="https://github.com/virtflow/virtflow/xmlns/domain/1"
//	    id="42" generation="3" spec="…"/>
//
// where spec is a digest of the definition, so Define can tell an identical spec from a
// changed one without comparing libvirt's normalized XML.
const MetadataNamespace = "https://github.com/virtflow/virtflow/xmlns/domain/1"

// metadata is VirtFlow's element in a domain's <metadata>.
type metadata struct {
	VMID       int64
	Generation int64
	// SpecDigest identifies the definition VirtFlow last wrote.
	SpecDigest string
}

// metadataOut is the element as written: encoding/xml cannot choose a namespace prefix, so the
// prefix is spelled out in the element and attribute names.
type metadataOut struct {
	XMLName    xml.Name `xml:"virtflow:vm"`
	Xmlns      string   `xml:"xmlns:virtflow,attr"`
	VMID       int64    `xml:"id,attr"`
	Generation int64    `xml:"generation,attr"`
	SpecDigest string   `xml:"spec,attr,omitempty"`
}

// metadataIn is the element as read back, whatever prefix it carries.
type metadataIn struct {
	XMLName    xml.Name `xml:"https://github.com/virtflow/virtflow/xmlns/domain/1 vm"`
	VMID       int64    `xml:"id,attr"`
	Generation int64    `xml:"generation,attr"`
	SpecDigest string   `xml:"spec,attr"`
}

// marshal returns the element's XML.
func (m metadata) marshal() (string, error) {
	out, err := xml.Marshal(metadataOut{
		Xmlns: MetadataNamespace, VMID: m.VMID, Generation: m.Generation, SpecDigest: m.SpecDigest,
	})
	if err != nil {
		return "", fmt.Errorf("marshal metadata: %w", err)
	}
	return string(out), nil
}

// parseMetadata reads VirtFlow's element out of s, the inner XML of a domain's <metadata>,
// possibly holding other namespaces' elements too. With bare, s is the element as libvirt's
// DomainGetMetadata returns it for VirtFlow's namespace: stripped of its namespace. ok is false
// when s holds no VirtFlow element.
func parseMetadata(s string, bare bool) (m metadata, ok bool, err error) {
	dec := xml.NewDecoder(strings.NewReader(s))
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return m, false, nil
		}
		if err != nil {
			return m, false, fmt.Errorf("parse metadata: %w", err)
		}
		start, isStart := tok.(xml.StartElement)
		if !isStart {
			continue
		}
		ours := start.Name.Space == MetadataNamespace || (bare && start.Name.Space == "")
		if !ours || start.Name.Local != "vm" {
			if err := dec.Skip(); err != nil {
				return m, false, fmt.Errorf("parse metadata: %w", err)
			}
			continue
		}
		var in metadataIn
		start.Name.Space = MetadataNamespace
		if err := dec.DecodeElement(&in, &start); err != nil {
			return m, false, fmt.Errorf("parse metadata: %w", err)
		}
		return metadata{VMID: in.VMID, Generation: in.Generation, SpecDigest: in.SpecDigest}, true, nil
	}
}
