package graph

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"

	"github.com/virtflow/virtflow/domain/apierr"
)

// The HTTP transports of /query. gqlgen's own answer malformed requests with bare messages
// (no extensions.code, Go library text, the body echoed back); these wrappers check the
// request first and answer every refusal as a GraphQL error with a code and an HTTP status.

// postJSON is transport.POST with the body checked before gqlgen decodes it.
type postJSON struct{ transport.POST }

// Do implements graphql.Transport.
func (t postJSON) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeRefusal(w, http.StatusBadRequest, apierr.CodeBadRequest, "could not read the request body")
		return
	}
	start := graphql.Now()
	params := &graphql.RawParams{}
	if err := decodeStrict(body, params); err != nil {
		if tooDeep(err) {
			writeRefusal(w, http.StatusBadRequest, apierr.CodeQueryTooLarge, "the request body is nested too deeply (variables nest at most a few dozen levels)", "limit", "inputDepth")
			return
		}
		writeRefusal(w, http.StatusBadRequest, apierr.CodeBadRequest, "the request body is not a GraphQL request: "+jsonProblem(err))
		return
	}
	if !acceptsJSON(r.Header.Get("Accept")) {
		// application/graphql-response+json: gqlgen's own status codes for it.
		r.Body = io.NopCloser(bytes.NewReader(body))
		t.POST.Do(w, r, exec)
		return
	}
	// What transport.POST does for application/json, with the parameters decoded above
	// (not a second time) and the response written by writeResponse.
	ctx := r.Context()
	w.Header().Set("Content-Type", "application/json")
	params.Headers = r.Header
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}
	rc, opErr := exec.CreateOperationContext(ctx, params)
	if opErr != nil {
		if errcode.GetErrorKind(opErr) == errcode.KindProtocol {
			w.WriteHeader(http.StatusUnprocessableEntity)
		}
		writeResponse(w, exec.DispatchError(graphql.WithOperationContext(ctx, rc), opErr))
		return
	}
	responses, ctx := exec.DispatchOperation(ctx, rc)
	writeResponse(w, responses(ctx))
}

// acceptsJSON reports whether a request with this Accept header gets application/json from
// transport.POST (no header, or */*, application/* or application/json before
// application/graphql-response+json).
func acceptsJSON(accept string) bool {
	if accept == "" {
		return true
	}
	for part := range strings.SplitSeq(accept, ",") {
		mediaType, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch mediaType {
		case "*/*", "application/*", "application/json":
			return true
		case "application/graphql-response+json":
			return false
		}
	}
	return false
}

// writeResponse writes resp as json.Marshal does, but copies resp.Data, which gqlgen's
// marshallers produced, as it is: json.Marshal scans and compacts a json.RawMessage byte by
// byte, a tenth of the CPU of a response listing 1,000 hosts.
func writeResponse(w io.Writer, resp *graphql.Response) {
	if resp == nil {
		_, _ = io.WriteString(w, "null")
		return
	}
	var b bytes.Buffer
	b.Grow(len(resp.Data) + 64)
	b.WriteByte('{')
	field := func(name string, v any) {
		enc, err := json.Marshal(v)
		if err != nil {
			panic(fmt.Errorf("marshal the response's %s: %w", name, err))
		}
		b.WriteString(`"` + name + `":`)
		b.Write(enc)
		b.WriteByte(',')
	}
	if len(resp.Errors) > 0 {
		field("errors", resp.Errors)
	}
	b.WriteString(`"data":`)
	if resp.Data == nil {
		b.WriteString("null")
	} else {
		b.Write(resp.Data)
	}
	b.WriteByte(',')
	if resp.Label != "" {
		field("label", resp.Label)
	}
	if len(resp.Path) > 0 {
		field("path", resp.Path)
	}
	if resp.HasNext != nil {
		field("hasNext", resp.HasNext)
	}
	if len(resp.Extensions) > 0 {
		field("extensions", resp.Extensions)
	}
	out := b.Bytes()
	out[len(out)-1] = '}'
	_, _ = w.Write(out)
}

// getQuery is transport.GET with its parameters checked before gqlgen reads them.
type getQuery struct {
	transport.GET
	maxTokens int
}

// Do implements graphql.Transport.
func (t getQuery) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		writeRefusal(w, http.StatusBadRequest, apierr.CodeBadRequest, "the URL's query string cannot be decoded")
		return
	}
	for _, p := range []string{"variables", "extensions"} {
		if s := q.Get(p); s != "" {
			var m map[string]any
			if err := decodeStrict([]byte(s), &m); err != nil {
				writeRefusal(w, http.StatusBadRequest, apierr.CodeBadRequest, p+" is not a JSON object: "+jsonProblem(err))
				return
			}
		}
	}
	// Only queries may be sent with GET (a link or a crawler must not change anything).
	// The keyword test keeps the common case from parsing twice.
	if text := q.Get("query"); strings.Contains(text, "mutation") || strings.Contains(text, "subscription") {
		if doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: text}, t.maxTokens); err == nil {
			if op := doc.Operations.ForName(q.Get("operationName")); op != nil && op.Operation != ast.Query {
				w.Header().Set("Allow", "POST")
				writeRefusal(w, http.StatusMethodNotAllowed, apierr.CodeMethodNotAllowed, "a "+string(op.Operation)+" must be sent with POST")
				return
			}
		}
	}
	t.GET.Do(w, r, exec)
}

// unsupported answers every request no other transport took: another method (PUT, DELETE)
// or another content type (text/plain, forms, multipart, application/graphql).
type unsupported struct{}

// Supports implements graphql.Transport.
func (unsupported) Supports(*http.Request) bool { return true }

// Do implements graphql.Transport.
func (unsupported) Do(w http.ResponseWriter, r *http.Request, _ graphql.GraphExecutor) {
	switch r.Method {
	case http.MethodGet, http.MethodPost, http.MethodOptions:
		media, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if media == "" {
			media = "no content type"
		}
		writeRefusal(w, http.StatusUnsupportedMediaType, apierr.CodeBadRequest,
			fmt.Sprintf("send the request as application/json (got %s), or as a GET with the query in the URL", media))
	default:
		w.Header().Set("Allow", "GET, POST, OPTIONS")
		writeRefusal(w, http.StatusMethodNotAllowed, apierr.CodeMethodNotAllowed,
			fmt.Sprintf("method %s is not allowed: send GraphQL requests with POST (or GET for queries)", r.Method))
	}
}

// writeRefusal answers a request the transport refused as a GraphQL error response.
// Extra extensions follow as key, value pairs.
func writeRefusal(w http.ResponseWriter, status int, code apierr.Code, message string, extra ...string) {
	ext := map[string]any{"code": string(code)}
	for i := 0; i+1 < len(extra); i += 2 {
		ext[extra[i]] = extra[i+1]
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]any{"errors": []any{map[string]any{"message": message, "extensions": ext}}})
	_, _ = w.Write(b)
}

// decodeStrict decodes one JSON value into v and nothing after it, as gqlgen's transports do.
func decodeStrict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(v)
}

// tooDeep reports a JSON document nested deeper than encoding/json decodes (10,000 levels).
func tooDeep(err error) bool {
	var syntax *json.SyntaxError
	return errors.As(err, &syntax) && strings.Contains(syntax.Error(), "exceeded max depth")
}

// jsonProblem describes a JSON decoding error without the decoder's own wording.
func jsonProblem(err error) string {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return fmt.Sprintf("invalid JSON at byte %d", syntax.Offset)
	case errors.As(err, &typ) && typ.Field != "":
		return fmt.Sprintf("%s must not be a JSON %s", typ.Field, typ.Value)
	case errors.As(err, &typ):
		return fmt.Sprintf("expected a JSON object, got a JSON %s", typ.Value)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "the JSON ends too early"
	}
	return "invalid JSON"
}
