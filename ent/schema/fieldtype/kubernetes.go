package fieldtype

import "time"

// KubernetesNode is one node of a Kubernetes cluster as the cluster's workflow records it
// (package kubecluster): what it is for, which VM realizes it and how far its bootstrap got.
// The list on the cluster is the workflow's own progress record: a node is written here
// before its VM is created, under the cluster's row lock, so a worker that dies between the
// two finds the VM by its deterministic name and never creates a second one. In GraphQL it
// is the type KubernetesNode.
type KubernetesNode struct {
	// Name is the node's (and its VM's) name: <cluster>-cp-<index>, <cluster>-w-<index> or
	// <cluster>-bastion.
	Name string `json:"name"`
	// Role is CONTROL_PLANE, WORKER or BASTION.
	Role string `json:"role"`
	// Index is the node's number within its role; never reused within a cluster.
	Index int `json:"index"`
	// Version is the Kubernetes version the node was bootstrapped with.
	Version string `json:"version"`
	// VMID is the VM realizing the node, 0 until it is created.
	VMID int `json:"vmID"`
	// State is PENDING (recorded, no VM yet), BOOTSTRAPPING (VM created, its guest has not
	// reported), READY (its guest reported the bootstrap step done), FAILED (its guest reported
	// a failed step, or its VM is in ERROR) or REMOVING (being removed by a scale-down, an
	// upgrade or a replacement).
	State string `json:"state"`
	// Step is the last bootstrap step the guest reported (e.g. kubeadm-init, kubeadm-join,
	// cni, mesh, ready).
	Step string `json:"step,omitempty"`
	// Reason is why the node failed, as its guest or the workflow said.
	Reason string `json:"reason,omitempty"`
	// UpdatedAt is when the node's state last changed.
	UpdatedAt time.Time `json:"updatedAt"`
}
