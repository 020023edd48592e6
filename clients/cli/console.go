package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/coder/websocket"
)

// root is the server's base URL (the GraphQL endpoint without /query).
func (a *app) root() (string, string, error) {
	c, err := a.api()
	if err != nil {
		return "", "", err
	}
	return strings.TrimSuffix(c.URL, "/query"), c.Token, nil
}

// runConsole attaches the terminal to a VM's serial console over the server's websocket
// (GET /api/virtual-machines/{id}/console): what is typed goes to the guest line by line
// (a new line is sent as the carriage return a serial console expects) and the guest's
// output is printed. It ends when stdin ends or the server closes the session.
func runConsole(ctx context.Context, a *app, args []string) error {
	fs := flag.NewFlagSet("console", flag.ContinueOnError)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("console VM_ID")
	}
	root, token, err := a.root()
	if err != nil {
		return err
	}
	ws := "ws" + strings.TrimPrefix(root, "http") + "/api/virtual-machines/" + url.PathEscape(pos[0]) + "/console"
	dctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(dctx, ws, &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + token}}})
	if err != nil {
		return fmt.Errorf("open the console: %w", err)
	}
	defer c.CloseNow()
	c.SetReadLimit(64 << 10)
	fmt.Fprintf(a.io.Stderr, "connected to the console of VM %s; end with Ctrl-D\n", pos[0])
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		defer stop()
		buf := make([]byte, 4096)
		for {
			n, err := a.io.Stdin.Read(buf)
			if n > 0 {
				msg := []byte(strings.ReplaceAll(string(buf[:n]), "\n", "\r"))
				if c.Write(ctx, websocket.MessageBinary, msg) != nil {
					return
				}
			}
			if err != nil {
				_ = c.Close(websocket.StatusNormalClosure, "stdin ended")
				return
			}
		}
	}()
	for {
		_, msg, err := c.Read(ctx)
		if err != nil {
			var ce websocket.CloseError
			if errors.As(err, &ce) && ce.Code != websocket.StatusNormalClosure {
				return fmt.Errorf("console closed: %d %s", ce.Code, ce.Reason)
			}
			return nil
		}
		if _, err := a.io.Stdout.Write(msg); err != nil {
			return err
		}
	}
}

// runGraph prints a VM's or node's usage series (GET /api/usage), read from Prometheus by
// the server: the latest and the highest value of each over the range.
func runGraph(ctx context.Context, a *app, args []string) error {
	fs := flag.NewFlagSet("graph", flag.ContinueOnError)
	vm := fs.String("vm", "", "VM ID")
	node := fs.String("node", "", "compute node ID (operators)")
	rng := fs.String("range", "hour", "hour, day, week or month")
	if _, err := parse(fs, args); err != nil {
		return err
	}
	if (*vm == "") == (*node == "") {
		return usagef("graph --vm ID | --node ID [--range hour|day|week|month]")
	}
	root, token, err := a.root()
	if err != nil {
		return err
	}
	q := url.Values{"range": {*rng}}
	if *vm != "" {
		q.Set("vm", *vm)
	} else {
		q.Set("node", *node)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, root+"/api/usage?"+q.Encode(), nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := (&http.Client{Timeout: 60 * time.Second}).Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Errors []struct{ Message string } `json:"errors"`
		}
		if json.Unmarshal(body, &e) == nil && len(e.Errors) > 0 {
			return fmt.Errorf("%s: %s", resp.Status, e.Errors[0].Message)
		}
		return fmt.Errorf("%s", resp.Status)
	}
	var g struct {
		Series []struct {
			Name   string       `json:"name"`
			Unit   string       `json:"unit"`
			Points [][2]float64 `json:"points"`
		} `json:"series"`
	}
	if err := json.Unmarshal(body, &g); err != nil {
		return err
	}
	if a.output != "table" {
		var v any
		_ = json.Unmarshal(body, &v)
		return a.show(v, nil)
	}
	rows := []map[string]any{}
	for _, s := range g.Series {
		row := map[string]any{"series": s.Name, "unit": s.Unit, "points": len(s.Points), "latest": "", "max": ""}
		if n := len(s.Points); n > 0 {
			hi := s.Points[0][1]
			for _, p := range s.Points {
				hi = max(hi, p[1])
			}
			row["latest"], row["max"] = fmt.Sprintf("%.4g", s.Points[n-1][1]), fmt.Sprintf("%.4g", hi)
		}
		rows = append(rows, row)
	}
	return a.show(rows, []string{"series", "unit", "points", "latest", "max"})
}
