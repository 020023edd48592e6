// Package consoleproto is the wire contract between the VirtFlow server's console broker
// (package console) and the node agent's console relay (package nodeagent): the paths the
// agent dials and the request the server sends it. It imports nothing, so the agent can
// use it without the server's dependencies.
//
// The agent keeps one control websocket open to AgentControlPath, authenticated with its
// agent token. When a user opens a VM's console, the server sends a [Request] on it (a JSON
// text message); the agent then dials AgentSessionPath with the request's session id and
// relays the domain's serial console over that second websocket: binary messages, raw bytes
// in both directions. The agent only ever dials out: the API stays the only entry.
package consoleproto

// Paths on the server.
const (
	// AgentControlPath is the agent's control websocket.
	AgentControlPath = "/agent/console"
	// AgentSessionPrefix + session id is the websocket of one console session.
	AgentSessionPrefix = "/agent/console/"
	// BrowserPathPattern is the user's websocket of a VM's console (a net/http pattern).
	BrowserPathPattern = "GET /api/virtual-machines/{id}/console"
)

// Hello is the agent's first message on the control websocket (JSON text).
type Hello struct {
	// MetricsAddr is the agent's --metrics-addr ("host:port"; with no host or an
	// unspecified one, the server takes the address the control connection came from).
	// The server lists it in its Prometheus service discovery. Empty: no metrics.
	MetricsAddr string `json:"metricsAddr,omitempty"`
}

// Request asks the agent to relay the serial console of Domain over a new session.
type Request struct {
	Session string `json:"session"`
	Domain  string `json:"domain"`
}

// Close codes the server and the agent end a session with (websocket application codes).
const (
	CodeNotFound    = 4404 // no such VM for this viewer, or no such domain on the node
	CodeForbidden   = 4403 // the viewer may read the VM but not use its console
	CodeUnauth      = 4401 // no or a bad token
	CodeUnavailable = 4503 // the VM is not placed, its agent is not connected, or limits are reached
	CodeNotRunning  = 4409 // the domain does not run
	CodeIdle        = 4408 // the session was idle too long
)
