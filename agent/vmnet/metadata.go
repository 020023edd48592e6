package vmnet

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"
)

// MetadataPort is the port of the metadata service on MetadataAddr.
const MetadataPort = 80

// ReadyPath is the readiness call's path on the metadata service (and on the API server).
const ReadyPath = "/guest/ready"

// Instance is what the metadata service tells a VM about itself.
type Instance struct {
	VMID      string       `json:"vmId"`
	Name      string       `json:"name"`
	Node      string       `json:"node"`
	Addresses []netip.Addr `json:"addresses"`
}

// MetadataConfig configures NewMetadataHandler.
type MetadataConfig struct {
	// Lookup returns the VM of this node that owns address src (required). The source
	// address identifies the caller: with the node's routes and reverse-path filtering a
	// guest cannot send from another VM's address.
	Lookup func(src netip.Addr) (Instance, bool)
	// ReadyURL is the API server's readiness endpoint the guest's call is passed on to
	// (with its credential); empty: the call is refused.
	ReadyURL string
	// Client makes that call (default: a client with a 10 s timeout).
	Client *http.Client
}

// NewMetadataHandler returns the metadata service the node agent serves on
// MetadataAddr:MetadataPort to its own VMs only:
//
//	GET  /latest/meta-data               the caller's Instance as JSON
//	GET  /latest/meta-data/instance-id   plain text: its VM id (also name, local-ipv4, node)
//	POST /guest/ready                    the guest's readiness call (package guest), passed on
//	                                     to the API with the guest's Authorization header
//
// A caller whose source address is no VM of this node gets 403.
func NewMetadataHandler(cfg MetadataConfig) http.Handler {
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: 10 * time.Second}
	}
	mux := http.NewServeMux()
	who := func(w http.ResponseWriter, r *http.Request) (Instance, bool) {
		host, _, err := net.SplitHostPort(r.RemoteAddr)
		src, perr := netip.ParseAddr(host)
		if err != nil || perr != nil {
			http.Error(w, "unknown caller", http.StatusForbidden)
			return Instance{}, false
		}
		inst, ok := cfg.Lookup(src.Unmap())
		if !ok {
			http.Error(w, "not a VM of this node", http.StatusForbidden)
			return Instance{}, false
		}
		return inst, true
	}
	mux.HandleFunc("GET /latest/meta-data", func(w http.ResponseWriter, r *http.Request) {
		inst, ok := who(w, r)
		if !ok {
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(inst)
	})
	mux.HandleFunc("GET /latest/meta-data/{key}", func(w http.ResponseWriter, r *http.Request) {
		inst, ok := who(w, r)
		if !ok {
			return
		}
		var v string
		switch r.PathValue("key") {
		case "instance-id":
			v = inst.VMID
		case "name", "hostname":
			v = inst.Name
		case "node":
			v = inst.Node
		case "local-ipv4":
			if len(inst.Addresses) > 0 {
				v = inst.Addresses[0].String()
			}
		default:
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, v)
	})
	mux.HandleFunc("POST "+ReadyPath, func(w http.ResponseWriter, r *http.Request) {
		if _, ok := who(w, r); !ok {
			return
		}
		if cfg.ReadyURL == "" {
			http.Error(w, "readiness calls are not passed on by this node", http.StatusNotFound)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, 64<<10))
		if err != nil {
			http.Error(w, "read body", http.StatusBadRequest)
			return
		}
		req, err := http.NewRequestWithContext(r.Context(), http.MethodPost, cfg.ReadyURL, strings.NewReader(string(body)))
		if err != nil {
			http.Error(w, "bad upstream", http.StatusInternalServerError)
			return
		}
		for _, h := range []string{"Authorization", "Content-Type"} {
			if v := r.Header.Get(h); v != "" {
				req.Header.Set(h, v)
			}
		}
		res, err := cfg.Client.Do(req)
		if err != nil {
			http.Error(w, "the API is unreachable", http.StatusBadGateway)
			return
		}
		defer res.Body.Close()
		if ct := res.Header.Get("Content-Type"); ct != "" {
			w.Header().Set("Content-Type", ct)
		}
		w.WriteHeader(res.StatusCode)
		_, _ = io.Copy(w, io.LimitReader(res.Body, 64<<10))
	})
	return mux
}
