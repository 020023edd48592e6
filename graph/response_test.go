package graph

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// TestWriteResponseAsJSONMarshal: writeResponse writes what json.Marshal writes for the same
// response (as JSON values: json.Marshal also escapes <, > and & inside the data), for every
// field the response may carry.
func TestWriteResponseAsJSONMarshal(t *testing.T) {
	t.Parallel()
	yes := true
	for name, resp := range map[string]*graphql.Response{
		"nil":         nil,
		"data":        {Data: json.RawMessage(`{"racks":{"edges":[{"node":{"id":"1","name":"<r&1>"}}]}}`)},
		"no data":     {Errors: gqlerror.List{{Message: "boom", Extensions: map[string]any{"code": "INTERNAL"}}}},
		"errors+data": {Data: json.RawMessage(`{"a":null}`), Errors: gqlerror.List{{Message: "x", Path: ast.Path{ast.PathName("a")}}}},
		"incremental": {Data: json.RawMessage(`{}`), Label: "l", Path: ast.Path{ast.PathName("a"), ast.PathIndex(2)}, HasNext: &yes,
			Extensions: map[string]any{"cost": 3}},
	} {
		t.Run(name, func(t *testing.T) {
			want, err := json.Marshal(resp)
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			writeResponse(&got, resp)
			var w, g any
			if err := json.Unmarshal(want, &w); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(got.Bytes(), &g); err != nil {
				t.Fatalf("not JSON: %s (%v)", got.String(), err)
			}
			if !reflect.DeepEqual(w, g) {
				t.Fatalf("wrote %s\nwant   %s", got.String(), want)
			}
		})
	}
}
