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
	want := []string{"tenant", "quota", "network", "ip_address", "ssh_key", "security_rule", "virtual_machine", "flavor",
		"volume", "region_service", "kubernetes_cluster", "load_balancer", "global_service", "rack", "host", "port", "cable",
		"region", "datacenter", "floor", "power_zone", "rack_zone", "network_zone", "availability_zone", "host_group",
		"ip_range", "cluster", "compute_node", "provider", "image", "user", "role_binding", "api_token", "maintainer",
		"maintainer_group", "check", "event_rule", "silence", "maintenance", "notice", "service_mesh",
		"snapshot", "backup"}
	for _, n := range want {
		if !names["virtflow_"+n] {
			t.Errorf("no resource virtflow_%s", n)
		}
	}
	if len(names) != len(want) {
		t.Errorf("%d resources, want %d: %v", len(names), len(want), names)
	}
	var _ provider.Provider = p
}
