package fieldtype

import (
	"encoding/json"
	"fmt"
	"io"
)

// JSON is an opaque JSON document (an audit row's before and after images). In GraphQL it is
// the scalar JSON and is written out as is.
type JSON json.RawMessage

// MarshalGQL writes the document, or null when empty.
func (j JSON) MarshalGQL(w io.Writer) {
	if len(j) == 0 {
		_, _ = io.WriteString(w, "null")
		return
	}
	_, _ = w.Write(j)
}

// UnmarshalGQL accepts any GraphQL input value and stores it as JSON.
func (j *JSON) UnmarshalGQL(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("not a JSON value: %w", err)
	}
	*j = b
	return nil
}

// MarshalJSON keeps the raw document when the value is stored by ent as JSON.
func (j JSON) MarshalJSON() ([]byte, error) {
	if len(j) == 0 {
		return []byte("null"), nil
	}
	return j, nil
}

// UnmarshalJSON keeps a copy of the raw document.
func (j *JSON) UnmarshalJSON(b []byte) error {
	*j = append((*j)[:0], b...)
	return nil
}
