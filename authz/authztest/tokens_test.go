package authztest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/identity"
	"github.com/virtflow/virtflow/ent/apitoken"
	"github.com/virtflow/virtflow/ent/rolebinding"
	"github.com/virtflow/virtflow/ent/user"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
)

// createToken runs createAPIToken as the admin (for another user when input names userID) and
// returns the plaintext and the token's id.
func createToken(t *testing.T, w *world, by string, input map[string]any) (string, int) {
	t.Helper()
	r := send(t, w.env.Handler, call{token: by, query: `mutation($in: CreateAPITokenInput!) { createAPIToken(input: $in) { token apiToken { id prefix scope } } }`,
		vars: map[string]any{"in": input}})
	var out struct {
		CreateAPIToken struct {
			Token    string
			APIToken struct{ ID, Prefix, Scope string }
		}
	}
	mustData(t, r, &out)
	p := out.CreateAPIToken
	if !strings.HasPrefix(p.Token, identity.TokenPrefix) || len(p.Token) != identity.TokenLen || p.APIToken.Prefix != p.Token[:identity.DisplayPrefixLen] {
		t.Errorf("createAPIToken returned token %q (prefix %q): not a %d-character %s token with its display prefix", p.Token, p.APIToken.Prefix, identity.TokenLen, identity.TokenPrefix)
	}
	var id int
	fmt.Sscan(p.APIToken.ID, &id)
	return p.Token, id
}

// login signs in and returns the session token and its id.
func login(t *testing.T, w *world, username, password string) (string, int) {
	t.Helper()
	r := send(t, w.env.Handler, call{query: `mutation($u: String!, $p: String!) { login(username: $u, password: $p) { token apiToken { id kind } } }`,
		vars: map[string]any{"u": username, "p": password}})
	var out struct {
		Login struct {
			Token    string
			APIToken struct{ ID, Kind string }
		}
	}
	mustData(t, r, &out)
	if out.Login.APIToken.Kind != "SESSION" {
		t.Errorf("login made a %s token, want SESSION", out.Login.APIToken.Kind)
	}
	var id int
	fmt.Sscan(out.Login.APIToken.ID, &id)
	return out.Login.Token, id
}

// whoami is `me { username }` with token from addr: the username, or the error code.
func whoami(t *testing.T, w *world, token, addr string, header http.Header) (string, gqltest.Response) {
	t.Helper()
	r := send(t, w.env.Handler, call{token: token, query: `{ me { username } }`, remoteAddr: addr, header: header})
	var out struct{ Me *struct{ Username string } }
	_ = json.Unmarshal(r.Data, &out)
	if len(r.Errors) == 0 && out.Me != nil {
		return out.Me.Username, r
	}
	return "", r
}

// expectUnauthenticated asserts that r is the middleware's refusal: HTTP 401, UNAUTHENTICATED.
func expectUnauthenticated(t *testing.T, what string, r gqltest.Response) {
	t.Helper()
	if r.Status != http.StatusUnauthorized || !onlyCode(r, "UNAUTHENTICATED") {
		t.Errorf("%s: want HTTP 401 UNAUTHENTICATED, got HTTP %d data %s errors %s", what, r.Status, r.Data, r.ErrorsString())
	}
}

// TestTokenPlaintextNeverStored makes tokens every way there is — createAPIToken, login, the
// identity API, the bootstrap secret — and checks that no table holds a plaintext: api_tokens
// keeps exactly the SHA-256 and the display prefix, and nothing the API returns shows a hash.
func TestTokenPlaintextNeverStored(t *testing.T) {
	w := newWorld(t)
	op := w.viewer("operator")
	const password = "password-for-token-scan"
	u := w.newUserWithPassword("scan", password)
	username := w.c.User.GetX(w.ctx, u).Username

	plains := map[string]string{} // plaintext -> how it was made
	p, _ := createToken(t, w, gqltest.AdminToken, map[string]any{"name": "for operator", "userID": gid(op.userID), "scope": "READ_WRITE"})
	plains[p] = "createAPIToken for another user"
	p, _ = createToken(t, w, op.token, map[string]any{"name": "own", "expiresAt": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)})
	plains[p] = "createAPIToken for oneself"
	p, _ = login(t, w, username, password)
	plains[p] = "login"
	p, _, err := w.env.Identity.CreateAPIToken(authz.NewContext(context.Background(), &authz.Viewer{UserID: u, Name: username}),
		identity.CreateTokenInput{Name: "via Go", Scope: "READ_ONLY"})
	if err != nil {
		t.Fatalf("identity.CreateAPIToken: %v", err)
	}
	plains[p] = "identity.CreateAPIToken"
	plains[gqltest.AdminToken] = "bootstrap secret"

	for plain, how := range plains {
		if name, r := whoami(t, w, plain, "", nil); name == "" {
			t.Errorf("%s: the token does not work: %s", how, r.ErrorsString())
		}
		tok, err := w.c.APIToken.Query().Where(apitoken.TokenHash(identity.HashToken(plain))).Only(w.ctx)
		if err != nil {
			t.Errorf("%s: no api_tokens row with the token's SHA-256: %v", how, err)
			continue
		}
		if strings.HasPrefix(plain, identity.TokenPrefix) && len(plain) == identity.TokenLen && tok.Prefix != plain[:identity.DisplayPrefixLen] {
			t.Errorf("%s: prefix %q, want %q", how, tok.Prefix, plain[:identity.DisplayPrefixLen])
		}
	}

	// Every row of every table, as text.
	tables, err := w.env.DB.DB.QueryContext(context.Background(),
		`SELECT quote_ident(table_name) FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for tables.Next() {
		var n string
		if err := tables.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	tables.Close()
	scanned := 0
	for _, table := range names {
		rows, err := w.env.DB.DB.QueryContext(context.Background(), `SELECT row_to_json(t)::text FROM `+table+` t`)
		if err != nil {
			t.Fatalf("scan %s: %v", table, err)
		}
		for rows.Next() {
			var row string
			if err := rows.Scan(&row); err != nil {
				t.Fatal(err)
			}
			scanned++
			for plain, how := range plains {
				secret := strings.TrimPrefix(plain, identity.TokenPrefix)
				if strings.Contains(row, plain) || strings.Contains(row, secret) || strings.Contains(row, password) {
					t.Errorf("table %s holds the plaintext of a token made by %s (or the password): %s", table, how, row)
				}
			}
		}
		rows.Close()
	}
	t.Logf("%d rows of %d tables scanned for %d token plaintexts", scanned, len(names), len(plains))

	// The API shows no hash.
	for _, f := range gqlSchema().Types["APIToken"].Fields {
		if strings.Contains(strings.ToLower(f.Name), "hash") || f.Name == "token" {
			t.Errorf("APIToken exposes field %s", f.Name)
		}
	}
	r := send(t, w.env.Handler, call{token: gqltest.AdminToken, query: `{ apiTokens(first: 1000) { edges { node { id name prefix scope kind allowedCidrs expiresAt lastUsedAt revokedAt owner { username } } } } }`})
	mustData(t, r, nil)
	for plain, how := range plains {
		if s := containsAny(string(r.Data), plain, identity.HashToken(plain)); s != "" {
			t.Errorf("apiTokens shows the plaintext or hash of the token made by %s", how)
		}
	}
}

// TestTokenExpiry checks that a token stops working when it expires, and that no token can be
// made already expired.
func TestTokenExpiry(t *testing.T) {
	w := newWorld(t)
	op := w.viewer("operator")
	soon := time.Now().Add(1500 * time.Millisecond).UTC()
	later := time.Now().Add(time.Hour).UTC()
	short, _ := createToken(t, w, gqltest.AdminToken, map[string]any{"name": "short", "userID": gid(op.userID), "expiresAt": soon.Format(time.RFC3339Nano)})
	long, longID := createToken(t, w, gqltest.AdminToken, map[string]any{"name": "long", "userID": gid(op.userID), "expiresAt": later.Format(time.RFC3339Nano)})
	for _, tok := range []string{short, long} {
		if name, r := whoami(t, w, tok, "", nil); name == "" {
			t.Fatalf("a fresh token does not work: %s", r.ErrorsString())
		}
	}
	// Expired in the database: refused at once.
	w.c.APIToken.UpdateOneID(longID).SetExpiresAt(time.Now().Add(-time.Second)).ExecX(w.ctx)
	_, r := whoami(t, w, long, "", nil)
	expectUnauthenticated(t, "a token whose expiry has passed", r)
	// Expired by the clock.
	time.Sleep(time.Until(soon) + 100*time.Millisecond)
	_, r = whoami(t, w, short, "", nil)
	expectUnauthenticated(t, "a token after its expiresAt", r)

	// A session expires too.
	const password = "session-expiry-password"
	u := w.newUserWithPassword("expiring", password)
	session, sid := login(t, w, w.c.User.GetX(w.ctx, u).Username, password)
	if s := w.c.APIToken.GetX(w.ctx, sid); s.ExpiresAt == nil || s.ExpiresAt.After(time.Now().Add(identity.DefaultSessionTTL+time.Minute)) {
		t.Errorf("session expires at %v, want within %v", s.ExpiresAt, identity.DefaultSessionTTL)
	}
	w.c.APIToken.UpdateOneID(sid).SetExpiresAt(time.Now().Add(-time.Second)).ExecX(w.ctx)
	_, r = whoami(t, w, session, "", nil)
	expectUnauthenticated(t, "an expired session", r)

	// A token cannot be made expired.
	r = send(t, w.env.Handler, call{token: gqltest.AdminToken, query: `mutation($in: CreateAPITokenInput!) { createAPIToken(input: $in) { token } }`,
		vars: map[string]any{"in": map[string]any{"name": "stale", "expiresAt": time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)}}})
	if e := r.Errors; len(e) == 0 || e[0].Code() != "VALIDATION" || e[0].Field() != "expiresAt" {
		t.Errorf("createAPIToken(expiresAt in the past): want VALIDATION on expiresAt, got %s", r.ErrorsString())
	}
}

// TestTokenRevocation checks that revoking a token, a session (by a password change) or a role
// takes effect on the very next request.
func TestTokenRevocation(t *testing.T) {
	w := newWorld(t)
	uid := w.newUser("revoking")
	w.grant(uid, authz.RoleOperator, 0, 0)
	self, selfID := createToken(t, w, gqltest.AdminToken, map[string]any{"name": "self", "userID": gid(uid), "scope": "READ_WRITE"})
	other, otherID := createToken(t, w, gqltest.AdminToken, map[string]any{"name": "other", "userID": gid(uid), "scope": "READ_WRITE"})
	stranger := w.viewer("operator")

	t.Run("revoked with itself", func(t *testing.T) {
		if name, r := whoami(t, w, self, "", nil); name == "" {
			t.Fatalf("token does not work: %s", r.ErrorsString())
		}
		r := send(t, w.env.Handler, call{token: self, query: `mutation($id: ID!) { revokeAPIToken(id: $id) { id revokedAt } }`, vars: map[string]any{"id": gid(selfID)}})
		mustData(t, r, nil)
		_, r = whoami(t, w, self, "", nil)
		expectUnauthenticated(t, "the next request with a revoked token", r)
		r = send(t, w.env.Handler, call{token: self, query: `mutation($id: ID!) { revokeAPIToken(id: $id) { id } }`, vars: map[string]any{"id": gid(selfID)}})
		expectUnauthenticated(t, "a mutation with a revoked token", r)
	})
	t.Run("another user's token is not found", func(t *testing.T) {
		r := send(t, w.env.Handler, call{token: stranger.token, query: `mutation($id: ID!) { revokeAPIToken(id: $id) { id } }`, vars: map[string]any{"id": gid(otherID)}})
		if !onlyCode(r, "NOT_FOUND") {
			t.Errorf("operator revoking another user's token: want NOT_FOUND, got %s", r.ErrorsString())
		}
		if name, r := whoami(t, w, other, "", nil); name == "" {
			t.Errorf("the token stopped working: %s", r.ErrorsString())
		}
	})
	t.Run("revoked by an admin", func(t *testing.T) {
		r := send(t, w.env.Handler, call{token: gqltest.AdminToken, query: `mutation($id: ID!) { revokeAPIToken(id: $id) { id } }`, vars: map[string]any{"id": gid(otherID)}})
		mustData(t, r, nil)
		_, r = whoami(t, w, other, "", nil)
		expectUnauthenticated(t, "a token an admin revoked", r)
	})
	t.Run("password change ends other sessions", func(t *testing.T) {
		const password = "first-password-123"
		u := w.newUserWithPassword("sessions", password)
		name := w.c.User.GetX(w.ctx, u).Username
		s1, _ := login(t, w, name, password)
		s2, _ := login(t, w, name, password)
		r := send(t, w.env.Handler, call{token: s1, query: `mutation($id: ID!, $p: String!) { setUserPassword(id: $id, password: $p) { id } }`,
			vars: map[string]any{"id": gid(u), "p": "second-password-456"}})
		if len(r.Errors) > 0 {
			// The mutation failed: then nothing may have changed.
			t.Errorf("a user setting its own password: %s", r.ErrorsString())
			if identity.CheckPassword(w.c.User.GetX(w.ctx, u).PasswordHash, "second-password-456") {
				t.Errorf("setUserPassword failed, yet the new password is stored")
			}
			if _, r := whoami(t, w, s2, "", nil); r.Status == http.StatusUnauthorized {
				t.Errorf("setUserPassword failed, yet it revoked the user's other sessions")
			}
			return
		}
		if got, r := whoami(t, w, s1, "", nil); got != name {
			t.Errorf("the session that changed the password stopped working: %s", r.ErrorsString())
		}
		_, r = whoami(t, w, s2, "", nil)
		expectUnauthenticated(t, "another session after a password change", r)
	})
	t.Run("revoked role", func(t *testing.T) {
		update := `mutation($id: ID!) { updateRegion(id: $id, input: {description: "by the operator"}) { id } }`
		tok, _ := createToken(t, w, gqltest.AdminToken, map[string]any{"name": "op", "userID": gid(uid), "scope": "READ_WRITE"})
		mustData(t, send(t, w.env.Handler, call{token: tok, query: update, vars: map[string]any{"id": gid(w.region)}}), nil)
		b := w.c.RoleBinding.Query().Where(rolebinding.HasUserWith(user.ID(uid)), rolebinding.RoleEQ(rolebinding.RoleOperator)).OnlyIDX(w.ctx)
		mustData(t, send(t, w.env.Handler, call{token: gqltest.AdminToken, query: `mutation($id: ID!) { revokeRole(id: $id) }`, vars: map[string]any{"id": gid(b)}}), nil)
		r := send(t, w.env.Handler, call{token: tok, query: update, vars: map[string]any{"id": gid(w.region)}})
		if !onlyCode(r, "FORBIDDEN") {
			t.Errorf("update after the operator role was revoked: want FORBIDDEN, got %s %s", r.Data, r.ErrorsString())
		}
	})
}

// TestTokenCIDR checks a token limited to networks: it works from inside them only, judged by
// the connection's address (X-Forwarded-For is not trusted), and cannot mint a broader token.
func TestTokenCIDR(t *testing.T) {
	w := newWorld(t)
	op := w.viewer("operator")
	tok, _ := createToken(t, w, gqltest.AdminToken, map[string]any{"name": "cidr", "userID": gid(op.userID), "scope": "READ_WRITE",
		"allowedCIDRs": []string{"10.20.0.0/16", "2001:db8:1::/48"}})
	opName := w.c.User.GetX(w.ctx, op.userID).Username
	for _, tc := range []struct {
		addr   string
		header http.Header
		ok     bool
	}{
		{"10.20.3.4:5555", nil, true},
		{"10.20.255.254:1", nil, true},
		{"[::ffff:10.20.3.4]:80", nil, true},
		{"[2001:db8:1::5]:443", nil, true},
		{"10.21.0.1:5555", nil, false},
		{"192.0.2.7:5555", nil, false},
		{"[2001:db8:2::5]:443", nil, false},
		{"192.0.2.7:5555", http.Header{"X-Forwarded-For": {"10.20.3.4"}}, false},
		{"192.0.2.7:5555", http.Header{"X-Real-Ip": {"10.20.3.4"}, "Forwarded": {"for=10.20.3.4"}}, false},
	} {
		name, r := whoami(t, w, tok, tc.addr, tc.header)
		switch {
		case tc.ok && name != opName:
			t.Errorf("from %s: want %s, got %s", tc.addr, opName, r.ErrorsString())
		case !tc.ok:
			expectUnauthenticated(t, fmt.Sprintf("from %s %v", tc.addr, tc.header), r)
		}
	}

	// A token made with it cannot be used from further away.
	mint := `mutation($in: CreateAPITokenInput!) { createAPIToken(input: $in) { token } }`
	r := send(t, w.env.Handler, call{token: tok, remoteAddr: "10.20.3.4:5555", query: mint,
		vars: map[string]any{"in": map[string]any{"name": "wider", "scope": "READ_WRITE", "allowedCIDRs": []string{"0.0.0.0/0"}}}})
	if !onlyCode(r, "FORBIDDEN") {
		t.Errorf("a CIDR-bound token minting a 0.0.0.0/0 token: want FORBIDDEN, got %s", r.ErrorsString())
	}
	r = send(t, w.env.Handler, call{token: tok, remoteAddr: "10.20.3.4:5555", query: mint,
		vars: map[string]any{"in": map[string]any{"name": "inherits", "scope": "READ_WRITE"}}})
	var out struct{ CreateAPIToken struct{ Token string } }
	mustData(t, r, &out)
	_, r = whoami(t, w, out.CreateAPIToken.Token, "192.0.2.7:5555", nil)
	expectUnauthenticated(t, "a token minted by a CIDR-bound token, used from outside its networks", r)
}

// TestReadOnlyToken checks that a read-only token reads but cannot change anything, whatever
// roles its owner holds: no mutation, no token, no password, no role.
func TestReadOnlyToken(t *testing.T) {
	w := newWorld(t)
	op := w.viewer("operator")
	ro, roID := createToken(t, w, gqltest.AdminToken, map[string]any{"name": "ro", "userID": gid(op.userID), "scope": "READ_ONLY"})
	dflt, _ := createToken(t, w, gqltest.AdminToken, map[string]any{"name": "default scope", "userID": gid(op.userID)})
	adminRO, _ := w.mintToken(w.adminID, tokenOpts{readOnly: true})
	region := w.c.Region.GetX(w.ctx, w.region)
	spare, _ := entities["Region"].make(w) // no dependents: a delete could only be refused for the token

	for name, tok := range map[string]string{"read-only": ro, "default scope": dflt, "admin's read-only": adminRO} {
		t.Run(name, func(t *testing.T) {
			r := send(t, w.env.Handler, call{token: tok, query: `query($id: ID!) { node(id: $id) { id } regions { totalCount } }`, vars: map[string]any{"id": gid(w.region)}})
			mustData(t, r, nil)
			since := lastAuditID(w)
			for _, m := range []struct{ query string }{
				{`mutation($r: ID!) { updateRegion(id: $r, input: {description: "read-only"}) { id } }`},
				{`mutation { createRegion(input: {name: "ro-region"}) { id } }`},
				{`mutation($s: ID!) { deleteRegion(id: $s) }`},
				{`mutation { createAPIToken(input: {name: "escalate", scope: READ_WRITE}) { token } }`},
				{`mutation($t: ID!) { revokeAPIToken(id: $t) { id } }`},
				{`mutation($u: ID!) { setUserPassword(id: $u, password: "a-long-new-password") { id } }`},
				{`mutation($u: ID!) { grantRole(input: {userID: $u, role: ADMIN}) { id } }`},
			} {
				vars := map[string]any{}
				for _, v := range []string{"r", "s", "t", "u"} {
					if strings.Contains(m.query, "$"+v) {
						vars[v] = map[string]string{"r": gid(w.region), "s": gid(spare), "t": gid(roID), "u": gid(op.userID)}[v]
					}
				}
				r := send(t, w.env.Handler, call{token: tok, query: m.query, vars: vars})
				if !onlyCode(r, "FORBIDDEN") {
					t.Errorf("%s: want FORBIDDEN, got %s %s", strings.Fields(m.query)[2], r.Data, r.ErrorsString())
				}
			}
			if rows := newAuditRows(w, since); len(rows) != 0 {
				t.Errorf("refused mutations wrote %d audit rows", len(rows))
			}
		})
	}
	if got := w.c.Region.GetX(w.ctx, w.region); got.Description != region.Description {
		t.Errorf("region changed: %q", got.Description)
	}
	if _, err := w.c.Region.Get(w.ctx, spare); err != nil {
		t.Errorf("a read-only token deleted a region: %v", err)
	}
	if w.c.APIToken.GetX(w.ctx, roID).RevokedAt != nil {
		t.Errorf("the read-only token revoked itself")
	}
	if n := w.c.RoleBinding.Query().Where(rolebinding.HasUserWith(user.ID(op.userID)), rolebinding.RoleEQ(rolebinding.RoleAdmin)).CountX(w.ctx); n != 0 {
		t.Errorf("a read-only token granted ADMIN")
	}
}

// wsClient speaks graphql-transport-ws.
type wsClient struct {
	t    *testing.T
	conn *websocket.Conn
	ctx  context.Context
}

type wsMessage struct {
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

func dialWS(t *testing.T, srv *httptest.Server, header http.Header) (*wsClient, *http.Response, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	url := "ws" + strings.TrimPrefix(srv.URL, "http") + "/query"
	conn, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}, HTTPHeader: header})
	if err != nil {
		return nil, resp, err
	}
	t.Cleanup(func() { _ = conn.CloseNow() })
	return &wsClient{t: t, conn: conn, ctx: ctx}, resp, nil
}

func (c *wsClient) send(m any) {
	c.t.Helper()
	if err := wsjson.Write(c.ctx, c.conn, m); err != nil {
		c.t.Fatalf("websocket write: %v", err)
	}
}

// next reads messages until one of the given types, skipping pings and keep-alives; it returns
// the read error when the server closes the connection.
func (c *wsClient) next(types ...string) (wsMessage, error) {
	for {
		var m wsMessage
		if err := wsjson.Read(c.ctx, c.conn, &m); err != nil {
			return m, err
		}
		if m.Type == "ping" {
			c.send(map[string]string{"type": "pong"})
		}
		for _, typ := range types {
			if m.Type == typ {
				return m, nil
			}
		}
	}
}

// init sends connection_init with payload and reports whether the server acknowledged it.
func (c *wsClient) init(payload map[string]any) (bool, error) {
	c.send(map[string]any{"type": "connection_init", "payload": payload})
	m, err := c.next("connection_ack", "connection_error", "error")
	return err == nil && m.Type == "connection_ack", err
}

// query runs an operation and returns its result payload.
func (c *wsClient) query(q string) gqltest.Response {
	c.t.Helper()
	id := fmt.Sprint(seq.Add(1))
	c.send(map[string]any{"id": id, "type": "subscribe", "payload": map[string]any{"query": q}})
	m, err := c.next("next", "error")
	if err != nil {
		c.t.Fatalf("websocket: %v", err)
	}
	var r gqltest.Response
	if m.Type == "error" {
		_ = json.Unmarshal(m.Payload, &r.Errors)
		return r
	}
	_ = json.Unmarshal(m.Payload, &r)
	return r
}

// TestWebsocketAuth checks graphql-transport-ws connections: connection_init with Authorization
// authenticates the connection; without it, operations are UNAUTHENTICATED; a bad token is
// refused; the Authorization header of the upgrade request works like the HTTP one.
func TestWebsocketAuth(t *testing.T) {
	w := newWorld(t)
	srv := httptest.NewServer(w.env.Handler)
	t.Cleanup(srv.Close)
	op := w.viewer("operator")
	opName := w.c.User.GetX(w.ctx, op.userID).Username
	me := `{ me { username } regions(where: {id: "` + gid(w.region) + `"}) { totalCount } }`

	t.Run("connection_init with Authorization", func(t *testing.T) {
		for _, key := range []string{"Authorization", "authorization"} {
			c, _, err := dialWS(t, srv, nil)
			if err != nil {
				t.Fatal(err)
			}
			if ok, err := c.init(map[string]any{key: "Bearer " + op.token}); !ok {
				t.Fatalf("%s: connection not acknowledged: %v", key, err)
			}
			r := c.query(me)
			if !strings.Contains(string(r.Data), `"username":"`+opName+`"`) || !strings.Contains(string(r.Data), `"totalCount":1`) || len(r.Errors) > 0 {
				t.Errorf("%s: me over the websocket = %s %s", key, r.Data, r.ErrorsString())
			}
		}
	})
	t.Run("without Authorization", func(t *testing.T) {
		c, _, err := dialWS(t, srv, nil)
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := c.init(map[string]any{}); !ok {
			t.Fatalf("connection not acknowledged: %v", err)
		}
		for _, q := range []string{me, `{ regions { totalCount } }`, `mutation { createRegion(input: {name: "ws-anonymous"}) { id } }`} {
			if r := c.query(q); !onlyCode(r, "UNAUTHENTICATED") {
				t.Errorf("%s without Authorization: want UNAUTHENTICATED, got %s %s", q, r.Data, r.ErrorsString())
			}
		}
	})
	t.Run("bad token in connection_init", func(t *testing.T) {
		expired, _ := w.mintToken(op.userID, tokenOpts{expires: ptr(time.Now().Add(-time.Minute))})
		for _, auth := range []any{"Bearer vf_not-a-token", "Bearer " + expired, "Basic dXNlcjpwYXNz", 42} {
			c, _, err := dialWS(t, srv, nil)
			if err != nil {
				t.Fatal(err)
			}
			ok, err := c.init(map[string]any{"Authorization": auth})
			if ok {
				r := c.query(me)
				t.Errorf("Authorization %v: connection acknowledged; me = %s %s", auth, r.Data, r.ErrorsString())
				continue
			}
			var ce websocket.CloseError
			if err != nil && !errors.As(err, &ce) {
				t.Logf("Authorization %v: connection ended with %v", auth, err)
			}
		}
	})
	t.Run("Authorization on the upgrade request", func(t *testing.T) {
		c, _, err := dialWS(t, srv, http.Header{"Authorization": {"Bearer " + op.token}})
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := c.init(nil); !ok {
			t.Fatalf("connection not acknowledged: %v", err)
		}
		if r := c.query(me); !strings.Contains(string(r.Data), opName) {
			t.Errorf("me = %s %s", r.Data, r.ErrorsString())
		}
		_, resp, err := dialWS(t, srv, http.Header{"Authorization": {"Bearer vf_not-a-token"}})
		if err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("upgrade with an invalid token: want HTTP 401, got %v %v", resp, err)
		}
	})
}

func ptr[T any](v T) *T { return &v }

// TestIdentityMutationsByRole checks the identity mutations, which decide for themselves who
// may use them, for every viewer of the matrix: tokens for oneself for everyone signed in,
// tokens and passwords of others for admins only, roles for admins and, within their tenant,
// tenant admins.
func TestIdentityMutationsByRole(t *testing.T) {
	w := newWorld(t)
	type op struct {
		name  string
		query string
		vars  func(v *viewer) map[string]any
		want  func(v *viewer) string // "" for success, else the code
	}
	isAdmin := func(v *viewer) bool { return slices.Contains(v.platform, authz.RoleAdmin) }
	tenantAdminOf := func(v *viewer, tenant int) bool { return v.tenantRole == authz.RoleTenantAdmin && v.tenant == tenant }
	rule := func(ok func(v *viewer) bool, refusal string) func(v *viewer) string {
		return func(v *viewer) string {
			switch {
			case v.anonymous:
				return "UNAUTHENTICATED"
			case ok(v):
				return ""
			}
			return refusal
		}
	}
	anyone := func(*viewer) bool { return true }
	binding := func(tenant int) int {
		u := w.newUser("bound", tenant)
		w.grant(u, authz.RoleTenantMember, tenant, 0)
		return w.c.RoleBinding.Query().Where(rolebinding.HasUserWith(user.ID(u))).OnlyIDX(w.ctx)
	}
	ops := []op{
		{"createAPIToken for oneself", `mutation { createAPIToken(input: {name: "mine", scope: READ_WRITE}) { apiToken { owner { id } } } }`,
			func(*viewer) map[string]any { return nil }, rule(anyone, "")},
		{"createAPIToken for another user", `mutation($u: ID!) { createAPIToken(input: {name: "theirs", userID: $u}) { apiToken { id } } }`,
			func(*viewer) map[string]any { return map[string]any{"u": gid(w.newUser("other"))} }, rule(isAdmin, "FORBIDDEN")},
		{"revokeAPIToken of another user", `mutation($id: ID!) { revokeAPIToken(id: $id) { id } }`,
			func(*viewer) map[string]any {
				_, id := w.mintToken(w.newUser("other"), tokenOpts{})
				return map[string]any{"id": gid(id)}
			},
			rule(isAdmin, "NOT_FOUND")},
		{"revokeAPIToken of one's own token", `mutation($id: ID!) { revokeAPIToken(id: $id) { id } }`,
			func(v *viewer) map[string]any {
				uid := v.userID
				if uid == 0 {
					uid = w.adminID
				}
				_, id := w.mintToken(uid, tokenOpts{})
				return map[string]any{"id": gid(id)}
			}, rule(anyone, "")},
		{"grantRole in tenant A", `mutation($u: ID!, $t: ID!) { grantRole(input: {userID: $u, role: TENANT_MEMBER, tenantID: $t}) { id } }`,
			func(*viewer) map[string]any {
				return map[string]any{"u": gid(w.newUser("grantee", w.tenantA)), "t": gid(w.tenantA)}
			},
			rule(func(v *viewer) bool { return isAdmin(v) || tenantAdminOf(v, w.tenantA) }, "FORBIDDEN")},
		{"grantRole in tenant B", `mutation($u: ID!, $t: ID!) { grantRole(input: {userID: $u, role: TENANT_ADMIN, tenantID: $t}) { id } }`,
			func(*viewer) map[string]any {
				return map[string]any{"u": gid(w.newUser("grantee", w.tenantB)), "t": gid(w.tenantB)}
			},
			rule(isAdmin, "FORBIDDEN")},
		{"grantRole ADMIN", `mutation($u: ID!) { grantRole(input: {userID: $u, role: ADMIN}) { id } }`,
			func(*viewer) map[string]any { return map[string]any{"u": gid(w.newUser("grantee"))} }, rule(isAdmin, "FORBIDDEN")},
		{"grantRole AGENT", `mutation($u: ID!, $n: ID!) { grantRole(input: {userID: $u, role: AGENT, nodeID: $n}) { id } }`,
			func(*viewer) map[string]any { return map[string]any{"u": gid(w.newUser("grantee")), "n": gid(w.node1)} }, rule(isAdmin, "FORBIDDEN")},
		{"revokeRole in tenant A", `mutation($id: ID!) { revokeRole(id: $id) }`,
			func(*viewer) map[string]any { return map[string]any{"id": gid(binding(w.tenantA))} },
			rule(func(v *viewer) bool { return isAdmin(v) || tenantAdminOf(v, w.tenantA) }, "NOT_FOUND")},
		{"revokeRole in tenant B", `mutation($id: ID!) { revokeRole(id: $id) }`,
			func(*viewer) map[string]any { return map[string]any{"id": gid(binding(w.tenantB))} }, rule(isAdmin, "NOT_FOUND")},
		{"setUserPassword of another user", `mutation($u: ID!) { setUserPassword(id: $u, password: "another-users-password") { id } }`,
			func(*viewer) map[string]any { return map[string]any{"u": gid(w.newUser("other", w.tenantA))} }, rule(isAdmin, "FORBIDDEN")},
		{"setUserPassword of oneself", `mutation($u: ID!) { setUserPassword(id: $u, password: "my-own-new-password") { id } }`,
			func(v *viewer) map[string]any { return map[string]any{"u": gid(v.userID)} }, rule(anyone, "")},
	}
	cases := 0
	for _, v := range w.viewers {
		t.Run(v.name, func(t *testing.T) {
			for _, o := range ops {
				cases++
				r := w.do(t, v, o.query, o.vars(v))
				switch want := o.want(v); {
				case want == "" && len(r.Errors) > 0:
					t.Errorf("%s: want success, got %s", o.name, r.ErrorsString())
				case want != "" && !onlyCode(r, want):
					t.Errorf("%s: want %s, got data %s errors %s", o.name, want, r.Data, r.ErrorsString())
				}
			}
		})
	}
	t.Logf("%d identity mutation cases", cases)
}

// TestTenantScopedToken checks that a token scoped to a tenant carries only its owner's roles
// in that tenant: not the platform roles, not the maintainer, not other tenants.
func TestTenantScopedToken(t *testing.T) {
	w := newWorld(t)
	uid := w.newUser("multi", w.tenantA, w.tenantB)
	w.grant(uid, authz.RoleAdmin, 0, 0)
	w.grant(uid, authz.RoleTenantAdmin, w.tenantA, 0)
	w.grant(uid, authz.RoleTenantMember, w.tenantB, 0)
	m := w.c.Maintainer.Create().SetName("Multi").SetAccount(uniq("multi")).AddHostIDs(w.hostM).SaveX(w.ctx).ID
	w.c.User.UpdateOneID(uid).SetMaintainerID(m).ExecX(w.ctx)
	scoped, _ := createToken(t, w, gqltest.AdminToken, map[string]any{"name": "scoped", "userID": gid(uid), "scope": "READ_WRITE", "tenantID": gid(w.tenantA)})
	full, _ := createToken(t, w, gqltest.AdminToken, map[string]any{"name": "full", "userID": gid(uid), "scope": "READ_WRITE"})
	vmA, vmB := w.newVM(w.tenantA, w.node1), w.newVM(w.tenantB, w.node2)

	vms := `query($ids: [ID!]) { virtualMachines(where: {idIn: $ids}) { totalCount } }`
	ids := map[string]any{"ids": []string{gid(vmA), gid(vmB)}}
	for _, tc := range []struct {
		name, token, query string
		vars               map[string]any
		want               string // a code, or the data expected to be contained
	}{
		{"full token reads racks", full, `{ racks { totalCount } }`, nil, `"racks"`},
		{"full token reads both tenants' VMs", full, vms, ids, `"totalCount":2`},
		{"scoped token reads no racks", scoped, `{ racks { totalCount } }`, nil, "FORBIDDEN"},
		{"scoped token reads its tenant's VMs only", scoped, vms, ids, `"totalCount":1`},
		{"scoped token cannot update a host its owner maintains", scoped, `mutation($id: ID!) { updateHost(id: $id, input: {description: "x"}) { id } }`,
			map[string]any{"id": gid(w.hostM)}, "FORBIDDEN"},
		{"scoped token cannot change tenant B's VM", scoped, `mutation($id: ID!) { updateVirtualMachine(id: $id, input: {description: "x"}) { id } }`,
			map[string]any{"id": gid(vmB)}, "NOT_FOUND"},
		{"scoped token changes tenant A's VM", scoped, `mutation($id: ID!) { updateVirtualMachine(id: $id, input: {description: "x"}) { id } }`,
			map[string]any{"id": gid(vmA)}, `"updateVirtualMachine"`},
		{"scoped token cannot grant ADMIN", scoped, `mutation($u: ID!) { grantRole(input: {userID: $u, role: ADMIN}) { id } }`,
			map[string]any{"u": gid(w.newUser("x"))}, "FORBIDDEN"},
		{"scoped token cannot mint an unscoped one", scoped, `mutation($t: ID!) { createAPIToken(input: {name: "escape", tenantID: $t}) { token } }`,
			map[string]any{"t": gid(w.tenantB)}, "FORBIDDEN"},
	} {
		r := send(t, w.env.Handler, call{token: tc.token, query: tc.query, vars: tc.vars})
		switch {
		case strings.ToUpper(tc.want) == tc.want && !strings.Contains(tc.want, `"`):
			if !onlyCode(r, tc.want) {
				t.Errorf("%s: want %s, got %s %s", tc.name, tc.want, r.Data, r.ErrorsString())
			}
		case len(r.Errors) > 0 || !strings.Contains(string(r.Data), tc.want):
			t.Errorf("%s: want data with %s, got %s %s", tc.name, tc.want, r.Data, r.ErrorsString())
		}
	}

	// A disabled owner's tokens stop working at once, and work again once re-enabled.
	w.c.User.UpdateOneID(uid).SetStatus(user.StatusDisabled).ExecX(w.ctx)
	_, r := whoami(t, w, full, "", nil)
	expectUnauthenticated(t, "the token of a disabled user", r)
	w.c.User.UpdateOneID(uid).SetStatus(user.StatusActive).ExecX(w.ctx)
	if name, r := whoami(t, w, full, "", nil); name == "" {
		t.Errorf("the token of a re-enabled user: %s", r.ErrorsString())
	}
}
