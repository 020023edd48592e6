// Package configdrive builds the NoCloud config drive a VM initialises itself from: an
// ISO 9660 image labelled "cidata" that cloud-init (and similar in-guest agents) finds at
// boot and reads the VM's identity, its network configuration, its users and their SSH
// public keys from.
//
// The image holds three files:
//
//   - meta-data: the instance-id (a new one makes cloud-init run its per-instance
//     modules again) and the local-hostname;
//   - user-data: the request's #cloud-config (at most [MaxUserData] bytes, a YAML
//     mapping), with the SSH public keys and users of the [Spec] merged in: [Spec.SSHKeys]
//     go to the image's default user (the top-level ssh_authorized_keys), [Spec.Users]
//     to entries of the users: list (merged into an entry of the same name the
//     cloud-config already has; cloud-init creates their missing groups);
//   - network-config: a version 2 (netplan-style) document with one ethernet per NIC,
//     matched by MAC address, with its static addresses, default routes and name servers
//     (DHCP when a NIC has no address).
//
// [Render] returns the files' contents, [Build] writes the image. Both validate the
// [Spec] first and report bad input as an [apierr.Error] with code VALIDATION naming the
// API field (userData, hostname, sshKeys, ...), so a caller can pass it straight to the
// client. The package only builds images: attaching one to a domain as a CD-ROM is the
// node agent's job.
package configdrive
