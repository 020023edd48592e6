package apiclient_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/virtflow/virtflow/clients/apiclient"
)

func TestEndpoint(t *testing.T) {
	tests := []struct{ in, want string }{
		{"http://127.0.0.1:8080", "http://127.0.0.1:8080/query"},
		{"127.0.0.1:8080", "http://127.0.0.1:8080/query"},
		{"https://vf.example/", "https://vf.example/query"},
		{"https://vf.example/api/query", "https://vf.example/api/query"},
	}
	for _, tt := range tests {
		got, err := apiclient.Endpoint(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("Endpoint(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "ftp://vf.example", "http://"} {
		if _, err := apiclient.Endpoint(bad); err == nil {
			t.Errorf("Endpoint(%q) accepted", bad)
		}
	}
}

// TestErrorCarriesCodeAndField: GraphQL errors come back as *Error with the code and field
// of extensions, and the token is sent as a bearer header.
func TestErrorCarriesCodeAndField(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok" {
			w.WriteHeader(http.StatusUnauthorized)
			_ = json.NewEncoder(w).Encode(map[string]any{"errors": []any{map[string]any{"message": "no token", "extensions": map[string]any{"code": "UNAUTHENTICATED"}}}})
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"errors": []any{map[string]any{"message": "cidr: not a prefix", "extensions": map[string]any{"code": "VALIDATION", "field": "cidr"}}}})
	}))
	defer srv.Close()
	c, err := apiclient.New(srv.URL, "tok")
	if err != nil {
		t.Fatal(err)
	}
	_, err = apiclient.CreateNetwork(context.Background(), c, apiclient.CreateNetworkInput{Name: "n", Cidr: "x"})
	var apiErr *apiclient.Error
	if !errors.As(err, &apiErr) || apiErr.Code() != "VALIDATION" || apiErr.Field() != "cidr" {
		t.Fatalf("err = %v, want VALIDATION on cidr", err)
	}
	if got := err.Error(); got != "cidr: not a prefix (VALIDATION, field cidr)" {
		t.Errorf("message %q", got)
	}
	c.Token = "other"
	if err := c.Do(context.Background(), "{ me { id } }", nil, nil); apiclient.CodeOf(err) != "UNAUTHENTICATED" {
		t.Errorf("bad token: %v", err)
	}
}
