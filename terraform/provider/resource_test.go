package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/resource"
)

func TestSnake(t *testing.T) {
	for in, want := range map[string]string{"dnsName": "dns_name", "memoryMB": "memory_mb", "sizeGB": "size_gb", "cidr": "cidr", "aPort": "a_port", "sshKey": "ssh_key"} {
		if got := snake(in); got != want {
			t.Errorf("snake(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestEveryResourceImports: every resource has an id attribute and supports import; the
// type names are the documented ones.
func TestEveryResourceImports(t *testing.T) {
	p := New("test")().(*virtflowProvider)
	names := map[string]bool{}
	for _, f := range p.Resources(context.Background()) {
		r := f()
		var md resource.MetadataResponse
		r.Metadata(context.Background(), resource.MetadataRequest{ProviderTypeName: "virtflow"}, &md)
		names[md.TypeName] = true
		if _, ok := r.(resource.ResourceWithImportState); !ok {
			t.Errorf("%s does not import", md.TypeName)
		}
		var sr resource.SchemaResponse
		r.Schema(context.Background(), resource.SchemaRequest{}, &sr)
		if _, ok := sr.Schema.Attributes["id"]; !ok {
			t.Errorf("%s has no id", md.TypeName)
		}
		if sr.Diagnostics.HasError() {
			t.Errorf("%s schema: %v", md.TypeName, sr.Diagnostics)
		}
	}
	if len(names) != 22 || !names["virtflow_snapshot"] || !names["virtflow_backup"] || !names["virtflow_datacenter"] || !names["virtflow_floor"] || !names["virtflow_region"] || !names["virtflow_kubernetes_cluster"] || !names["virtflow_load_balancer"] || !names["virtflow_global_service"] || !names["virtflow_flavor"] || !names["virtflow_virtual_machine"] || !names["virtflow_cable"] {
		t.Errorf("resources %v", names)
	}
	var _ provider.Provider = p
}
