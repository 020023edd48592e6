package provider_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/virtflow/virtflow/internal/testkit/gqltest"
)

func ctxSys() context.Context { return gqltest.System() }

// resourceID finds the id of the resource at addr in `terraform show -json` output.
func resourceID(t *testing.T, showJSON, addr string) string {
	t.Helper()
	var s struct {
		Values struct {
			RootModule struct {
				Resources []struct {
					Address string         `json:"address"`
					Values  map[string]any `json:"values"`
				} `json:"resources"`
			} `json:"root_module"`
		} `json:"values"`
	}
	if err := json.Unmarshal([]byte(showJSON), &s); err != nil {
		t.Fatalf("terraform show -json: %v", err)
	}
	for _, r := range s.Values.RootModule.Resources {
		if r.Address == addr {
			id, _ := r.Values["id"].(string)
			return id
		}
	}
	t.Fatalf("%s not in the state", addr)
	return ""
}

// checkOnlyTimeouts asserts that a plan (`terraform show -json PLAN`) changes nothing but
// timeouts.
func checkOnlyTimeouts(t *testing.T, planJSON string) {
	t.Helper()
	var p struct {
		ResourceChanges []struct {
			Address string `json:"address"`
			Change  struct {
				Actions []string       `json:"actions"`
				Before  map[string]any `json:"before"`
				After   map[string]any `json:"after"`
			} `json:"change"`
		} `json:"resource_changes"`
	}
	if err := json.Unmarshal([]byte(planJSON), &p); err != nil {
		t.Fatalf("terraform show -json: %v", err)
	}
	for _, rc := range p.ResourceChanges {
		switch {
		case reflect.DeepEqual(rc.Change.Actions, []string{"no-op"}) || reflect.DeepEqual(rc.Change.Actions, []string{"read"}):
			continue
		case reflect.DeepEqual(rc.Change.Actions, []string{"update"}):
			for k, before := range rc.Change.Before {
				if k != "timeouts" && !reflect.DeepEqual(before, rc.Change.After[k]) {
					t.Errorf("plan after import changes %s.%s: %v → %v", rc.Address, k, before, rc.Change.After[k])
				}
			}
		default:
			t.Errorf("plan after import: %s %v", rc.Address, rc.Change.Actions)
		}
	}
}

// readConfig returns the runner's configuration.
func readConfig(t testing.TB, r *tf) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(r.dir, "main.tf"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
