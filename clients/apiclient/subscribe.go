package apiclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
)

// wsMessage is a graphql-transport-ws message.
type wsMessage struct {
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// ErrSubscriptionCompleted is returned by Subscribe when the server ends the subscription.
var ErrSubscriptionCompleted = errors.New("subscription completed by the server")

// Subscribe runs the subscription document query (one of the generated *_Operation
// constants) over a websocket speaking graphql-transport-ws, calling onData with the data of
// every event, until ctx ends (nil), onData returns an error (that error), or the connection
// or the server ends it. ready, when not nil, is called once the server has read the
// subscription (a ping sent after it was answered).
//
// The connection is written here rather than with genqlient's websocket client, which
// wants a gorilla-style dialer and does not answer the server's pings.
func (c *Client) Subscribe(ctx context.Context, query string, vars map[string]any, ready func(), onData func(data json.RawMessage) error) error {
	u := c.URL
	switch {
	case strings.HasPrefix(u, "https://"):
		u = "wss://" + strings.TrimPrefix(u, "https://")
	case strings.HasPrefix(u, "http://"):
		u = "ws://" + strings.TrimPrefix(u, "http://")
	}
	dctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	hdr := http.Header{}
	if c.Token != "" {
		hdr.Set("Authorization", "Bearer "+c.Token)
	}
	// The HTTP client's transport (TLS roots, proxies) dials the websocket too; its
	// Timeout would end the connection, so the dial's context bounds it instead.
	var hc *http.Client
	if c.HTTP != nil {
		cp := *c.HTTP
		cp.Timeout = 0
		hc = &cp
	}
	conn, _, err := websocket.Dial(dctx, u, &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}, HTTPHeader: hdr,
		HTTPClient: hc})
	if err != nil {
		return fmt.Errorf("dial %s: %w", u, err)
	}
	defer conn.CloseNow()
	conn.SetReadLimit(8 << 20)

	send := func(m wsMessage) error { return wsjson.Write(ctx, conn, m) }
	init, _ := json.Marshal(map[string]any{"Authorization": "Bearer " + c.Token})
	if err := send(wsMessage{Type: "connection_init", Payload: init}); err != nil {
		return err
	}
	var ack wsMessage
	if err := wsjson.Read(dctx, conn, &ack); err != nil {
		return fmt.Errorf("connection_init: %w", err)
	}
	if ack.Type != "connection_ack" {
		return fmt.Errorf("connection_init: got %s %s", ack.Type, ack.Payload)
	}
	sub, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	if err := send(wsMessage{ID: "1", Type: "subscribe", Payload: sub}); err != nil {
		return err
	}
	// A ping after the subscribe: its pong tells that the server read the subscribe.
	if ready != nil {
		if err := send(wsMessage{Type: "ping"}); err != nil {
			return err
		}
	}
	for {
		var m wsMessage
		if err := wsjson.Read(ctx, conn, &m); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		switch m.Type {
		case "next":
			var p struct {
				Data   json.RawMessage `json:"data"`
				Errors []GraphQLError  `json:"errors"`
			}
			if err := json.Unmarshal(m.Payload, &p); err != nil {
				return fmt.Errorf("decode event: %w", err)
			}
			if len(p.Errors) > 0 {
				return &Error{Errors: p.Errors}
			}
			if err := onData(p.Data); err != nil {
				return err
			}
		case "ping":
			if err := send(wsMessage{Type: "pong"}); err != nil {
				return err
			}
		case "pong":
			if ready != nil {
				ready()
				ready = nil
			}
		case "error":
			var errs []GraphQLError
			if json.Unmarshal(m.Payload, &errs) == nil && len(errs) > 0 {
				return &Error{Errors: errs}
			}
			return fmt.Errorf("subscription refused: %s", m.Payload)
		case "complete":
			return ErrSubscriptionCompleted
		}
	}
}
