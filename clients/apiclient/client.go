package apiclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/Khan/genqlient/graphql"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Client sends GraphQL requests to one VirtFlow API with a bearer token. It implements
// graphql.Client for the generated operations. It is the one GraphQL client of the node
// agent (nodeagent), the CLI (cli) and the Terraform provider (clients/terraform/provider): each
// generates its operations with genqlient and sends them through it.
type Client struct {
	// URL is the GraphQL endpoint, e.g. http://127.0.0.1:8080/query (see Endpoint).
	URL string
	// Token is sent as "Authorization: Bearer <token>"; empty sends none.
	Token string
	// HTTP is the HTTP client; nil uses one with a 60 s timeout.
	HTTP *http.Client
	// UserAgent, when set, is sent as the User-Agent header.
	UserAgent string
	// Tracer, when set, makes a client span of every request, named after its operation,
	// and Propagator (when set) sends its trace context (traceparent), so the server's spans
	// join the caller's trace.
	Tracer     trace.Tracer
	Propagator propagation.TextMapPropagator
}

// New returns a client of the API at endpoint (normalized by Endpoint) with token.
func New(endpoint, token string) (*Client, error) {
	u, err := Endpoint(endpoint)
	if err != nil {
		return nil, err
	}
	return &Client{URL: u, Token: token, HTTP: &http.Client{Timeout: 60 * time.Second}}, nil
}

// Endpoint turns what a user gives as the API's address into its GraphQL URL: a server's
// base URL ("http://vf.example:8080", "vf.example:8080") gets the path /query; a URL with a
// path is kept as it is.
func Endpoint(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", errors.New("no endpoint given (e.g. http://127.0.0.1:8080)")
	}
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Errorf("endpoint %q: %w", s, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("endpoint %q: scheme must be http or https", s)
	}
	if u.Host == "" {
		return "", fmt.Errorf("endpoint %q has no host", s)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/query"
	}
	return u.String(), nil
}

// GraphQLError is one entry of a GraphQL response's errors.
type GraphQLError struct {
	Message    string         `json:"message"`
	Path       []any          `json:"path,omitempty"`
	Extensions map[string]any `json:"extensions,omitempty"`
}

// Code is the error's extensions.code (NOT_FOUND, VALIDATION, CONFLICT, FORBIDDEN, …).
func (e GraphQLError) Code() string { s, _ := e.Extensions["code"].(string); return s }

// Field is the input field the error names (extensions.field), if any.
func (e GraphQLError) Field() string { s, _ := e.Extensions["field"].(string); return s }

// Error is returned for a request the API answered with errors (or with an HTTP status
// other than 200 and no GraphQL answer).
type Error struct {
	// Status is the HTTP status code.
	Status int
	Errors []GraphQLError
}

func (e *Error) Error() string {
	var b strings.Builder
	for i, ge := range e.Errors {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(ge.Message)
		if c, f := ge.Code(), ge.Field(); c != "" || f != "" {
			b.WriteString(" (")
			b.WriteString(c)
			if f != "" {
				b.WriteString(", field ")
				b.WriteString(f)
			}
			b.WriteString(")")
		}
	}
	return b.String()
}

// Code is the code of the first error.
func (e *Error) Code() string {
	if len(e.Errors) == 0 {
		return ""
	}
	return e.Errors[0].Code()
}

// Field is the first field named by an error.
func (e *Error) Field() string {
	for _, ge := range e.Errors {
		if f := ge.Field(); f != "" {
			return f
		}
	}
	return ""
}

// CodeOf is the GraphQL error code of err ("" when err is not an API error).
func CodeOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code()
	}
	return ""
}

// IsNotFound reports whether err is the API's NOT_FOUND.
func IsNotFound(err error) bool { return CodeOf(err) == "NOT_FOUND" }

// MakeRequest sends req and decodes its data into resp.Data. A response with errors returns
// an *Error.
func (c *Client) MakeRequest(ctx context.Context, req *graphql.Request, resp *graphql.Response) error {
	body, err := json.Marshal(req)
	if err != nil {
		return err
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, bytes.NewReader(body))
	if err != nil {
		return err
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	if c.Token != "" {
		hreq.Header.Set("Authorization", "Bearer "+c.Token)
	}
	if c.UserAgent != "" {
		hreq.Header.Set("User-Agent", c.UserAgent)
	}
	if c.Tracer != nil {
		var span trace.Span
		ctx, span = c.Tracer.Start(ctx, "graphql "+req.OpName, trace.WithSpanKind(trace.SpanKindClient),
			trace.WithAttributes(attribute.String("graphql.operation.name", req.OpName)))
		defer span.End()
		if c.Propagator != nil {
			c.Propagator.Inject(ctx, propagation.HeaderCarrier(hreq.Header))
		}
		hreq = hreq.WithContext(ctx)
	}
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 60 * time.Second}
	}
	hresp, err := hc.Do(hreq)
	if err != nil {
		return err
	}
	defer hresp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(hresp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("read response: %w", err)
	}
	var r struct {
		Data   json.RawMessage `json:"data"`
		Errors []GraphQLError  `json:"errors"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return &Error{Status: hresp.StatusCode, Errors: []GraphQLError{{
			Message: fmt.Sprintf("HTTP %d from %s: %.200s", hresp.StatusCode, c.URL, bytes.TrimSpace(raw))}}}
	}
	if len(r.Errors) > 0 {
		return &Error{Status: hresp.StatusCode, Errors: r.Errors}
	}
	if resp != nil && resp.Data != nil && len(r.Data) > 0 {
		if err := json.Unmarshal(r.Data, resp.Data); err != nil {
			return fmt.Errorf("decode data: %w", err)
		}
	}
	return nil
}

// Do runs a document given as text (generic tools: the CLI's get and list over any type)
// and decodes its data into out, which may be nil.
func (c *Client) Do(ctx context.Context, query string, vars map[string]any, out any) error {
	return c.MakeRequest(ctx, &graphql.Request{Query: query, Variables: vars}, &graphql.Response{Data: out})
}
