package nodeagent

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

// watch subscribes to assignmentChanged for the node over graphql-transport-ws and kicks a
// resync on every change, until ctx ends. A dropped or refused subscription is retried with a
// growing, randomized wait (newBackOff, up to 30 s); each new subscription kicks a resync too, for the changes missed
// while it was down. The periodic resync goes on regardless.
func (ag *Agent) watch(ctx context.Context, kick func()) {
	b := newBackOff(time.Second, 30*time.Second)
	for ctx.Err() == nil {
		start := time.Now()
		err := ag.subscribe(ctx, kick)
		if ctx.Err() != nil {
			return
		}
		if time.Since(start) > time.Minute {
			b.Reset()
		}
		wait := b.NextBackOff()
		ag.log.Debug("assignment subscription ended; resync continues", "err", err, "retry_in", wait)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// wsMessage is a graphql-transport-ws message.
type wsMessage struct {
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// subscribe runs one subscription until it fails or ctx ends.
func (ag *Agent) subscribe(ctx context.Context, kick func()) error {
	url := ag.cfg.APIURL
	switch {
	case strings.HasPrefix(url, "https://"):
		url = "wss://" + strings.TrimPrefix(url, "https://")
	case strings.HasPrefix(url, "http://"):
		url = "ws://" + strings.TrimPrefix(url, "http://")
	}
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(dctx, url, &websocket.DialOptions{
		Subprotocols: []string{"graphql-transport-ws"},
		HTTPClient:   ag.cfg.HTTPClient,
		HTTPHeader:   http.Header{"Authorization": {"Bearer " + ag.cfg.Token}},
	})
	if err != nil {
		return fmt.Errorf("dial %s: %w", url, err)
	}
	defer conn.CloseNow()
	conn.SetReadLimit(1 << 20)

	send := func(m wsMessage) error { return wsjson.Write(ctx, conn, m) }
	init, _ := json.Marshal(map[string]any{"Authorization": "Bearer " + ag.cfg.Token})
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
	// The document is genqlient's (operations.graphql), so it is checked against the schema
	// at generation time; the connection stays hand-written: genqlient's websocket client
	// (graphql.NewClientUsingWebSocket) wants a gorilla-style dialer rather than the
	// coder/websocket one used here with the agent's HTTP client, does not answer the
	// server's pings, and runs goroutines of its own that this loop would have to stop.
	sub, _ := json.Marshal(map[string]any{
		"query":         assignmentChanged_Operation,
		"operationName": "assignmentChanged",
		"variables":     map[string]any{"node": ag.NodeID()},
	})
	if err := send(wsMessage{ID: "1", Type: "subscribe", Payload: sub}); err != nil {
		return err
	}
	kick() // whatever changed while nobody was listening
	for {
		var m wsMessage
		if err := wsjson.Read(ctx, conn, &m); err != nil {
			return err
		}
		switch m.Type {
		case "next":
			var p struct {
				Errors []GraphQLError `json:"errors"`
			}
			_ = json.Unmarshal(m.Payload, &p)
			if len(p.Errors) > 0 {
				return &Error{Errors: p.Errors}
			}
			kick()
		case "ping":
			if err := send(wsMessage{Type: "pong"}); err != nil {
				return err
			}
		case "error":
			return fmt.Errorf("subscription refused: %s", m.Payload)
		case "complete":
			return errors.New("subscription completed by the server")
		}
	}
}
