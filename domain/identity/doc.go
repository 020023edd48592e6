// Package identity says who is calling VirtFlow and manages the credentials and role
// bindings behind that answer.
//
//   - Tokens (token.go): every credential is a bearer token "vf_" + 43 characters of
//     base64url (32 random bytes). Only its SHA-256 (hex) and its first 10 characters (the
//     prefix shown to users) are stored; the plaintext is returned once, when the token is
//     made. A fast hash is right for tokens because they carry 256 bits of entropy.
//   - Passwords (password.go): bcrypt at cost 12, 12 characters to 72 bytes, compared in
//     constant time; an unknown user costs as much time as a wrong password.
//   - Authentication (authenticate.go): Service.Authenticate turns a token and the client
//     address into an authz.Viewer, reading the database on every request (no cache), so a
//     revoked token, a disabled user or a revoked role binding takes effect at once on every
//     replica.
//   - Sign-in (login.go, ratelimit.go): Service.Login checks a password and opens a session
//     token; failed attempts are counted in Redis per account and per source address, shared
//     by all replicas.
//   - Tokens, roles and accounts (apitoken.go, roles.go, account.go, bootstrap.go): creating
//     and revoking API tokens, granting and revoking roles, setting passwords, and the
//     VIRTFLOW_ADMIN_TOKEN bootstrap. These check what the viewer may do themselves and then
//     act as the system viewer "system:identity", since ent's privacy policy alone would not
//     let a user manage its own tokens.
//   - HTTP (http.go): Service.Middleware reads "Authorization: Bearer <token>" and puts the
//     viewer and the client address in the request context; Service.WebsocketInit does the
//     same for a graphql-ws connection_init payload.
//
// Every failure a client can cause is an *apierr.Error: UNAUTHENTICATED for bad credentials
// (with a deliberately vague message; the precise reason is logged), FORBIDDEN, NOT_FOUND,
// VALIDATION naming the GraphQL field, and RATE_LIMITED for throttled logins.
package identity
