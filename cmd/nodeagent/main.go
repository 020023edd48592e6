// Command nodeagent will run on every hypervisor host: it registers its node with the API,
// heartbeats every 10 s with capacity and health, receives its assignments (a subscription
// with a periodic full resync), realizes them through libvirt (go-libvirt; qemu:///system by
// default, test:///default in tests) and reports each assignment's real state. It keeps no
// database: after a restart it rebuilds its view from libvirt and the API.
//
// It is not built yet — that is the provisioning issue. Today it validates its configuration,
// says what it will do, and exits with status 3 so that no deployment mistakes it for a
// working agent.
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	apiURL := flag.String("api-url", envOr("VIRTFLOW_API_URL", "http://127.0.0.1:8080/query"), "GraphQL endpoint of the VirtFlow API (VIRTFLOW_API_URL)")
	libvirtURI := flag.String("libvirt-uri", envOr("VIRTFLOW_LIBVIRT_URI", "qemu:///system"), "libvirt connection URI (VIRTFLOW_LIBVIRT_URI)")
	socket := flag.String("libvirt-socket", envOr("VIRTFLOW_LIBVIRT_SOCKET", "/run/libvirt/libvirt-sock"), "libvirtd socket (VIRTFLOW_LIBVIRT_SOCKET)")
	flag.Parse()
	fmt.Fprintf(os.Stderr, "virtflow nodeagent: not implemented yet.\n"+
		"It will register this node with %s, heartbeat every 10s, and realize its assignments through libvirt at %s (%s).\n",
		*apiURL, *libvirtURI, *socket)
	os.Exit(3)
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
