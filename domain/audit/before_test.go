package audit_test

import (
	"context"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/audit"
	"github.com/virtflow/virtflow/domain/placement/placementtest"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/internal/platform/infra"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

// TestBeforeIsWhole: inside a mutation field whose client selected only `id`, the before
// image is still the whole record. ent's field collection applied to that selection left
// every other field zero, so before images carried createdAt 0001-01-01 and empty names.
func TestBeforeIsWhole(t *testing.T) {
	db, err := infra.OpenDatabase(context.Background(), testdb.DSN(t), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	c := db.Client
	s, err := placementtest.Build(placementtest.Ctx(), c, placementtest.Spec{Racks: 1, HostsPerRack: 1, CPU: 8, MemoryMB: 8192, DiskGB: 100, Cores: 4})
	if err != nil {
		t.Fatal(err)
	}
	want := c.ComputeNode.GetX(placementtest.Ctx(), s.Nodes[0].ID)

	// A mutation field `cordonNode(id:) { id }`, as gqlgen's executor hands it to the auditor.
	ctx := graphql.WithOperationContext(context.Background(), &graphql.OperationContext{
		Doc: &ast.QueryDocument{}, Variables: map[string]any{}})
	ctx = graphql.WithFieldContext(ctx, &graphql.FieldContext{Object: "Mutation", Field: graphql.CollectedField{
		Field: &ast.Field{Alias: "cordonNode", Name: "cordonNode",
			SelectionSet: ast.SelectionSet{&ast.Field{Alias: "id", Name: "id"}}}}})

	// The trap Before avoids: a plain Noder in that context loads the selected fields only.
	if n, err := c.Noder(authz.SystemContext(ctx, "test"), want.ID); err != nil {
		t.Fatal(err)
	} else if n.(*ent.ComputeNode).Name != "" {
		t.Log("ent's Noder no longer applies the field selection; Before still must not")
	}

	got, ok := audit.Before(ctx, c, want.ID).(*ent.ComputeNode)
	if !ok || got == nil {
		t.Fatalf("Before = %T, want the compute node", audit.Before(ctx, c, want.ID))
	}
	if got.Name != want.Name || !got.CreatedAt.Equal(want.CreatedAt) || got.CreatedAt.Before(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)) ||
		got.CPUCapacity != want.CPUCapacity || got.Status != want.Status {
		t.Errorf("before image = {name %q createdAt %s cpu %d status %s}, want {%q %s %d %s}",
			got.Name, got.CreatedAt, got.CPUCapacity, got.Status, want.Name, want.CreatedAt, want.CPUCapacity, want.Status)
	}
	if audit.Before(ctx, c, want.ID+1_000_000) != nil {
		t.Error("Before of a record that does not exist is not nil")
	}
}
