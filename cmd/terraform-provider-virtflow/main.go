// Command terraform-provider-virtflow is VirtFlow's Terraform provider (package
// clients/terraform/provider), registered as registry.terraform.io/virtflow/virtflow. Terraform starts
// it; with -debug it runs standalone for a debugger.
package main

import (
	"context"
	"flag"
	"log"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/virtflow/virtflow/clients/terraform/provider"
	"github.com/virtflow/virtflow/internal/platform/version"
)

func main() {
	debug := flag.Bool("debug", false, "run the provider for a debugger (prints TF_REATTACH_PROVIDERS)")
	flag.Parse()
	err := providerserver.Serve(context.Background(), provider.New(version.Get().Version), providerserver.ServeOpts{
		Address: provider.Address,
		Debug:   *debug,
	})
	if err != nil {
		log.Fatal(err)
	}
}
