package cli_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/virtflow/virtflow/clients/apiclient"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
	"github.com/virtflow/virtflow/internal/testkit/stacktest"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

// TestGenericCreateUpdateDelete: create, update and delete work for any type the API
// mutates, read from the schema: a network zone and a network made with names for their
// datacenter and tenant, a network added to the zone by name, a check with an enum, numbers
// and labels, an API token whose secret is shown once, and the mistakes (an unknown field, a
// word for a number, a type the API does not create) are usage errors (exit 2).
func TestGenericCreateUpdateDelete(t *testing.T) {
	st := stacktest.Start(t, testdb.DSN(t), stacktest.Spec{Racks: 1, HostsPerRack: 1})
	r := runner{t: t, env: map[string]string{"XDG_CONFIG_HOME": t.TempDir()}}
	ctx := context.Background()
	r.must("login", "--endpoint", st.URL, "--token", st.AdminToken)
	dc, err := st.Client.Datacenter.Get(gqltest.System(), st.Site.Datacenter)
	if err != nil {
		t.Fatal(err)
	}
	tn, err := st.Client.Tenant.Get(gqltest.System(), st.Site.Tenant)
	if err != nil {
		t.Fatal(err)
	}

	var zone struct{ ID, Name, Description string }
	out := r.must("create", "network-zone", "--set", "name=cli-nz", "--set", "datacenter-id="+dc.Name, "--set", "description=first", "-o", "json")
	if err := json.Unmarshal([]byte(out), &zone); err != nil || zone.ID == "" || zone.Description != "first" {
		t.Fatalf("create network-zone: %+v %v\n%s", zone, err, out)
	}
	r.must("create", "network", "--set", "name=cli-n2", "--set", "cidr=10.89.0.0/24", "--set", "tenant_id="+tn.Name)
	out = r.must("update", "network-zone", "cli-nz", "--set", "description=second", "--set", "addNetworkIDs=cli-n2", "-o", "json")
	if err := json.Unmarshal([]byte(out), &zone); err != nil || zone.Description != "second" {
		t.Fatalf("update network-zone: %+v %v\n%s", zone, err, out)
	}
	c, err := apiclient.New(st.URL, st.AdminToken)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Node struct {
			Networks struct {
				Edges []struct{ Node struct{ Name string } }
			}
		}
	}
	if err := c.Do(ctx, `query($id: ID!) { node(id: $id) { ... on NetworkZone { networks { edges { node { name } } } } } }`, map[string]any{"id": zone.ID}, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Node.Networks.Edges) != 1 || got.Node.Networks.Edges[0].Node.Name != "cli-n2" {
		t.Errorf("networks of the zone after addNetworkIDs=cli-n2: %+v", got)
	}

	var chk struct {
		Builtin         string
		IntervalSeconds int
		LabelSelector   map[string]string
	}
	out = r.must("create", "check", "--set", "name=cli-check", "--set", "builtin=nic_link", "--set", "interval-seconds=30",
		"--set", "label-selector=ssd=true,zone=a", "-o", "json")
	if err := json.Unmarshal([]byte(out), &chk); err != nil || chk.Builtin != "NIC_LINK" || chk.IntervalSeconds != 30 || chk.LabelSelector["zone"] != "a" {
		t.Errorf("create check: %+v %v\n%s", chk, err, out)
	}

	var tok struct {
		Token    string
		ApiToken struct{ ID string }
	}
	out = r.must("create", "api-token", "--set", "name=cli-token", "-o", "json")
	if err := json.Unmarshal([]byte(out), &tok); err != nil || !strings.HasPrefix(tok.Token, "vf_") || tok.ApiToken.ID == "" {
		t.Errorf("create api-token: %+v %v\n%s", tok, err, out)
	}

	for _, bad := range [][]string{
		{"create", "check", "--set", "name=x", "--set", "colour=red"},
		{"create", "check", "--set", "name=x", "--set", "interval-seconds=often"},
		{"create", "check", "--set", "name"},
		{"create", "audit-logs", "--set", "name=x"},
		{"update", "network-zone"},
	} {
		if _, errs, code := r.run(ctx, "", bad...); code != 2 {
			t.Errorf("virtflow %s: exit %d, want 2 (%s)", strings.Join(bad, " "), code, errs)
		}
	}

	// A zone holding a network is not deleted (the API's safe delete) until it is taken out.
	if _, errs, code := r.run(ctx, "", "delete", "network-zone", "cli-nz"); code != 1 || !strings.Contains(errs, "CONFLICT") {
		t.Errorf("delete of a zone with a network: exit %d (%s), want 1 and CONFLICT", code, errs)
	}
	r.must("update", "network-zone", zone.ID, "--set", "remove-network-ids=cli-n2")
	if out := r.must("delete", "network-zone", "cli-nz"); !strings.Contains(out, zone.ID) {
		t.Errorf("delete said %q", out)
	}
	if _, errs, code := r.run(ctx, "", "get", "network-zone", zone.ID); code == 0 {
		t.Errorf("get after delete: exit 0 (%s)", errs)
	}
}
