package nodeagent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Client is a small GraphQL-over-HTTP client carrying the agent's bearer token.
type Client struct {
	URL   string
	Token string
	HTTP  *http.Client
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

// Do runs one query or mutation and decodes its data into out (which may be nil).
func (c *Client) Do(ctx context.Context, query string, vars map[string]any, out any) error {
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+c.Token)
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return fmt.Errorf("read response: %w", err)
	}
	var r struct {
		Data   json.RawMessage `json:"data"`
		Errors []GraphQLError  `json:"errors"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return fmt.Errorf("HTTP %d: %.200s", resp.StatusCode, raw)
	}
	if len(r.Errors) > 0 {
		return &Error{Errors: r.Errors}
	}
	if out != nil {
		if err := json.Unmarshal(r.Data, out); err != nil {
			return fmt.Errorf("decode data: %w", err)
		}
	}
	return nil
}
