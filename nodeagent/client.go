package nodeagent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/Khan/genqlient/graphql"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/virtflow/virtflow/internal/telemetry"
)

// Client is a small GraphQL-over-HTTP client carrying the agent's bearer token. It implements
// graphql.Client for the operations genqlient generates from operations.graphql.
type Client struct {
	URL   string
	Token string
	HTTP  *http.Client
	// Tracer, when set, makes a client span of every request and sends its trace context
	// (traceparent), so the server's spans join the agent's trace.
	Tracer trace.Tracer
}

// GraphQLError is one entry of a GraphQL response's errors.
type GraphQLError struct {
	Message    string         `json:"message"`
	Extensions map[string]any `json:"extensions"`
}

// Code is the error's extensions.code (NOT_FOUND, FORBIDDEN, …).
func (e GraphQLError) Code() string { s, _ := e.Extensions["code"].(string); return s }

// Error is what a request that the API answered with errors returns.
type Error struct {
	Errors []GraphQLError
}

func (e *Error) Error() string {
	var b strings.Builder
	for i, ge := range e.Errors {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s (%s)", ge.Message, ge.Code())
	}
	return b.String()
}

// MakeRequest sends req and decodes its data into resp.Data: Client is the graphql.Client of
// the generated operations (operations_gen.go). A response with errors returns an *Error.
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
	if c.Token != "" {
		hreq.Header.Set("Authorization", "Bearer "+c.Token)
	}
	if c.Tracer != nil {
		var span trace.Span
		ctx, span = c.Tracer.Start(ctx, "graphql "+req.OpName, trace.WithSpanKind(trace.SpanKindClient),
			trace.WithAttributes(attribute.String("graphql.operation.name", req.OpName)))
		defer span.End()
		telemetry.Propagator().Inject(ctx, propagation.HeaderCarrier(hreq.Header))
		hreq = hreq.WithContext(ctx)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	hresp, err := hc.Do(hreq)
	if err != nil {
		return err
	}
	defer hresp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(hresp.Body, 32<<20))
	if err != nil {
		return fmt.Errorf("read response: %w", err)
	}
	var r struct {
		Data   json.RawMessage `json:"data"`
		Errors []GraphQLError  `json:"errors"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return fmt.Errorf("HTTP %d: %.200s", hresp.StatusCode, raw)
	}
	if len(r.Errors) > 0 {
		return &Error{Errors: r.Errors}
	}
	if resp != nil && resp.Data != nil {
		if err := json.Unmarshal(r.Data, resp.Data); err != nil {
			return fmt.Errorf("decode data: %w", err)
		}
	}
	return nil
}

// Do runs one query or mutation given as text and decodes its data into out (which may be
// nil). The agent itself uses the generated operations; Do is for tests and tools that send
// documents of their own.
func (c *Client) Do(ctx context.Context, query string, vars map[string]any, out any) error {
	return c.MakeRequest(ctx, &graphql.Request{Query: query, Variables: vars}, &graphql.Response{Data: out})
}
