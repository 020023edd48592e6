// Package guest records what a VM's guest says about itself, so that a VM's record tells
// "the domain runs" (status ACTIVE) apart from "the guest is up" (guestState READY).
//
// The guest's word is authenticated by a per-VM credential. The node agent makes a fresh
// one each time it builds the VM's config drive (every new definition of the domain: create,
// start after a stop, reboot, resize, move), writes it onto the drive beside the URL the guest
// calls, and registers only its SHA-256 hash here (RegisterCredential), before the domain
// starts. A rebuilt drive rotates the credential: the old one stops working at once. A
// credential also expires (Config.CredentialTTL after it was registered).
//
// guestState moves like this:
//
//	UNKNOWN      the domain does not run (new VM, stopped, drive rebuilt, moved)
//	BOOTING      its node's agent reported the domain running (MarkRunning)
//	READY        the guest called the readiness endpoint with its credential (Ready), or the
//	             QEMU guest agent in it answered its node's agent (ReadyFromAgent)
//	UNREACHABLE  BOOTING for longer than Config.Deadline (Overdue, with a warning event)
//
// Only the guest's own word (its credential, or its QEMU guest agent) makes a VM READY. An
// UNREACHABLE guest that calls later becomes READY. Every change is audited as the system
// actor "guest" (audit.Guest).
package guest
