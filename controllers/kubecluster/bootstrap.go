package kubecluster

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/virtflow/virtflow/agent/configdrive"
)

// Roles of a cluster's nodes (KubernetesNode.role).
const (
	RoleControlPlane = "CONTROL_PLANE"
	RoleWorker       = "WORKER"
	RoleBastion      = "BASTION"
)

// Bootstrap steps a guest reports (KubernetesNode.step). The script reports the step that
// failed, or StepReady when every step succeeded.
const (
	StepPackages = "packages"
	StepInit     = "kubeadm-init"
	StepJoin     = "kubeadm-join"
	StepCNI      = "cni"
	StepMesh     = "mesh"
	StepSSH      = "ssh"
	StepReady    = "ready"
)

// CNIs are the network plugins a cluster can take from its plugins (at most one; the first
// is the default), with the manifest the first control plane applies.
var CNIs = map[string]string{
	"calico":  "https://raw.githubusercontent.com/projectcalico/calico/v3.28.2/manifests/calico.yaml",
	"flannel": "https://github.com/flannel-io/flannel/releases/download/v0.25.7/kube-flannel.yml",
	"cilium":  "", // installed with the cilium CLI instead of a manifest
}

// DefaultCNI is the network plugin of a cluster whose plugins name none.
const DefaultCNI = "calico"

// Addons are the other plugins a cluster may list.
var Addons = map[string]string{
	"metrics-server": "https://github.com/kubernetes-sigs/metrics-server/releases/download/v0.7.2/components.yaml",
}

// Meshes are the service meshes the first control plane can install (ServiceMesh.type).
var Meshes = map[string]string{
	"ISTIO":   "curl -fsSL https://istio.io/downloadIstio | ISTIO_VERSION=1.23.2 sh - && ./istio-1.23.2/bin/istioctl install -y --set profile=minimal",
	"LINKERD": "curl -fsSL https://run.linkerd.io/install-edge | sh && $HOME/.linkerd2/bin/linkerd install --crds | kubectl apply -f - && $HOME/.linkerd2/bin/linkerd install | kubectl apply -f -",
}

// Node is what one node's bootstrap is rendered from.
type Node struct {
	Cluster     string
	Name        string
	Role        string
	First       bool // the first control plane: kubeadm init
	Version     string
	PodCIDR     string
	ServiceCIDR string
	CNI         string
	Addons      []string
	Mesh        string // ISTIO, LINKERD or ""
	Endpoint    string // <VIP>:6443
	Token       string
	CAHash      string
	CertKey     string
	CACert      string // first control plane only
	CAKey       string // first control plane only
	ExtraSANs   []string
	SSHKeys     []string
}

var versionRe = regexp.MustCompile(`^v?(\d+)\.(\d+)(?:\.(\d+))?$`)

// KubeadmVersion is the kubernetesVersion kubeadm takes for v: v1.31.2 as it is, 1.31 as
// stable-1.31 (the newest patch release), and the apt repository's minor (v1.31).
func KubeadmVersion(v string) (kubeadm, minor string, err error) {
	m := versionRe.FindStringSubmatch(strings.TrimSpace(v))
	if m == nil {
		return "", "", fmt.Errorf("version %q is not MAJOR.MINOR[.PATCH]", v)
	}
	minor = "v" + m[1] + "." + m[2]
	if m[3] == "" {
		return "stable-" + m[1] + "." + m[2], minor, nil
	}
	return "v" + m[1] + "." + m[2] + "." + m[3], minor, nil
}

// apiVersion is the kubeadm configuration API of a minor version: v1beta4 from 1.31.
func apiVersion(minor string) string {
	parts := strings.Split(strings.TrimPrefix(minor, "v"), ".")
	if len(parts) == 2 {
		if n, _ := strconv.Atoi(parts[1]); parts[0] == "1" && n < 31 {
			return "kubeadm.k8s.io/v1beta3"
		}
	}
	return "kubeadm.k8s.io/v1beta4"
}

// KubeadmConfig renders n's kubeadm configuration: InitConfiguration and
// ClusterConfiguration for the first control plane, JoinConfiguration for the others.
func KubeadmConfig(n Node) (string, error) {
	kv, minor, err := KubeadmVersion(n.Version)
	if err != nil {
		return "", err
	}
	av := apiVersion(minor)
	reg := map[string]any{"name": n.Name}
	var docs []any
	if n.First {
		docs = append(docs, map[string]any{
			"apiVersion": av, "kind": "InitConfiguration",
			"bootstrapTokens":  []any{map[string]any{"token": n.Token, "ttl": TokenTTL.String(), "usages": []string{"signing", "authentication"}, "groups": []string{"system:bootstrappers:kubeadm:default-node-token"}}},
			"certificateKey":   n.CertKey,
			"nodeRegistration": reg,
		}, map[string]any{
			"apiVersion": av, "kind": "ClusterConfiguration",
			"clusterName":          n.Cluster,
			"kubernetesVersion":    kv,
			"controlPlaneEndpoint": n.Endpoint,
			"networking":           map[string]any{"podSubnet": n.PodCIDR, "serviceSubnet": n.ServiceCIDR},
			"apiServer":            map[string]any{"certSANs": append([]string{strings.Split(n.Endpoint, ":")[0]}, n.ExtraSANs...)},
		})
	} else {
		join := map[string]any{
			"apiVersion": av, "kind": "JoinConfiguration",
			"discovery": map[string]any{"bootstrapToken": map[string]any{
				"apiServerEndpoint": n.Endpoint, "token": n.Token, "caCertHashes": []string{n.CAHash}}},
			"nodeRegistration": reg,
		}
		if n.Role == RoleControlPlane {
			join["controlPlane"] = map[string]any{"certificateKey": n.CertKey}
		}
		docs = append(docs, join)
	}
	var b strings.Builder
	for i, d := range docs {
		if i > 0 {
			b.WriteString("---\n")
		}
		out, err := yaml.Marshal(d)
		if err != nil {
			return "", err
		}
		b.Write(out)
	}
	return b.String(), nil
}

// Script is n's bootstrap script (POSIX sh). Each step runs through run(), which on failure
// reports the step and the last lines of its output to the guest readiness endpoint
// (POST /guest/ready with step, result=failed and reason) and stops; after the last step it
// reports step=ready, result=ok (and mesh=ok|failed when the node installs the mesh: a
// failed mesh leaves the cluster up with its mesh in ERROR).
func Script(n Node) (string, error) {
	_, minor, err := KubeadmVersion(n.Version)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", a...) }
	w("#!/bin/sh")
	w("# VirtFlow: bootstrap node %s (%s) of Kubernetes cluster %s and report the result.", n.Name, n.Role, n.Cluster)
	w("set -u")
	w("export HOME=/root KUBECONFIG=/etc/kubernetes/admin.conf")
	w("STEP=start")
	w("MESH=")
	w("report() {")
	w("  d=$(mktemp -d) || return 0")
	w("  mount -o ro /dev/disk/by-label/cidata \"$d\" 2>/dev/null || mount -o ro /dev/disk/by-label/CIDATA \"$d\" 2>/dev/null || { rmdir \"$d\"; return 0; }")
	w("  url=$(sed -n 's/^%s: *//p' \"$d/meta-data\" | tr -d \"\\\"'\")", configdrive.MetaReadyURL)
	w("  tok=$(sed -n 's/^%s: *//p' \"$d/meta-data\" | tr -d \"\\\"'\")", configdrive.MetaGuestCredential)
	w("  umount \"$d\"; rmdir \"$d\"")
	w("  [ -n \"$url\" ] && [ -n \"$tok\" ] || return 0")
	w("  addrs=$(ip -o addr show scope global 2>/dev/null | awk '{print $4}' | tr '\\n' ',')")
	w("  curl -fsS -m 30 --retry 10 --retry-connrefused -H \"Authorization: Bearer $tok\" \\")
	w("    --data-urlencode \"hostname=$(hostname)\" --data-urlencode \"addresses=$addrs\" \\")
	w("    --data-urlencode \"step=$STEP\" --data-urlencode \"result=$1\" --data-urlencode \"reason=$2\" \\")
	w("    --data-urlencode \"mesh=$MESH\" \"$url\" >/dev/null")
	w("}")
	w("run() {")
	w("  STEP=$1; shift")
	w("  if ! out=$(\"$@\" 2>&1); then")
	w("    report failed \"$(printf '%%s' \"$out\" | tail -c 900)\"")
	w("    exit 1")
	w("  fi")
	w("}")
	if n.Role == RoleBastion {
		w("run %s sh -c 'systemctl enable --now ssh || systemctl enable --now sshd'", StepSSH)
		w("STEP=%s", StepReady)
		w("report ok ''")
		return b.String(), nil
	}
	w("packages() {")
	w("  command -v kubeadm >/dev/null 2>&1 && command -v kubelet >/dev/null 2>&1 && return 0")
	w("  export DEBIAN_FRONTEND=noninteractive")
	w("  apt-get update && apt-get install -y apt-transport-https ca-certificates curl gpg containerd || return 1")
	w("  mkdir -p /etc/apt/keyrings /etc/containerd")
	w("  curl -fsSL https://pkgs.k8s.io/core:/stable:/%s/deb/Release.key | gpg --dearmor --yes -o /etc/apt/keyrings/kubernetes.gpg || return 1", minor)
	w("  echo 'deb [signed-by=/etc/apt/keyrings/kubernetes.gpg] https://pkgs.k8s.io/core:/stable:/%s/deb/ /' > /etc/apt/sources.list.d/kubernetes.list", minor)
	w("  apt-get update && apt-get install -y kubelet kubeadm kubectl || return 1")
	w("  containerd config default | sed 's/SystemdCgroup = false/SystemdCgroup = true/' > /etc/containerd/config.toml")
	w("  systemctl restart containerd && systemctl enable --now kubelet")
	w("  modprobe br_netfilter; sysctl -w net.ipv4.ip_forward=1 net.bridge.bridge-nf-call-iptables=1; swapoff -a")
	w("}")
	w("run %s packages", StepPackages)
	if n.First {
		w("run %s kubeadm init --config /etc/virtflow/kubeadm.yaml --upload-certs", StepInit)
		cni := n.CNI
		if url := CNIs[cni]; url != "" {
			w("run %s kubectl apply -f %s", StepCNI, url)
		} else if cni == "cilium" {
			w("run %s sh -c 'curl -fsSL https://github.com/cilium/cilium-cli/releases/latest/download/cilium-linux-amd64.tar.gz | tar -xz -C /usr/local/bin && cilium install'", StepCNI)
		}
		for _, a := range n.Addons {
			if url := Addons[a]; url != "" {
				w("run %s kubectl apply -f %s", "addon-"+a, url)
			}
		}
		if cmd := Meshes[n.Mesh]; cmd != "" {
			w("if (cd /root && sh -c %s) >/var/log/virtflow-mesh.log 2>&1; then MESH=ok; else MESH=failed; fi", shellQuote(cmd))
		}
	} else {
		w("run %s kubeadm join --config /etc/virtflow/kubeadm.yaml", StepJoin)
	}
	w("STEP=%s", StepReady)
	w("report ok ''")
	return b.String(), nil
}

// shellQuote quotes s for sh in single quotes.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// ScriptPath is where the user-data writes the bootstrap script.
const ScriptPath = "/usr/local/sbin/virtflow-k8s-bootstrap"

// UserData renders n's #cloud-config: the tenant's SSH keys, the kubeadm configuration
// (0600), the cluster CA on the first control plane, the bootstrap script, and runcmd
// running it.
func UserData(n Node) (string, error) {
	script, err := Script(n)
	if err != nil {
		return "", err
	}
	type file struct {
		Path        string `yaml:"path"`
		Permissions string `yaml:"permissions"`
		Content     string `yaml:"content"`
	}
	var files []file
	if n.Role != RoleBastion {
		cfg, err := KubeadmConfig(n)
		if err != nil {
			return "", err
		}
		files = append(files, file{"/etc/virtflow/kubeadm.yaml", "0600", cfg})
		if n.First {
			files = append(files, file{"/etc/kubernetes/pki/ca.crt", "0644", n.CACert}, file{"/etc/kubernetes/pki/ca.key", "0600", n.CAKey})
		}
	}
	files = append(files, file{ScriptPath, "0700", script})
	doc := struct {
		Hostname          string     `yaml:"hostname"`
		SSHAuthorizedKeys []string   `yaml:"ssh_authorized_keys,omitempty"`
		WriteFiles        []file     `yaml:"write_files"`
		Runcmd            [][]string `yaml:"runcmd"`
	}{Hostname: n.Name, SSHAuthorizedKeys: n.SSHKeys, WriteFiles: files, Runcmd: [][]string{{ScriptPath}}}
	out, err := yaml.Marshal(doc)
	if err != nil {
		return "", err
	}
	return "#cloud-config\n" + string(out), nil
}

// Plugins splits a cluster's plugins into its CNI (DefaultCNI when none is named) and its
// add-ons, or says which plugin is unknown or that two CNIs were named.
func Plugins(plugins []string) (cni string, addons []string, err error) {
	for _, p := range plugins {
		p = strings.ToLower(strings.TrimSpace(p))
		switch _, isCNI := CNIs[p]; {
		case isCNI && cni != "":
			return "", nil, fmt.Errorf("two network plugins: %s and %s (at most one)", cni, p)
		case isCNI:
			cni = p
		case Addons[p] != "":
			addons = append(addons, p)
		default:
			known := make([]string, 0, len(CNIs)+len(Addons))
			for k := range CNIs {
				known = append(known, k)
			}
			for k := range Addons {
				known = append(known, k)
			}
			slices.Sort(known)
			return "", nil, fmt.Errorf("unknown plugin %q (known: %s)", p, strings.Join(known, ", "))
		}
	}
	if cni == "" {
		cni = DefaultCNI
	}
	return cni, addons, nil
}
