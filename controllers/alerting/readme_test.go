package alerting_test

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/virtflow/virtflow/domain/placement/placementtest"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

// TestReadmeMonitoringExample runs the README's worked monitoring example through the
// GraphQL API, then files an event with reportEvents and acknowledges an alert the same
// way, so the README's mutations exist with the names and arguments it shows.
func TestReadmeMonitoringExample(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(readme), "A worked example, as an operator")
	if !ok {
		t.Fatal("README: the worked monitoring example is gone")
	}
	_, rest, _ = strings.Cut(rest, "```graphql\n")
	example, _, _ := strings.Cut(rest, "```")
	env := gqltest.Postgres(t, testdb.New(t))
	var out map[string]json.RawMessage
	env.MustDo(t, example, nil, &out)
	if len(out) != 3 {
		t.Fatalf("example answered %s", out)
	}
	s, err := placementtest.Build(placementtest.Ctx(), env.Client, placementtest.Spec{Racks: 1, HostsPerRack: 1, CPU: 8,
		MemoryMB: 8192, DiskGB: 100, Cores: 4})
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		ReportEvents []struct{ ID string } `json:"reportEvents"`
	}
	env.MustDo(t, `mutation($n: ID!) { reportEvents(input: [{nodeID: $n, checkName: "node-heartbeat", status: CRITICAL, output: "down"}]) { id } }`,
		map[string]any{"n": strconv.Itoa(s.Nodes[0].ID)}, &rep)
	if len(rep.ReportEvents) != 1 {
		t.Fatalf("reportEvents: %+v", rep)
	}
	var created struct {
		CreateAlert struct{ ID string } `json:"createAlert"`
	}
	env.MustDo(t, `mutation { createAlert(input: {name: "x", severity: WARNING, fingerprint: "x"}) { id } }`, nil, &created)
	var acked struct {
		AcknowledgeAlert struct {
			AcknowledgedBy string `json:"acknowledgedBy"`
		} `json:"acknowledgeAlert"`
	}
	env.MustDo(t, `mutation($id: ID!) { acknowledgeAlert(id: $id) { acknowledgedBy } }`, map[string]any{"id": created.CreateAlert.ID}, &acked)
	if acked.AcknowledgeAlert.AcknowledgedBy == "" {
		t.Error("acknowledgeAlert left acknowledgedBy empty")
	}
}
