package identity

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/apierr"
)

type sourceIPKey struct{}

// WithSourceIP returns ctx carrying the client address ip (Middleware does this for every
// request).
func WithSourceIP(ctx context.Context, ip string) context.Context {
	return context.WithValue(ctx, sourceIPKey{}, ip)
}

// SourceIP returns the client address Middleware found for the request of ctx, or "".
func SourceIP(ctx context.Context) string {
	ip, _ := ctx.Value(sourceIPKey{}).(string)
	return ip
}

// Middleware authenticates requests. It stores the client address (the host of RemoteAddr,
// which httpapi.RealIP sets from X-Forwarded-For behind trusted proxies only) in the context
// for SourceIP, then:
//
//   - without an Authorization header, passes the request on with no viewer: the API answers
//     UNAUTHENTICATED to everything but login;
//   - with "Authorization: Bearer <token>" for a valid token, passes it on with the token's
//     viewer (authz.NewContext);
//   - with any other Authorization header, or an invalid token, answers 401 with a GraphQL
//     error body {"errors":[{"message":...,"extensions":{"code":"UNAUTHENTICATED"}}]}.
func (s *Service) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ip := remoteHost(r.RemoteAddr)
		ctx := WithSourceIP(r.Context(), ip)
		values := r.Header.Values("Authorization")
		if len(values) == 0 {
			next.ServeHTTP(w, r.WithContext(ctx))
			return
		}
		if len(values) > 1 {
			writeError(w, http.StatusUnauthorized, apierr.Unauthenticated("send a single Authorization header"))
			return
		}
		v, c, err := s.authenticateHeader(ctx, values[0], ip)
		if err != nil {
			if e, ok := apierr.As(err); ok && e.Code == apierr.CodeUnauthenticated {
				writeError(w, http.StatusUnauthorized, e)
				return
			}
			s.log().ErrorContext(ctx, "identity: authenticate request", "err", err)
			writeError(w, http.StatusInternalServerError, &apierr.Error{Code: apierr.CodeInternal, Message: "internal error"})
			return
		}
		next.ServeHTTP(w, r.WithContext(withCredential(authz.NewContext(ctx, v), c)))
	})
}

// WebsocketInit authenticates a graphql-ws connection from its connection_init payload, read
// like the HTTP header: "Authorization" (or "authorization") set to "Bearer <token>". Without
// it, ctx is returned as it is (anonymous, or with the viewer Middleware found on the upgrade
// request); a malformed or invalid one is an UNAUTHENTICATED error. The source address is the
// one Middleware stored in ctx. The returned ctx carries the credential too
// (CredentialFromContext), for the connection to authenticate again later.
func (s *Service) WebsocketInit(ctx context.Context, payload map[string]any) (context.Context, error) {
	raw, ok := payload["Authorization"]
	if !ok {
		raw, ok = payload["authorization"]
	}
	if !ok || raw == nil {
		return ctx, nil
	}
	header, ok := raw.(string)
	if !ok {
		return ctx, apierr.Unauthenticated("malformed authorization: send \"Bearer <token>\"")
	}
	v, c, err := s.authenticateHeader(ctx, header, SourceIP(ctx))
	if err != nil {
		return ctx, err
	}
	return withCredential(authz.NewContext(ctx, v), c), nil
}

// authenticateHeader authenticates the value of an Authorization header.
func (s *Service) authenticateHeader(ctx context.Context, header, ip string) (*authz.Viewer, *Credential, error) {
	token, ok := bearer(header)
	if !ok {
		return nil, nil, apierr.Unauthenticated("malformed Authorization header: send \"Authorization: Bearer <token>\"")
	}
	return s.authenticate(ctx, token, ip)
}

// bearer extracts the token of "Bearer <token>" (the scheme in any case).
func bearer(header string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(header), " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" || strings.ContainsAny(token, " \t\r\n") {
		return "", false
	}
	return token, true
}

// remoteHost is the address part of a RemoteAddr ("10.0.0.1:5000", "[2001:db8::1]:5000"), with
// IPv4-mapped IPv6 addresses written as IPv4.
func remoteHost(remoteAddr string) string {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	if addr, err := netip.ParseAddr(host); err == nil {
		return addr.WithZone("").Unmap().String()
	}
	return host
}

// writeError answers with a GraphQL-shaped error body.
func writeError(w http.ResponseWriter, status int, e *apierr.Error) {
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	if status == http.StatusUnauthorized {
		h.Set("WWW-Authenticate", `Bearer realm="virtflow"`)
	}
	w.WriteHeader(status)
	body := map[string]any{"errors": []any{map[string]any{
		"message":    e.Message,
		"extensions": map[string]any{"code": string(e.Code)},
	}}}
	_ = json.NewEncoder(w).Encode(body)
}
