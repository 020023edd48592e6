// Package kubecluster provisions tenants' Kubernetes clusters (KubernetesCluster) on
// VirtFlow's own VMs and keeps them converged: control planes, workers and an optional
// bastion, an API VIP, the cluster's PKI and kubeconfig, and each node's bootstrap through
// its config drive (cloud-init running kubeadm).
//
// # Rendering (pki.go, token.go, bootstrap.go, kubeconfig.go)
//
// A cluster has its own CA (ECDSA P-256, crypto/x509), an API server certificate naming the
// VIP, the first address of the service network and the kubernetes.default names, and an
// admin client certificate (CN kubernetes-admin, O system:masters) that the admin
// kubeconfig carries. The keys are sealed at rest with the server's secret key
// (internal/secrets, VIRTFLOW_SECRET_KEY) in the cluster's pki_sealed column; kubeadm's
// bootstrap token (<6>.<16>, TokenTTL) is sealed the same way and replaced when it is due
// (TokenRenewBefore its expiry) before it is given to a new node.
//
// Each node gets a #cloud-config: its kubeadm configuration (InitConfiguration and
// ClusterConfiguration with the version, pod and service CIDRs and the VIP as the control
// plane endpoint on the first control plane; JoinConfiguration, with the certificate key for
// control planes, on the others), the CA on the first control plane, and a POSIX sh script
// that installs kubeadm if missing, runs kubeadm init or join, applies the CNI and the
// add-ons named by the cluster's plugins and installs the service mesh on the first control
// plane, and then reports to the guest readiness endpoint (package guest, POST /guest/ready)
// the step that failed with its output's tail, or step=ready.
//
// # Who reads a node's bootstrap (access.go)
//
// The first control plane's user-data carries the CA key (kubeadm signs node certificates
// with it; the config drive is the only way into the guest) and the others' a join token, so
// a cluster node's userData and its assignments' configDrive follow the kubeconfig's policy
// (ObjKubeconfig, MayReadNodeBootstrap): the tenant's admins, operators and admins read
// them; for a tenant member or a platform viewer, who may read the VM, the fields are null
// (redacted, as the audit log redacts secrets, so that lists of VMs still answer), and the
// node's agent reads its assignment's configDrive to build the drive.
//
// Limitations: the CA key is in the clear in the VM's userData for those who may read it;
// kubeadm's uploaded control-plane certificates expire two
// hours after init, so control planes that join later (an upgrade) need them uploaded again
// on a running control plane, which nothing here can reach.
package kubecluster
